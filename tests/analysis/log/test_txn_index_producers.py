"""Which ABORT markers the transaction index must hold (``index_verification._aborts_with_data``):
those of a transaction with data, which Kafka's ``ProducerAppendInfo`` tracks only for
*transactional* batches (``append``: ``if (isTransactional) updateCurrentTxnFirstOffset``), for
every producer id Kafka allocates, 0 included (``ProducerIdManager`` hands out blocks from 0), and
whatever non-transactional batches come between. ``appendEndTxnMarker`` completes a transaction
(a ``CompletedTxn``, indexed when aborted) only when one was open (KAFKA-10702)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.analysis.log.index_verification import verify_txn_index
from kreplica.formats.log.batch import CONTROL_ABORT, NewRecord
from kreplica.formats.log.default_records import build_batch, build_control_record
from kreplica.model.logdir.log_dir import scan_partition_dir
from kreplica.model.log.partition_log import read_segment_log

TS = 1_700_000_000_000


def abort(offset: int, producer: int) -> bytes:
    return build_batch([build_control_record(offset, TS, CONTROL_ABORT, 1)], base_offset=offset,
                       producer_id=producer, producer_epoch=0, is_transactional=True, is_control=True)


def data(offset: int, producer: int, *, transactional: bool = True) -> bytes:
    return build_batch([NewRecord(offset, TS, b"k", b"v")], base_offset=offset, producer_id=producer,
                       producer_epoch=0, base_sequence=offset, is_transactional=transactional)


def plain(offset: int) -> bytes:
    return build_batch([NewRecord(offset, TS, b"k", b"v")], base_offset=offset)


def missing_entries(tmp_path: Path, segment: bytes) -> list[tuple[int, int]]:
    part = tmp_path / "t-0"
    part.mkdir()
    (part / f"{0:020d}.log").write_bytes(segment)
    seg = read_segment_log(scan_partition_dir(part).segments[0])
    found = [f for f in verify_txn_index(b"", path="i", segment=seg, open_at_start=frozenset())
             if not hasattr(f, "first_offset")]
    assert all(f.kind == "txn_index_mismatch" for f in found)
    return [(f.details["producer_id"], f.details["marker_offset"]) for f in found]


@pytest.mark.parametrize("segment, missing", [
    # producer 0 is a producer like any other: its aborted data needs an entry
    pytest.param(lambda: data(0, 0) + abort(1, 0), [(0, 1)], id="producer-0"),
    pytest.param(lambda: data(0, 1) + abort(1, 1), [(1, 1)], id="producer-1"),
    # a non-transactional batch before the transaction does not end the walk
    pytest.param(lambda: plain(0) + data(1, 7) + abort(2, 7), [(7, 2)], id="after-a-plain-batch"),
    # ... nor an idempotent one of another producer
    pytest.param(lambda: data(0, 5, transactional=False) + data(1, 7) + abort(2, 7), [(7, 2)], id="after-idempotent"),
    # an idempotent batch opens no transaction: the abort that follows ends an empty one, not indexed
    pytest.param(lambda: data(0, 7, transactional=False) + abort(1, 7), [], id="idempotent-opens-nothing"),
])
def test_an_abort_needs_an_entry_exactly_when_its_transaction_holds_data(tmp_path, segment, missing) -> None:
    assert missing_entries(tmp_path, segment()) == missing
