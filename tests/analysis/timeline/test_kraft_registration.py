"""The KRaft timeline keeps each partition's whole registration, eligible leader replicas (KIP-966)
included, as ``PartitionRegistration.merge`` makes it: after any record it holds what
``cluster-state`` replays to. Expected values: ``merge`` keeps a null ELR field and replaces it
with any list (``metadata/.../PartitionRegistration.java``)."""

from __future__ import annotations

import pytest

from kreplica.analysis.timeline import kraft as timeline
from kreplica.formats.kraft import records as kraft
from kreplica.model.cluster import cluster_state_from_kraft, find_kraft_files
from kreplica.model.cluster.kraft_history import iter_kraft_records, kraft_start

ORDERS = "8um0e5Bd9LwnM_Jm3NHOHA"


def _change(**fields):
    return ("PartitionChangeRecord", 2, dict({"partition_id": 0, "topic_id": ORDERS}, **fields))


RECORDS = [
    ("TopicRecord", 0, {"name": "orders", "topic_id": ORDERS}),                                            # 0
    ("PartitionRecord", 2, {"partition_id": 0, "topic_id": ORDERS, "replicas": (1, 2, 3), "isr": (1, 2, 3),
                            "leader": 1, "leader_epoch": 0, "partition_epoch": 0}),                         # 1
    _change(isr=(1,), eligible_leader_replicas=(2, 3)),          # 2: ISR below min ISR: 2 and 3 eligible
    _change(isr=(), leader=-1, last_known_elr=(1,)),             # 3: leaderless; ELR kept (null)
    _change(leader=2, isr=(2,), eligible_leader_replicas=(3,), last_known_elr=()),   # 4: 2 elected from the ELR
]


@pytest.mark.parametrize("upto,elr,last_known_elr", [
    pytest.param(1, (), (), id="partition-record-without-elr"),
    pytest.param(2, (2, 3), (), id="change-sets-elr"),
    pytest.param(3, (2, 3), (1,), id="null-elr-keeps-it-last-known-elr-set"),
    pytest.param(4, (3,), (), id="election-from-elr-clears-last-known-elr"),
])
def test_timeline_registration_carries_elr(tmp_path, upto, elr, last_known_elr) -> None:
    d = tmp_path / "__cluster_metadata-0"
    d.mkdir()
    (d / "00000000000000000000.log").write_bytes(
        kraft.build_metadata_batch(RECORDS[:upto + 1], base_offset=0, epoch=1, timestamp=1_700_000_000_000))
    files = find_kraft_files([d])
    fold = timeline.ImageFold()
    start, _ = kraft_start(files)
    for _read, applied in iter_kraft_records(files, start):
        for rec in applied:
            list(timeline.apply_record(fold, rec, True))
    held = fold.image.partition("orders", 0)
    assert (held.elr, held.last_known_elr) == (elr, last_known_elr)
    assert held == cluster_state_from_kraft(files).topic("orders").partitions[0]
