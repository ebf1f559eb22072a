"""Committed offsets read from a fixture's ``__consumer_offsets`` partitions by a test-only replay
(the last commit of each key wins, as ``GroupMetadataManager.loadGroupsAndOffsets`` keeps it; no
tombstones, transactions or expiry in the fixtures that use it), for tests of consumer impact
that must not depend on the product's loader."""

from __future__ import annotations

from pathlib import Path

from kreplica.formats.coordinator.records import CONSUMER_OFFSETS, decode_record
from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.logdir.log_dir import scan_log_dir
from kreplica.model.log.partition_log import iter_batch_records, read_partition_log


def read_committed_offsets(log_dir: Path) -> list[CommittedOffset]:
    """Every group's last commit in the ``__consumer_offsets-N`` partitions of ``log_dir``."""
    scanned = scan_log_dir(log_dir)
    latest: dict[tuple, CommittedOffset] = {}
    for pdir in scanned.partitions:
        if not pdir.name.startswith(CONSUMER_OFFSETS):
            continue
        log = read_partition_log(pdir, scanned, label=Path(log_dir).name)
        n = int(pdir.name.rsplit("-", 1)[1])
        for _batch, records, _complete in iter_batch_records(log, log.batches):
            for r in records:
                rec = decode_record(CONSUMER_OFFSETS, r.key, r.value)
                if rec.name != "offset_commit":
                    continue
                k, v = rec.key, rec.value
                epoch = v.get("leader_epoch", -1)
                latest[(k["group"], k["topic"], k["partition"])] = CommittedOffset(
                    k["group"], k["topic"], k["partition"], v["offset"], None if epoch == -1 else epoch,
                    v["metadata"], v["commit_timestamp"], v.get("expire_timestamp"), r.offset, n, log.label,
                    rec.value_version)
    return list(latest.values())
