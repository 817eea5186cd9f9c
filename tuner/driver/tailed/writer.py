"""Write the tailed pods' log files (real Filebeat, the collector):
`python -m tuner.driver.tailed.writer PLAN.json`.

One writer process per workload process, each writing its pods' files on an open-loop schedule
(line k of a pod is due at start_at + phase + k / rate). Every line starts with its intended write
time in microseconds and its record id `<pod>-<seq>`, then the workload's payload text:

    1795543999123456 3-41 2024-05-01 10:00:00.123 INFO [api.gateway] ...

The result (one JSON line on stdout): lines written per pod and the send lag (write time - intended
time) as bucketed microsecond counts, sampled once per write at its oldest line and weighted by the
lines it wrote, as the librdkafka engine samples its sends.
SIGTERM/SIGINT stop the schedule; the result is still printed.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path
from types import FrameType
from typing import Any

from tuner.driver.latency_buckets import LatencyBuckets

_stop = False


# What line_text puts before the payload, "<16 digits> <pod>-<seq> ", at a typical width: the
# engines take it off the event size they aim for.
PREFIX_BYTES = 28


def line_text(t_us: int, pod: int, seq: int, payload: str) -> str:
    return f"{t_us} {pod}-{seq} {payload}\n"


def _on_signal(_sig: int, _frame: FrameType | None) -> None:
    global _stop
    _stop = True


def run(plan: dict[str, Any]) -> dict[str, Any]:
    payloads: list[str] = plan["payloads"]
    rate = float(plan["rate_per_pod"])
    start = float(plan["start_at"])
    total = round(rate * float(plan["duration_s"]))
    pods = [(int(p["pod"]), Path(p["file"]), float(p["phase_s"])) for p in plan["pods"]]
    handles = [path.open("a", encoding="utf-8") for _, path, _ in pods]
    written = [0] * len(pods)
    send_lag = LatencyBuckets()
    try:
        while not _stop:
            now = time.time()
            next_due = float("inf")
            for i, (pod, _, phase) in enumerate(pods):
                due = min(total, int((now - start - phase) * rate) + 1) if now >= start + phase else 0
                if due > written[i]:
                    chunk = []
                    for seq in range(written[i], due):
                        t = start + phase + seq / rate
                        chunk.append(
                            line_text(int(t * 1e6), pod, seq, payloads[(pod * 7919 + seq) % len(payloads)])
                        )
                    lag = now - (start + phase + written[i] / rate)
                    send_lag.add_s(max(lag, 0.0), due - written[i])
                    handles[i].write("".join(chunk))
                    handles[i].flush()
                    written[i] = due
                if written[i] < total:
                    next_due = min(next_due, start + phase + written[i] / rate)
            if next_due == float("inf"):
                break
            time.sleep(min(0.05, max(0.001, next_due - time.time())))
    finally:
        for handle in handles:
            handle.close()
    return {
        "written": {str(pod): n for (pod, _, _), n in zip(pods, written, strict=True)},
        "send_lag_us": {str(us): n for us, n in send_lag.counts.items()},
    }


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    plan = json.loads(Path(argv[1]).read_text(encoding="utf-8"))
    print(json.dumps(run(plan)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
