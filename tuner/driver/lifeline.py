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


def die_with_parent(parent: int | None = None) -> None:
    """In the child (a Popen preexec_fn, or first thing in a spawned worker): SIGKILL when the parent
    dies. `parent` is the PID that started us: a parent that died before this call is noticed too."""
    if not sys.platform.startswith("linux"):
        return
    expected = parent if parent is not None else os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != expected:  # orphaned already: the request came too late
        os._exit(1)


def orphan_safe(parent: int, target: Callable[..., Any], *args: Any) -> Any:
    """A multiprocessing target that first ties the worker's life to its parent's (`os.getpid()` of
    the process that starts it)."""
    die_with_parent(parent)
    return target(*args)
