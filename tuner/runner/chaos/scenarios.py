"""The fault matrix of `kbt chaos`: each scenario's fault script, its expectation and what it changes
in the run (delivery settings, duration, topic configs).

Positive scenarios run with the no-loss settings (RF 3, min.insync.replicas 2, acks all,
idempotence on) and expect 0 acked records lost, 0 duplicates and per-partition order kept. The
negative controls weaken exactly one thing and MUST be caught (loss or duplicates), which proves
the verification can see what it claims to rule out.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from confluent_kafka import TopicPartition

from tuner.core.kafka_clients import new_consumer
from tuner.runner.chaos.faults import FaultContext
from tuner.runner.chaos.netem import netem_loss
from tuner.store.fault import Expectation

Script = Callable[[FaultContext], None]

NO_LOSS: dict[str, Any] = {"acks": "all", "idempotence": True}
# Sends must end within the run: a short delivery timeout where the fault outlasts it.
SHORT_DELIVERY = {"message.timeout.ms": "15000", "request.timeout.ms": "10000"}
DELIVERY_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class Scenario:
    name: str
    summary: str  # one line for tables and --list
    expect: Expectation
    duration_s: float  # of the load; the script runs inside it
    script: Script
    needs: tuple[str, ...] = ()  # "toxiproxy", "tiered", "netem"
    profile: dict[str, Any] = field(default_factory=lambda: dict(NO_LOSS))
    overrides: dict[str, str] = field(default_factory=dict)  # raw librdkafka properties
    topic_configs: dict[str, str] = field(default_factory=dict)


# ---- fault scripts -------------------------------------------------------------------------------


def leader_kill(ctx: FaultContext) -> None:
    ctx.wait(8)
    node = ctx.leader()
    ctx.kill(node, signal.SIGKILL, "leader of partition 0")
    ctx.wait(10)
    ctx.start(node)
    ctx.wait_in_sync()


def lagging_followers_then_leader_kill(ctx: FaultContext) -> None:
    """Followers of partition 0 stall (SIGSTOP) for 3 s, well inside replica.lag.time.max.ms and the
    broker session timeout, so they stay in the ISR; the leader keeps acknowledging (acks=1) records
    they do not have; SIGKILL the leader, resume the followers: one of them becomes leader without
    those records."""
    ctx.wait(8)
    leader = ctx.leader()
    followers = ctx.other_brokers(leader)
    for node in followers:
        ctx.pause(node)
    try:
        ctx.wait(3)
        ctx.kill(leader, signal.SIGKILL, "leader of partition 0, its followers 3 s behind")
    finally:
        for node in followers:
            ctx.resume(node)
    ctx.wait(10)
    ctx.start(leader)
    ctx.wait_in_sync()


LEADER_MOVE_WAIT_S = 60.0
BETWEEN_BOUNCES_SYNC_WAIT_S = 1800.0  # in effect until the load's cap: the next bounce needs the ISR whole


def _led_elsewhere(ctx: FaultContext, node: int) -> str | None:
    leader = ctx._safe(lambda: ctx._partitions()[0].leader)
    return str(leader) if leader is not None and leader >= 0 and leader != node else None


def _bounce(ctx: FaultContext, times: int, sig: signal.Signals, down_s: float) -> None:
    """Each time: stop the leader of partition 0, wait until the cluster has moved leadership away
    (controlled shutdown does it at once; after SIGKILL the controller first fences the broker, once
    its session times out), keep it down `down_s`, restart it and wait for the ISR to fill again, so
    every bounce is a real failover and the next one never hits a broker still recovering (as a
    rolling restart waits for no under-replicated partition before the next broker; on a slow
    machine that wait runs into the load's cap and the run fails instead)."""
    ctx.wait(5)
    for i in range(times):
        node = ctx.leader()
        ctx.kill(node, sig, f"bounce {i + 1}/{times}, leader of partition 0")
        started = time.time()
        moved = ctx.wait_until(partial(_led_elsewhere, ctx, node), LEADER_MOVE_WAIT_S)
        if moved:
            ctx.note(f"partition 0 led by broker {moved} after {time.time() - started:.0f} s")
        else:
            ctx.note(f"partition 0 still without a new leader after {LEADER_MOVE_WAIT_S:.0f} s")
        ctx.wait(down_s)
        ctx.start(node)
        if i + 1 < times:
            ctx.wait_in_sync(BETWEEN_BOUNCES_SYNC_WAIT_S)
        else:
            ctx.wait_in_sync()
        ctx.wait(2)


# A rolling restart's worth of bounces (each broker of three may lead partition 0 in turn); more
# repeats lengthened the fault matrix without a new kind of failover.
CLEAN_BOUNCES = 3
HARD_BOUNCES = 2


def clean_bounce(ctx: FaultContext) -> None:
    _bounce(ctx, CLEAN_BOUNCES, signal.SIGTERM, 1)


def hard_bounce(ctx: FaultContext) -> None:
    _bounce(ctx, HARD_BOUNCES, signal.SIGKILL, 3)


def leader_pause(ctx: FaultContext) -> None:
    ctx.wait(8)
    node = ctx.leader()
    lag_ms = ctx.replica_lag_max_ms(node)
    ctx.pause(node)
    ctx.note(f"paused for replica.lag.time.max.ms ({lag_ms} ms) + 5 s")
    ctx.wait(lag_ms / 1000 + 5)
    ctx.resume(node)
    ctx.wait_in_sync()


def two_down(ctx: FaultContext) -> None:
    ctx.wait(5)
    leader = ctx.leader()
    other = ctx.other_brokers(leader)[0]
    ctx.kill(leader, signal.SIGKILL, "leader of partition 0")
    ctx.kill(other, signal.SIGKILL, "a follower: 1 of 3 brokers left, below min.insync.replicas 2")
    ctx.wait(DELIVERY_TIMEOUT_S + 8)
    ctx.start(leader)
    ctx.start(other)
    ctx.wait_in_sync()


def latency(ctx: FaultContext) -> None:
    ctx.wait(5)
    ctx.toxic("latency", {"latency": 150, "jitter": 50})
    ctx.wait(20)
    ctx.clear_toxics()


def bandwidth(ctx: FaultContext) -> None:
    ctx.wait(5)
    ctx.toxic("bandwidth", {"rate": 64}, streams=("upstream",))  # KB/s per connection
    ctx.wait(15)
    ctx.clear_toxics()


def blackhole(ctx: FaultContext) -> None:
    ctx.wait(5)
    node = ctx.leader()
    ctx.toxic("timeout", {"timeout": 0}, nodes=[node])  # data dropped, connection kept open
    ctx.note(f"blackhole on broker {node} for the delivery timeout ({DELIVERY_TIMEOUT_S:g} s) + 10 s")
    ctx.wait(DELIVERY_TIMEOUT_S + 10)
    ctx.clear_toxics()


def reset_pulses(ctx: FaultContext) -> None:
    """For 20 s: every 2 s, reset each client connection as soon as a broker answers (the request
    was written, its response is lost), for half a second."""
    ctx.wait(5)
    ctx.note("reset_peer on broker responses: 0.5 s in every 2 s, for 20 s")
    end = time.time() + 20
    pulses = 0
    while time.time() < end:
        ctx.toxic("reset_peer", {"timeout": 0}, streams=("downstream",), quiet=True)
        pulses += 1
        try:
            ctx.wait(0.5)
        finally:
            ctx.clear_toxics(quiet=True)
        ctx.wait(1.5)
    ctx.note(f"{pulses} reset pulses done")


def tiered_remote_unwritable(ctx: FaultContext) -> None:
    remote = ctx.state.remote_storage_dir

    def tiered_segments() -> int:
        return sum(1 for t in ctx.topics for _ in remote.rglob(f"{t}-*/*.log"))

    if ctx.wait_until(tiered_segments, 45):
        ctx.note(f"{tiered_segments()} segments in the remote tier")
    else:
        ctx.note("no segment reached the remote tier before the fault")
    before = tiered_segments()
    ctx.lock_remote()
    ctx.wait(20)
    ctx.note(f"remote segments during the fault: {tiered_segments() - before} new")
    ctx.note(read_oldest(ctx))
    ctx.unlock_remote()
    if ctx.wait_until(lambda: tiered_segments() > before, 45):
        ctx.note(f"copies resumed: {tiered_segments()} segments in the remote tier")
    else:
        ctx.note("no new segment reached the remote tier after the fault")


def read_oldest(ctx: FaultContext) -> str:
    """Read partition 0 from offset 0 (tiered data) through a direct listener; describe the outcome."""
    consumer = new_consumer(
        ctx.connection, ctx._conf({"group.id": "kbt-chaos-read", "enable.auto.commit": False})
    )
    got, error = 0, ""
    try:
        consumer.assign([TopicPartition(ctx.topic, 0, 0)])
        end = time.time() + 10
        while time.time() < end and got < 100 and not error:
            for msg in consumer.consume(100, timeout=1.0):
                err = msg.error()
                if err is not None:
                    error = err.str()
                    break
                got += 1
    finally:
        consumer.close()
    if error:
        return f"reading offset 0 during the fault: error {error}"
    return f"reading offset 0 during the fault: {got} records read"


def packet_loss(ctx: FaultContext) -> None:
    ctx.wait(5)
    ports = [b.port for b in ctx.state.brokers]
    with netem_loss(ports, percent=5):
        ctx.note("tc netem: 5% packet loss on the broker listener ports")
        ctx.wait(20)
    ctx.note("tc netem removed")


# ---- the matrix ----------------------------------------------------------------------------------

NEGATIVE_ACKS1 = {"acks": "1", "idempotence": False}
NEGATIVE_NO_IDEMPOTENCE = {"acks": "all", "idempotence": False, "max_in_flight": 5}
TIERED_TOPIC = {
    "remote.storage.enable": "true",
    "segment.bytes": "1048576",
    "local.retention.ms": "1000",
}

MATRIX: list[Scenario] = [
    Scenario("leader-kill", "SIGKILL the leader of partition 0, restart it 10 s later", "no-loss", 55,
             leader_kill),
    Scenario("clean-bounce",
             f"SIGTERM (controlled shutdown) + restart, {CLEAN_BOUNCES} times, following the leader",
             "no-loss", 200, clean_bounce),
    Scenario("hard-bounce", f"SIGKILL + restart, {HARD_BOUNCES} times, following the leader", "no-loss",
             140, hard_bounce),
    Scenario("leader-pause", "SIGSTOP the leader longer than replica.lag.time.max.ms, then SIGCONT",
             "no-loss", 85, leader_pause),
    Scenario("two-down", "SIGKILL 2 of 3 brokers for longer than the delivery timeout, restart",
             "degraded", 80, two_down, overrides=SHORT_DELIVERY),
    Scenario("latency", "Toxiproxy latency 150 +/- 50 ms both ways on every broker for 20 s", "no-loss",
             40, latency, needs=("toxiproxy",)),
    Scenario("bandwidth", "Toxiproxy bandwidth 64 KB/s per connection (producer side) for 15 s",
             "no-loss", 40, bandwidth, needs=("toxiproxy",)),
    Scenario("blackhole", "Toxiproxy blackhole on the leader longer than the delivery timeout",
             "degraded", 50, blackhole, needs=("toxiproxy",), overrides=SHORT_DELIVERY),
    Scenario("reset-peer", "Toxiproxy reset_peer on broker responses in pulses for 20 s", "no-loss", 40,
             reset_pulses, needs=("toxiproxy",)),
    Scenario("packet-loss", "tc netem 5% packet loss on the broker ports for 20 s", "no-loss", 40,
             packet_loss, needs=("netem",)),
    Scenario("tiered-remote-unwritable",
             "remote tier unwritable for 20 s under load, old data read meanwhile, then restored",
             "no-loss", 110, tiered_remote_unwritable, needs=("tiered",), topic_configs=TIERED_TOPIC),
    Scenario("control-acks1-leader-kill",
             "NEGATIVE CONTROL: acks=1, followers stalled 3 s, SIGKILL the leader: must report loss",
             "detects-loss", 50, lagging_followers_then_leader_kill, profile=NEGATIVE_ACKS1),
    Scenario("control-no-idempotence-resets",
             "NEGATIVE CONTROL: idempotence off, retries, reset_peer pulses: must report duplicates",
             "detects-loss", 40, reset_pulses, needs=("toxiproxy",), profile=NEGATIVE_NO_IDEMPOTENCE,
             overrides={"retries": "10"}),
]  # fmt: skip

BY_NAME = {s.name: s for s in MATRIX}
