"""Load processes die with the `kbt` that started them.

Ctrl-C and SIGTERM are handled by the engines (they stop their workers); a `kbt` killed with SIGKILL
cannot clean up, so each worker asks the kernel (Linux PR_SET_PDEATHSIG) to SIGKILL it the moment
its parent goes. Without this an orphaned driver would keep producing into the lab, and a spawned
worker whose result queue has no reader left can block for ever at exit.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """In the child (before exec or at the start of a spawned worker): SIGKILL when the parent dies."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def orphan_safe(target: Callable[..., Any], *args: Any) -> Any:
    """A multiprocessing target that first ties the worker's life to its parent's."""
    die_with_parent()
    return target(*args)
