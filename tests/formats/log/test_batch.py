"""A batch's derived facts (:class:`RecordBatch` properties), each as Kafka's record batch
defines it: ``DefaultRecordBatch.lastSequence``/``incrementSequence``, ``nextOffset``,
``countOrNull``, ``LogValidator``'s ``countFromOffsets``, and ``AbstractLegacyRecordBatch`` for
magic 0 and 1. Expected values come from those methods applied by hand to the header fields
written, never from kreplica's output; where the records are read too, both record decoders
(compiled and ``KREPLICA_DECODE=python``) must give the sequence the header predicts.
"""

from __future__ import annotations

import pytest

from kreplica.formats import codecs
from kreplica.formats.log import default_records, legacy_records
from kreplica.formats.log.batch import NO_SEQUENCE, NewRecord
from kreplica.formats.log.default_records import build_batch, iter_records, parse_header
from kreplica.formats.log.legacy_records import build_message, build_wrapper

TS = 1_700_000_000_000
PATH = "00000000000000000000.log"
INT_MAX = 2**31 - 1


def _v2(records=None, **fields):
    records = [NewRecord(100 + i, TS + i, None, b"v") for i in range(5)] if records is None else records
    data = build_batch(records, base_offset=fields.pop("base_offset", 100), **fields)
    return data, parse_header(data, 0, len(data), path=PATH)


@pytest.fixture(params=["compiled", "python"])
def decoder(request, monkeypatch):
    """The compiled record decoder, then the pure-Python reference alone."""
    compiled = default_records.load_compiled()
    if request.param == "compiled" and compiled is None:
        pytest.skip("the compiled record decoder is not built here")
    monkeypatch.setattr(default_records, "_crecords", compiled if request.param == "compiled" else None)
    return request.param


@pytest.mark.parametrize(("base_sequence", "last"), [
    pytest.param(7, 11, id="plain"),
    pytest.param(INT_MAX - 4, INT_MAX, id="to-max"),
    pytest.param(INT_MAX - 2, 1, id="wraps-to-1"),
    pytest.param(INT_MAX, 3, id="max-wraps"),
])
def test_last_sequence_is_increment_sequence_of_the_last_offset_delta(decoder, base_sequence, last):
    """``DefaultRecordBatch.lastSequence``: ``incrementSequence(baseSequence, lastOffsetDelta)``,
    which wraps past ``Integer.MAX_VALUE`` to 0 (not to ``Integer.MIN_VALUE``, as int addition
    would); the last record's sequence, read by either decoder, is the same number."""
    data, batch = _v2(producer_id=9, producer_epoch=0, base_sequence=base_sequence)
    assert batch.last_offset_delta == 4
    assert batch.last_sequence == last
    assert list(iter_records(data, batch))[-1].sequence == last


def test_no_sequence_has_no_last_sequence(decoder):
    """``lastSequence`` is ``NO_SEQUENCE`` when ``baseSequence`` is, however many records follow
    (counter-case: ``incrementSequence(-1, 4)`` would give 3)."""
    data, batch = _v2()
    assert batch.base_sequence == NO_SEQUENCE
    assert batch.last_sequence == NO_SEQUENCE
    assert {r.sequence for r in iter_records(data, batch)} == {NO_SEQUENCE}


def test_last_offset_delta_survives_a_wrapped_last_offset():
    """``lastOffset()`` is ``baseOffset() + lastOffsetDelta()`` in long arithmetic, so it wraps;
    the delta (and with it ``lastSequence``) is still the header's int."""
    _, batch = _v2([], base_offset=2**63 - 2, last_offset_delta=5, base_sequence=10, producer_id=1,
                   producer_epoch=0)
    assert batch.last_offset == -(2**63) + 3
    assert batch.last_offset_delta == 5
    assert batch.last_sequence == 15
    assert batch.next_offset == batch.last_offset + 1


def test_an_empty_batch_after_compaction_spans_offsets_but_holds_no_record(decoder):
    """The cleaner keeps an emptied batch for its producer state: ``count() == 0`` and
    ``iterator()`` is empty, while ``lastOffset()`` and ``lastSequence`` keep the removed records'
    (``LogValidator``'s ``countFromOffsets`` would say 10)."""
    data, batch = _v2([], last_offset_delta=9, base_sequence=20, producer_id=3, producer_epoch=1, max_timestamp=TS)
    assert (batch.count, batch.offset_span, batch.records_read) == (0, 10, 0)
    assert batch.next_offset == 110
    assert batch.last_sequence == 29
    assert list(iter_records(data, batch)) == []


def test_compaction_leaves_fewer_records_than_offsets():
    """Records removed from the middle: ``countOrNull()`` is what is left, not the span."""
    records = [NewRecord(100, TS, b"a", b"1"), NewRecord(104, TS, b"b", b"2")]
    _, batch = _v2(records)
    assert (batch.count, batch.offset_span, batch.records_read) == (2, 5, 2)


def test_a_negative_count_reads_no_record():
    """``DefaultRecordBatch``'s record iterator throws "Found invalid record count" before the
    first record: by its header such a batch yields none (counter-case: the count itself, -3,
    which a total would subtract)."""
    _, batch = _v2()
    batch = batch._replace(count=-3)
    assert batch.records_read == 0
    assert batch.offset_span == 5


def test_an_uncompressed_legacy_message_is_one_record():
    """``AbstractLegacyRecordBatch``: ``countOrNull()`` is null, ``lastSequence()`` is
    ``NO_SEQUENCE``, and an uncompressed message's iterator yields the message itself."""
    data = build_message(41, b"k", b"v", magic=1, timestamp=TS)
    batch, error = legacy_records.parse_entry(data, 0, len(data), path=PATH)
    assert error is None
    assert (batch.count, batch.base_offset, batch.last_offset) == (None, 41, 41)
    assert (batch.records_read, batch.last_sequence, batch.next_offset) == (1, NO_SEQUENCE, 42)


@pytest.mark.parametrize("magic", [0, 1])
def test_a_compressed_legacy_wrapper_counts_its_inner_offsets(magic):
    """``AbstractLegacyRecordBatch.baseOffset`` is the first inner offset and ``lastOffset`` the
    wrapper's: the header's record count is the offsets between (inner messages are contiguous)."""
    inner = [NewRecord(50 + i, TS, None, b"x" * 8) for i in range(4)]
    data = build_wrapper(inner, magic=magic, compression=codecs.GZIP)
    batch, error = legacy_records.parse_entry(data, 0, len(data), path=PATH)
    assert error is None
    assert (batch.base_offset, batch.last_offset) == (50, 53)
    assert batch.records_read == len(list(legacy_records.iter_records(data, batch))) == 4


def test_a_legacy_wrapper_with_offsets_backwards_still_counts_one():
    """``DeepRecordsIterator`` refuses a wrapper with no inner record, so a readable one yields at
    least one; a damaged span (base above last) counts one, not 0 or less."""
    data = build_message(41, b"k", b"v", magic=1, timestamp=TS)
    batch, _ = legacy_records.parse_entry(data, 0, len(data), path=PATH)
    assert batch._replace(base_offset=45).records_read == 1
