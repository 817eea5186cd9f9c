"""A workload topic that pins its leaders is created with them on the shared 3-broker lab (the
replica assignment tuner.target.topics builds), and a leader the cluster lacks is refused before
anything is created. Under a second on a 3-broker lab."""

from __future__ import annotations

import uuid

import pytest
from confluent_kafka.admin import AdminClient

from tuner.core.errors import BadInput
from tuner.lab import LabState
from tuner.spec.workload import TopicSpec
from tuner.target.topics import create_topics, delete_topics

pytestmark = [pytest.mark.integration]


def test_a_pinned_topic_gets_the_leaders_it_asks_for(lab: LabState, admin: AdminClient) -> None:
    ids = sorted(b.id for b in lab.brokers)
    assert len(ids) == 3
    # Kafka alone would lead partitions round-robin; these lean on the last broker
    leaders = [ids[2], ids[2], ids[0], ids[1], ids[2], ids[0]]
    specs = [TopicSpec(name="pinned", partitions=6, replication_factor=2, leaders=leaders)]
    names = [f"it-pinned-{uuid.uuid4().hex[:8]}"]
    try:
        create_topics(admin, specs, names)
        parts = admin.list_topics(names[0], timeout=30).topics[names[0]].partitions
        assert [parts[p].leader for p in sorted(parts)] == leaders
        following = {ids[0]: ids[1], ids[1]: ids[2], ids[2]: ids[0]}
        assert [list(parts[p].replicas) for p in sorted(parts)] == [[b, following[b]] for b in leaders]
    finally:
        assert delete_topics(admin, names) == []
    missing = [f"it-pinned-{uuid.uuid4().hex[:8]}"]
    with pytest.raises(BadInput, match=r"leaders names broker 99; the cluster has brokers"):
        create_topics(admin, [TopicSpec(name="p", partitions=2, leaders=[ids[0], 99])], missing)
    assert missing[0] not in admin.list_topics(timeout=30).topics
