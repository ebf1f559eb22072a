"""Real brokers put each group's records in ``__consumer_offsets-N`` with ``N =
Utils.abs(group.hashCode) % 50`` (the default ``offsets.topic.num.partitions``, which every cluster
of the wild corpus kept): the first batches of every such partition of ``../shared/oracle/wild``
agree with :func:`kreplica.formats.coordinator.records.partition_for`."""

from __future__ import annotations

from itertools import islice

from kreplica.formats.coordinator.records import CONSUMER_OFFSETS, decode_record, partition_for
from kreplica.model.logdir.log_dir import find_log_dirs
from kreplica.model.log.partition_log import iter_batch_records, read_partition_log
from tests.interop.wild_cases import wild_dir

#: batches read per partition: enough to meet its groups, few enough to stay quick
BATCHES = 4


def test_every_wild_group_is_in_the_partition_its_hash_names() -> None:
    root = wild_dir()
    checked, misplaced = 0, []
    for directory in sorted(p for p in root.glob("**/__consumer_offsets-*") if p.is_dir()):
        number = int(directory.name.rsplit("-", 1)[1])
        log_dir = find_log_dirs([str(directory)])[0]
        log = read_partition_log(log_dir.partitions[0], log_dir)
        data = islice((b for b in log.batches if not b.is_control), BATCHES)
        for _batch, records, _complete in iter_batch_records(log, data):
            for r in records:
                key = decode_record(CONSUMER_OFFSETS, r.key, r.value).key
                group = key["group"] if "group" in key else key["group_id"]   # classic, KIP-848
                checked += 1
                if partition_for(group) != number:
                    misplaced.append((str(directory.relative_to(root)), group))
    assert checked > 100 and misplaced == []
