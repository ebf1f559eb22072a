"""inspect-log's batch filters (README, inspect-log: ``--leader-epoch N``,
``--transactional/--not-transactional`` select the batches listed): each filter keeps the batches
that match it and only those, on a partition that holds both sides of each filter."""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.analysis.inspect.inspect_log import InspectOptions, inspect_groups
from kreplica.formats.log.batch import NewRecord, RecordBatch
from kreplica.formats.log.default_records import build_batch
from kreplica.model.logdir.segments import find_segment_groups

TS = 1_700_000_000_000


def _batch(first: int, epoch: int, *, txn: bool) -> bytes:
    return build_batch([NewRecord(first, TS, b"k", b"v")], base_offset=first, partition_leader_epoch=epoch,
                       producer_id=7 if txn else -1, producer_epoch=0 if txn else -1,
                       base_sequence=first if txn else -1, is_transactional=txn)


# offsets 0-3: (epoch, transactional) = (1, no), (2, yes), (2, no), (3, yes)
SEGMENT = (_batch(0, 1, txn=False) + _batch(1, 2, txn=True) + _batch(2, 2, txn=False)
           + _batch(3, 3, txn=True))


@pytest.mark.parametrize("opts, listed", [
    ({}, [0, 1, 2, 3]),
    ({"leader_epoch": 2}, [1, 2]),
    ({"leader_epoch": 1}, [0]),
    ({"leader_epoch": 4}, []),
    ({"transactional": True}, [1, 3]),
    ({"transactional": False}, [0, 2]),
    ({"leader_epoch": 2, "transactional": True}, [1]),
])
def test_leader_epoch_and_transactional_filters_list_the_matching_batches(tmp_path: Path, opts, listed) -> None:
    part = tmp_path / "orders-0"
    part.mkdir()
    (part / "00000000000000000000.log").write_bytes(SEGMENT)
    events = list(inspect_groups(find_segment_groups([str(part)]), InspectOptions(**opts)))
    assert [e.base_offset for e in events if isinstance(e, RecordBatch)] == listed
    assert events[-1].batches == 4          # totals cover the whole segment, filtered or not
