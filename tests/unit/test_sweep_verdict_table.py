"""A run with lost > 0 fails whatever its speed; a run whose client fell behind or whose request
counts disagree is "unclean"; the final table sorts by request rate."""

from __future__ import annotations

from typing import NamedTuple

import pytest
from rich.console import Console

from tuner.core.paths import repo_root
from tuner.render.sweep_table import sweep_rows, sweep_table
from tuner.runner.verdict import judge, request_count_mismatch
from tuner.spec.clients import kind_of
from tuner.spec.loader import load_sweep
from tuner.spec.sweep import RunPlan
from tuner.store import RunRecord, capture_environment, make_run_id
from tuner.store.figures import BrokerStats, BrokerWindow, ClientResult, DeliveryResult, LatencyMs


def _plans() -> list[RunPlan]:
    return load_sweep(repo_root() / "loadtests" / "qunar-logs.yaml").runs


class DriverResult(NamedTuple):
    """A run's figures as the runner holds them after copying the driver's into the record schema."""

    client: ClientResult
    delivery: DeliveryResult


def _result(
    requests: int,
    lost: int = 0,
    p99: float = 10.0,
    sent: int = 48000,
    lag_p99: float | None = 2.0,
    offered: int = 48000,
) -> DriverResult:
    client = ClientResult(
        engine="librdkafka",
        producers=24,
        processes=2,
        started_at=0,
        window_start=10,
        window_end=60,
        finished_at=61,
        offered_records=offered,
        records_sent=sent,
        records_acked=sent,
        bytes_acked=sent * 1620,
        produce_requests=requests,
        produce_requests_total=requests + requests // 5,
        delivery_latency_ms=LatencyMs(count=sent, p99=p99),
        send_lag_ms=None if lag_p99 is None else LatencyMs(count=sent, p99=lag_p99),
    )
    delivery = DeliveryResult(acked=sent, consumed=sent - lost, lost=lost, verified=True)
    return DriverResult(client=client, delivery=delivery)


def _broker(total: float) -> BrokerWindow:
    stats = [
        BrokerStats(broker=str(i), topic_produce_requests_per_s=100.0 * i, network_idle_ratio=0.8)
        for i in (1, 2, 3)
    ]
    return BrokerWindow(
        start=10,
        end=60,
        step_s=5,
        brokers=stats,
        topic_produce_requests=total * 50 / 51,
        topic_produce_requests_total=total,
    )


def test_clean_run_is_ok() -> None:
    result = _result(24000)
    status, problems = judge(_plans()[0], *result, _broker(result.client.produce_requests_total))
    assert (status, problems) == ("ok", [])


def test_lost_records_fail_the_run() -> None:
    status, problems = judge(_plans()[0], *_result(24000, lost=7), _broker(28800))
    assert status == "failed"
    assert "7 acked records lost" in problems


def test_unverified_delivery_fails() -> None:
    result = _result(24000)
    unverified = result._replace(delivery=DeliveryResult(acked=1, consumed=1))
    status, problems = judge(_plans()[0], *unverified, _broker(28800))
    assert status == "failed" and "delivery was not verified" in problems


def _cut_short(result: DriverResult, unread: int, lost: int = 0) -> DriverResult:
    """`result` whose read-back ended (its deadline passed) with `unread` acked records not reached."""
    acked = result.delivery.acked
    delivery = DeliveryResult(
        acked=acked, consumed=acked - unread - lost, lost=lost, unread=unread, read_back_s=120.0
    )
    return result._replace(delivery=delivery)


def test_a_read_back_cut_short_is_unverified_never_lost() -> None:
    cut = _cut_short(_result(24000, lag_p99=900.0), unread=4225)
    status, problems = judge(_plans()[0], *cut, _broker(28800))
    assert status == "unverified"  # wins over unclean: delivery comes first
    assert (
        problems[0]
        == "read-back cut short in 120 s: 4225 acked records unread (not counted lost), 43775 of 48000 read"
    )
    assert not any("lost" in p and "not counted lost" not in p for p in problems)


def test_loss_found_before_the_cut_still_fails() -> None:
    status, problems = judge(_plans()[0], *_cut_short(_result(24000), unread=100, lost=3), _broker(28800))
    assert status == "failed" and "3 acked records lost" in problems


def test_unverified_rows_show_their_unread_count_in_magenta() -> None:
    a, b, _ = _plans()
    records = [_record(a, _result(2400)), _record(b, _cut_short(_result(24000), unread=4225))]
    assert [r.status for r in records] == ["ok", "unverified"]
    rows = {r.name: r for r in sweep_rows(records)}
    assert (rows[b.name].lost, rows[b.name].unread) == (0, 4225)
    console = Console(record=True, width=220, color_system="truecolor", force_terminal=True)
    console.print(sweep_table(records))
    styled = console.export_text(styles=True, clear=False)
    line = next(line for line in styled.splitlines() if "UNVERIFIED" in line)
    assert b.name in line and "0/0 (4,225 unread)" in line and "\x1b[35m" in line  # magenta


def test_a_saturated_client_or_disagreeing_counts_make_the_run_unclean_not_failed() -> None:
    status, problems = judge(_plans()[0], *_result(24000, p99=5000.0, sent=40000), _broker(20000))
    assert status == "unclean"
    assert any("p99 5000 ms above the SLO 2000 ms" in p for p in problems)
    assert any("client saturated" in p for p in problems)
    assert any("produce request counts differ by 44.0%" in p for p in problems)


def test_each_unclean_cause_alone() -> None:
    plan = _plans()[0]
    clean = _result(24000)
    total = clean.client.produce_requests_total
    assert judge(plan, *clean, _broker(total))[0] == "ok"
    # 3% is the tolerance: 2.9% off is clean, 3.5% off is not
    assert judge(plan, *clean, _broker(total / 1.029))[0] == "ok"
    status, problems = judge(plan, *clean, _broker(total / 1.035))
    assert status == "unclean" and problems == [
        f"client and broker produce request counts differ by 3.5% ({total} vs {total / 1.035:.0f})"
    ]
    # more than 5% short of the offered schedule is unclean
    assert judge(plan, *_result(24000, sent=45700), _broker(total))[0] == "ok"
    assert judge(plan, *_result(24000, sent=45000), _broker(total))[0] == "unclean"
    # a client behind its own schedule (send lag p99 above send_lag_p99_ms, 150 ms)
    assert judge(plan, *_result(24000, lag_p99=149.0), _broker(total))[0] == "ok"
    status, problems = judge(plan, *_result(24000, lag_p99=900.0), _broker(total))
    assert status == "unclean"
    assert problems == ["client behind schedule: send lag p99 900 ms (limit 150 ms)"]
    # engines without a send lag figure are judged on the rest
    assert judge(plan, *_result(24000, lag_p99=None), _broker(total))[0] == "ok"


def test_a_driver_that_offered_less_than_its_schedule_is_unclean() -> None:
    # 24 producers x 40/s over the 50 s window is 48,000 records; a stalled driver offered (and sent)
    # 26,000 of them: the client kept up with what it offered, the schedule did not happen.
    plan, total = _plans()[0], 28800
    assert judge(plan, *_result(24000, sent=45700, offered=45700), _broker(total))[0] == "ok"
    status, problems = judge(plan, *_result(24000, sent=26000, offered=26000), _broker(total))
    assert status == "unclean"
    assert any("offered 46% less than the schedule" in p for p in problems), problems


def test_failed_wins_over_unclean() -> None:
    status, problems = judge(_plans()[0], *_result(24000, lost=3, lag_p99=900.0), _broker(28800))
    assert status == "failed"
    assert problems[0] == "3 acked records lost" and any("behind schedule" in p for p in problems)


def test_request_count_mismatch() -> None:
    assert request_count_mismatch(103, 100) == 0.03
    assert request_count_mismatch(None, 100) is None
    assert request_count_mismatch(5, 0) is None


def _record(plan: RunPlan, result: DriverResult) -> RunRecord:
    status, problems = judge(plan, *result, _broker(result.client.produce_requests_total))
    return RunRecord(
        run_id=make_run_id(plan.sweep, plan.name, 1.0),
        name=plan.name,
        sweep=plan.sweep,
        index=plan.index,
        spec_hash=plan.spec_hash,
        plan=plan,
        environment=capture_environment(),
        created_at=1.0,
        client=result.client,
        delivery=result.delivery,
        broker=_broker(result.client.produce_requests_total),
        status=status,
        problems=problems,
    )


def test_table_sorted_by_request_rate_and_failed_in_red() -> None:
    a, b, c = _plans()
    records = [_record(a, _result(2400)), _record(b, _result(24000, lost=2)), _record(c, _result(240))]
    rows = sweep_rows(records)
    assert [r.name for r in rows] == [b.name, a.name, c.name]
    assert rows[0].client_requests_per_s == 480.0
    assert rows[0].broker_requests_per_s == pytest.approx(28800 * 50 / 51 / 50)
    assert rows[1].msgs_per_s == 960.0
    console = Console(record=True, width=200, color_system="truecolor", force_terminal=True)
    console.print(sweep_table(records))
    styled = console.export_text(styles=True, clear=False)
    text = console.export_text()
    assert "FAILED" in text and "2/0" in text
    failed_line = next(line for line in styled.splitlines() if "FAILED" in line)
    assert "\x1b[31m" in failed_line  # the failed row is red
    ok_line = next(line for line in styled.splitlines() if c.name in line)
    assert "\x1b[31m" not in ok_line


def test_unclean_rows_are_shown_in_yellow() -> None:
    a, b, _ = _plans()
    records = [_record(a, _result(2400)), _record(b, _result(24000, lag_p99=900.0))]
    assert [r.status for r in records] == ["ok", "unclean"]
    console = Console(record=True, width=200, color_system="truecolor", force_terminal=True)
    console.print(sweep_table(records))
    styled = console.export_text(styles=True, clear=False)
    unclean_line = next(line for line in styled.splitlines() if "UNCLEAN" in line)
    assert b.name in unclean_line and "\x1b[33m" in unclean_line  # yellow
    assert "UNCLEAN" not in next(line for line in styled.splitlines() if a.name in line)


def test_multi_partition_requests_are_checked_against_the_per_request_counter() -> None:
    """Sarama packs a broker's partitions into one request: TotalProduceRequestsPerSec{topic} counts
    each partition, so a Filebeat run is judged by RequestsPerSec{request=Produce} instead."""
    filebeat = load_sweep(repo_root() / "loadtests" / "filebeat-small-logs.yaml").runs[-1]
    assert (
        kind_of(filebeat.profile).multi_partition_requests
        and not kind_of(_plans()[0].profile).multi_partition_requests
    )
    result = _result(2400)
    total = result.client.produce_requests_total
    # the topic counter saw every partition of every request: twice the requests
    per_request = {"produce_requests": 2400.0, "produce_requests_total": total}
    window = _broker(2.0 * total).model_copy(update=per_request)
    assert judge(filebeat, *result, window) == ("ok", [])
    _, problems = judge(_plans()[0], *result, window)
    assert any("differ by 50.0%" in p for p in problems), problems
    assert window.run_produce_requests(True) == (2400.0, total)
    assert window.run_produce_requests(False) == (window.topic_produce_requests, 2.0 * total)
    # the per-request counter disagreeing is reported for the Filebeat run too
    off = window.model_copy(update={"produce_requests_total": 1.2 * total})
    assert any("differ by" in p for p in judge(filebeat, *result, off)[1])


def _uncounted(record: RunRecord) -> RunRecord:
    """The same run from a client that counts no produce requests (real Filebeat, the collector)."""
    client = record.client.model_copy(update={"produce_requests": 0, "produce_requests_total": 0})
    return record.model_copy(update={"client": client})


def test_a_client_that_counts_no_requests_shows_none_not_zero() -> None:
    """Its record says 0 requests while it acked records: the table shows "-" for the client and
    sorts it by the brokers' count; a report compares such runs on the brokers' counts only."""
    from tuner.render.report_data import request_rates

    a, b, c = _plans()
    counted = [_record(a, _result(2400)), _record(b, _result(24000)), _record(c, _result(240))]
    records = [_uncounted(counted[0]), counted[1], counted[2]]
    assert records[0].client.requests_per_s is None and counted[0].client.requests_per_s == 48.0
    rows = sweep_rows(records)
    assert [r.name for r in rows] == [b.name, a.name, c.name]  # a by its broker rate, between
    assert rows[1].client_requests_per_s is None
    console = Console(record=True, width=200)
    console.print(sweep_table(records))
    line = next(row for row in console.export_text().splitlines() if f" {a.name} " in row)
    assert [cell.strip() for cell in line.split("│")][3] == "-", line
    # One source for every run of a comparison: the brokers' when any client counted none.
    assert request_rates(counted) == [r.client.requests_per_s for r in counted]
    brokers = [r.broker.run_produce_requests_per_s(False) for r in records if r.broker]
    assert request_rates(records) == pytest.approx(brokers)
    # A run that acked nothing has sent nothing: its 0 is a count.
    idle = _result(0, sent=0)
    assert idle.client.requests_per_s == 0.0


def _java_plan() -> RunPlan:
    [plan] = load_sweep(repo_root() / "loadtests" / "pressure-mix" / "audit-java.yaml").runs
    return plan


def _shared_broker(requests_total: float, appends_total: float) -> BrokerWindow:
    return BrokerWindow(
        start=10,
        end=60,
        step_s=5,
        brokers=[BrokerStats(broker="1", network_idle_ratio=0.8)],
        produce_requests=requests_total * 50 / 51,
        produce_requests_total=requests_total,
        topic_produce_requests=appends_total * 50 / 51,
        topic_produce_requests_total=appends_total,
    )


@pytest.mark.parametrize("others", [0.5, 1.0, 3.0])
def test_other_clients_on_the_cluster_do_not_make_a_multi_partition_run_unclean(others: float) -> None:
    """The Java producer is counted by the brokers' per-request counter, which also counts another
    group's run beside it (the capture's replay, make demo's loop): a count above the run's own
    partition appends is other clients', noted, not held against the run."""
    plan = _java_plan()
    assert kind_of(plan.profile).multi_partition_requests
    result = _result(24000, sent=20000, offered=20000)
    own = result.client.produce_requests_total
    status, problems = judge(plan, *result, _shared_broker(own * (1 + others), own * 1.02))
    assert status == "ok", problems
    assert any("other clients on the cluster" in p for p in problems), problems


def test_a_multi_partition_run_alone_is_still_held_to_the_brokers_count() -> None:
    plan = _java_plan()
    result = _result(24000, sent=20000, offered=20000)
    own = result.client.produce_requests_total
    assert judge(plan, *result, _shared_broker(own, own * 1.3))[0] == "ok"
    # the brokers counted 20% fewer requests than the client says it sent: the client miscounts
    status, problems = judge(plan, *result, _shared_broker(own * 0.8, own * 1.3))
    assert status == "unclean" and any("counts differ by 25.0%" in p for p in problems), problems
