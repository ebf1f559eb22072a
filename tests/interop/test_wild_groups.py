"""Real ``__consumer_offsets`` partitions written by real brokers (``../shared/oracle/wild/``, Kafka
2.x to 4.x, ZooKeeper and KRaft; see its README): every record decodes, every partition loads the
same way by the plain replay and by the fold, and ``kreplica groups`` on every log directory holding
one exits 0, its committed offsets fitting the data partitions beside them, with the exceptions the
corpus explains (segments left out of the copy, retention)."""

from __future__ import annotations

from collections import Counter

import pytest

from kreplica.formats.coordinator.records import CONSUMER_OFFSETS, decode_record
from kreplica.model.coordinator.fold import iter_group_partitions, load_group_partition
from kreplica.model.coordinator.replay import NEW_COORDINATOR, replay_partition_log
from kreplica.model.logdir.log_dir import find_log_dirs
from kreplica.model.log.partition_log import iter_batch_records_with_errors, read_partition_log
from tests.interop.wild_cases import WILD, run, wild_dir, wild_dirs

pytestmark = pytest.mark.interop

#: what the corpus's ``__consumer_offsets`` partitions hold: (record type, value version or None
#: for a tombstone) -> records; counted independently of kreplica (README: 88,793 records)
RECORDS = {(1, 3): 79262, (1, 2): 8201, (2, 3): 1001, (1, 4): 260, (2, None): 65, (2, 2): 3, (1, None): 1}

#: the offsets that do not fit the data beside them, and why: (log directory, finding kind, severity, group,
#: topic-partition, offset)
EXPLAINED = {
    # the 4 MiB+ 00000000000000000000.log of customers-0 and products-0 is absent from the copy
    # (SOURCE.json absent_files); their checkpoints and producer snapshots record 17081 and 17097
    ("rjmfernandes__flink-on-prem/43d3daa/data", "group_offset_beyond_log_end", "warning",
     "_confluent-controlcenter-7-6-0-lastProduceTimeConsumer", "customers-0", 15404),
    ("rjmfernandes__flink-on-prem/43d3daa/data", "group_offset_beyond_log_end", "warning",
     "_confluent-controlcenter-7-6-0-lastProduceTimeConsumer", "products-0", 15439),
    # retention: the log starts at 322 (first segment 00000000000000000322.log), the group read to 289
    ("Balaji-MohanAG__Kirana-store/1d17b31/kafka/data", "group_offset_below_log_start", "info",
     "save_attribution", "test-topic-0", 289),
    # retention: the log starts at 42 (00000000000000000042.log), the group read to 22
    ("Dung1109__kafka-spring/1087df1/kafka1/data", "group_offset_below_log_start", "info",
     "dispatch.tracking.consumer", "dispatch.tracking-0", 22),
}


def offsets_log_dirs() -> list:
    """Every wild log directory holding a ``__consumer_offsets`` partition."""
    return [d for d in wild_dirs() if d.kind != "zk-data" and any(d.path.glob(f"{CONSUMER_OFFSETS}-*"))]


def _partitions():
    for d in offsets_log_dirs():
        log_dir = find_log_dirs([str(d.path)])[0]
        for partition in iter_group_partitions(log_dir):
            yield log_dir, partition


def test_every_record_decodes() -> None:
    wild_dir()
    seen: Counter = Counter()
    for log_dir, partition in _partitions():
        log = read_partition_log(partition, log_dir)
        for _batch, records, error in iter_batch_records_with_errors(log, [b for b in log.batches if not b.is_control]):
            assert error is None, partition.path
            for r in records:
                record = decode_record(CONSUMER_OFFSETS, r.key, r.value, path=partition.path)
                seen[(record.record_type, record.value_version)] += 1
    assert dict(seen) == RECORDS


def test_every_partition_loads_the_same_by_the_plain_replay_and_the_fold() -> None:
    wild_dir()
    loaded = 0
    for log_dir, partition in _partitions():
        folded = load_group_partition(partition, log_dir, NEW_COORDINATOR)
        assert folded == replay_partition_log(read_partition_log(partition, log_dir), NEW_COORDINATOR), partition.path
        assert folded.findings == (), partition.path
        loaded += 1
    assert loaded == 3050


@pytest.mark.parametrize("version", ["3.9", "4.0"])
def test_groups_on_every_log_dir_fit_the_data_but_where_the_corpus_says_why(version) -> None:
    wild_dir()
    explained = set()
    groups = 0
    for d in offsets_log_dirs():
        ran = run("groups", d.path, "--kafka-version", version)
        assert ran.exit_code == 0, (d.id, ran.stderr)
        groups += len(ran.of_type("group"))
        for f in ran.of_type("finding"):
            explained.add((str(d.path.relative_to(WILD)), f["kind"], f["severity"], f["group"],
                           f"{f['topic']}-{f['partition']}", f["offset"]))
    assert explained == EXPLAINED
    assert groups == 83
