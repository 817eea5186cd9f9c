"""Why a broker's network threads were not idle over a window: the request queue, their own work,
or the host. Kafka's idle meter counts all three as busy; the kernel's figures (tuner.measure.threads)
and the request queue's time at its cap tell them apart.

    attribution = attribute(threads, broker)   # threads: a ThreadWindow, broker: the BrokerWindow

Causes, judged in this order with the limits of tuner/spec/thresholds.yml:
- "not under pressure": network idle at or above network_idle_warning;
- "request queue full": the threads spent most of their busy time blocked (a futex: the put into the
  full queue) and the queue sat at its cap for request_queue_full_share of the window or more, and
  the handlers that drain it were limited by their own work, the disk or time off CPU inside a
  request (the pressure lab's stated service time);
- "host contention": most of the busy time was runqueue wait (runnable, no core free) on a host at
  least host_busy_contended busy: the machine, not the broker. Also a full queue whose handlers
  spent most of their busy time waiting for a core on such a host: the broker's capacity was the
  machine's, not its own.
- "own work": most of the busy time was the threads' own CPU;
- "unclear": none of these dominates (the record keeps every figure).
"""

from __future__ import annotations

from typing import Any, Literal

from tuner.core.broker_figures import Attribution
from tuner.measure.broker_window import BrokerWindow
from tuner.measure.threads import ThreadWindow
from tuner.spec.thresholds import THRESHOLDS

Cause = Literal["not under pressure", "request queue full", "host contention", "own work", "unclear"]


def attribute(threads: ThreadWindow, broker: BrokerWindow | None) -> Attribution | None:
    """The cause of the network threads' busy time, None without network thread samples."""
    if not threads.network:
        return None
    idle = broker.network_idle_ratio if broker else None
    in_select = threads.network_mean("in_select") or 0.0
    busy = 1.0 - (idle if idle is not None else in_select)
    span = max(busy, 1e-9)
    blocked = min((threads.network_mean("blocked") or 0.0) / span, 1.0)
    own_cpu = min((threads.network_mean("cpu") or 0.0) / span, 1.0)
    waiting = min((threads.network_mean("runqueue_wait") or 0.0) / span, 1.0)
    at_cap = broker.request_queue_at_cap_share if broker else None
    host = threads.host_cpu_busy or 0.0
    handlers = _handlers(threads, broker)
    contended = host >= THRESHOLDS.host_busy_contended
    figures = (
        f"network idle {1 - busy:.2f}; of the busy time: blocked {blocked:.0%}, own CPU {own_cpu:.0%},"
        f" runqueue wait {waiting:.0%}; request queue at cap {_pct(at_cap)} of the window;"
        f" handlers limited by {handlers.get('handler_limit') or '-'};"
        f" host CPU {host:.0%} busy, load {threads.load_avg_1m or 0:.1f}"
    )
    cause: Cause
    if 1 - busy >= THRESHOLDS.network_idle_warning:
        cause = "not under pressure"
    elif blocked >= max(own_cpu, waiting) and (at_cap or 0.0) >= THRESHOLDS.request_queue_full_share:
        starved = handlers.get("handler_limit") == "runqueue wait" and contended
        cause = "host contention" if starved else "request queue full"
    elif waiting >= max(own_cpu, blocked) and contended:
        cause = "host contention"
    elif own_cpu >= max(blocked, waiting):
        cause = "own work"
    else:
        cause = "unclear"
    return Attribution(
        threads=threads,
        network_idle=idle,
        busy=busy,
        blocked=blocked,
        own_cpu=own_cpu,
        runqueue_wait=waiting,
        **handlers,
        cause=cause,
        why=f"{cause}: {figures}",
    )


def _handlers(threads: ThreadWindow, broker: BrokerWindow | None) -> dict[str, Any]:
    """The handlers' busy time (1 - Kafka's handler idle, else the share not parked on the queue)
    split into own CPU, runqueue wait and disk wait, and the largest of the three."""
    if not threads.handlers:
        return {}
    idle = broker.request_handler_idle_ratio if broker else None
    busy = 1.0 - (idle if idle is not None else threads.handler_mean("blocked") or 0.0)
    span = max(busy, 1e-9)
    parts = {
        "own CPU": min((threads.handler_mean("cpu") or 0.0) / span, 1.0),
        "runqueue wait": min((threads.handler_mean("runqueue_wait") or 0.0) / span, 1.0),
        "disk wait": min((threads.handler_mean("disk") or 0.0) / span, 1.0),
    }
    parts["off-CPU wait"] = max(0.0, 1.0 - sum(parts.values()))
    return {
        "handler_busy": busy,
        "handler_own_cpu": parts["own CPU"],
        "handler_runqueue_wait": parts["runqueue wait"],
        "handler_disk": parts["disk wait"],
        "handler_off_cpu": parts["off-CPU wait"],
        "handler_limit": max(parts, key=lambda k: parts[k]),
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"
