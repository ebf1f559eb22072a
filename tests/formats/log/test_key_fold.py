"""The fold of a records section by key (``kreplica/formats/log/key_fold.py``) and its compiled twin
(``_crecords.c``'s ``fold`` and ``KeyTable``): the layouts accept only what the generic message
reader reads, and the compiled fold, driven to the end of a section as the group loader drives it
(the reference reader taking over where it stops), leaves exactly what the pure-Python fold leaves,
on well-formed and damaged sections alike."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreplica.formats.coordinator.group_records import GroupMetadataValue, OffsetCommitKey, OffsetCommitValue
from kreplica.formats.coordinator.records import (CONSUMER_OFFSETS, build_key, build_value, decode_matched,
                                                 decode_record)
from kreplica.formats.errors import FormatError
from kreplica.formats.log import key_fold
from kreplica.formats.log.batch import NewRecord
from kreplica.formats.log.default_records import RECORDS_OFFSET, build_batch, decode_records
from kreplica.formats.log.key_fold import (FOLD_CUT, FOLD_DONE, FOLD_FRAMING, FOLD_OTHER, NO_STOP, fold_key,
                                           fold_one, fold_records, matches_layout)
from kreplica.formats.generated_messages import flat_layout

TS = 1_700_000_000_000
REQUIRED = os.environ.get("KREPLICA_REQUIRE_COMPILED") == "1"
compiled = key_fold.load_compiled_fold()
needs_compiled = pytest.mark.skipif(compiled is None and not REQUIRED, reason="the compiled fold was not built here")
COMMIT = (1, flat_layout(OffsetCommitKey, 0), tuple(flat_layout(OffsetCommitValue, v) for v in range(5)))
LAYOUTS = (COMMIT, COMMIT)


def test_the_compiled_fold_is_in_use_when_built() -> None:
    if REQUIRED:
        assert compiled is not None, "KREPLICA_REQUIRE_COMPILED=1 but _crecords has no fold (a stale build?)"
    if os.environ.get("KREPLICA_DECODE", "").lower() == "python" or compiled is None:
        assert key_fold.FOLD_IMPLEMENTATION == "python" and isinstance(key_fold.new_table(), dict)
    else:
        assert key_fold.FOLD_IMPLEMENTATION == "compiled"


@pytest.mark.parametrize(("message", "version", "layout"), [
    pytest.param(OffsetCommitKey, 0, b"ssi", id="commit-key"),
    pytest.param(OffsetCommitValue, 0, b"qsq", id="commit-v0"),
    pytest.param(OffsetCommitValue, 1, b"qsqq", id="commit-v1-expire"),
    pytest.param(OffsetCommitValue, 3, b"qisq", id="commit-v3-epoch"),
    pytest.param(OffsetCommitValue, 4, b"qiSqT", id="commit-v4-flexible"),
    pytest.param(GroupMetadataValue, 3, None, id="group-metadata-has-arrays"),
])
def test_flat_layouts(message, version, layout) -> None:
    assert flat_layout(message, version) == layout


def commit(group: str, partition: int, offset: int | None, version: int = 3, key_type: int = 1):
    key = build_key(CONSUMER_OFFSETS, key_type, {"group": group, "topic": "t", "partition": partition})
    value = None if offset is None else build_value(CONSUMER_OFFSETS, 1, version, {
        "offset": offset, "leader_epoch": 2, "metadata": "m" * (offset % 3), "commit_timestamp": TS})
    return key, value


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=40), st.one_of(st.none(), st.binary(max_size=40)), st.data())
def test_a_layout_match_is_a_record_the_decoder_reads(key: bytes, value, data) -> None:
    """Random bytes, and real commits with a byte changed: whatever the layouts take, the generic
    reader reads to its end."""
    if data.draw(st.booleans()):
        key, value = commit("g", 1, data.draw(st.integers(0, 9)), data.draw(st.integers(0, 4)))
        blob = bytearray(value)
        if blob:
            blob[data.draw(st.integers(0, len(blob) - 1))] = data.draw(st.integers(0, 255))
        value = bytes(blob)
    folded = fold_key(key, value, LAYOUTS)
    if folded is not None:
        record = decode_record(CONSUMER_OFFSETS, key, value)
        assert record.record_type in (0, 1)
        # what the loader reads a survivor with: the same record, without the generic reader's checks
        assert decode_matched(CONSUMER_OFFSETS, folded, value) == decode_record(CONSUMER_OFFSETS, folded, value)


def test_matches_layout_edges() -> None:
    assert matches_layout(b"\x00\x01a", 0, 3, b"s")
    assert not matches_layout(b"\xff\xffa", 0, 3, b"s")             # null: not a non-null string
    assert not matches_layout(b"\x00\x01ab", 0, 4, b"s")            # bytes left over
    assert not matches_layout(b"\x00", 0, 1, b"S")                  # compact null
    assert matches_layout(b"\x02a\x00", 0, 3, b"ST")
    assert matches_layout(b"\x02a\x01\x05\x01z", 0, 6, b"ST")        # one unknown tag of one byte
    assert not matches_layout(b"\x02a\x01\x05\x02z", 0, 6, b"ST")    # its size runs past the end
    assert not matches_layout(b"\x80\x80\x80\x80\x01", 0, 5, b"S")  # a 5-byte varint: the reader's to judge


def section(records: list[tuple], base_offset: int = 100) -> bytes:
    batch = build_batch([NewRecord(base_offset + i, TS + i, k, v) for i, (k, v) in enumerate(records)],
                        base_offset=base_offset)
    return batch[RECORDS_OFFSET:]


def drive(fold, data: bytes, count: int, stop_offset: int = NO_STOP, stop_time: int = NO_STOP, table=None):
    """What the group loader does with a fold: records it hands back are folded by the Python
    path, a record it will not frame and everything after it go to the reference reader."""
    table = table if table is not None else {}
    others, error, cut = [], None, None
    pos = index = 0
    while True:
        pos, index, status, other = fold(data, pos, index, count, 100, TS, None, stop_offset, stop_time, 7, "seg",
                                         LAYOUTS, table)
        if status == FOLD_DONE:
            break
        if status == FOLD_OTHER:
            others.append(other)
            continue
        if status == FOLD_CUT:
            cut = index
            break
        assert status == FOLD_FRAMING
        try:
            for r in decode_records(data, count, 100, TS, -1, None, 7, start_index=index, start_pos=pos):
                if r.offset > stop_offset or r.timestamp > stop_time:
                    break
                key = fold_key(r.key, r.value, LAYOUTS)
                if key is None:
                    others.append((r.offset, r.timestamp, r.key, r.value))
                else:
                    fold_one(table, key, r, "seg", 7)
        except FormatError as exc:
            error = exc.reason
        break
    return sorted(table.items()), others, error, cut


def records_strategy():
    one = st.one_of(
        st.builds(commit, st.sampled_from("gh"), st.integers(0, 2), st.one_of(st.none(), st.integers(0, 50)),
                  st.integers(0, 4), st.integers(0, 1)),
        st.tuples(st.binary(max_size=12), st.one_of(st.none(), st.binary(max_size=12))),
    )
    return st.lists(one, min_size=1, max_size=12)


@needs_compiled
@settings(max_examples=300, deadline=None)
@given(records_strategy(), st.data())
def test_compiled_and_pure_folds_agree(records, data) -> None:
    raw = bytearray(section(records))
    if data.draw(st.booleans()):                      # damage: one byte changed
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at] = data.draw(st.integers(0, 255))
    raw = bytes(raw)
    stop = data.draw(st.one_of(st.just(NO_STOP), st.integers(100, 115)))
    pure = drive(fold_records, raw, len(records), stop)
    fast = drive(compiled.fold, raw, len(records), stop, table=compiled.KeyTable())
    assert fast == pure


def test_the_fold_keeps_each_keys_last_record_and_its_last_value() -> None:
    records = [commit("g", 0, 1), commit("g", 0, 2), commit("g", 1, 3), commit("g", 0, None),
               commit("g", 1, 4, key_type=0)]
    table, others, error, cut = drive(fold_records, section(records), len(records))
    assert (others, error, cut) == ([], None, None)
    entries = {k: e for k, e in table}
    g0 = fold_key(*commit("g", 0, None), LAYOUTS)
    g1 = fold_key(*commit("g", 1, None), LAYOUTS)
    # (offset, timestamp, value, value_offset, path, batch_position): a tombstone keeps the last value's offset
    assert entries[g0][:2] + entries[g0][3:] == (103, TS + 3, 101, "seg", 7) and entries[g0][2] is None
    # a key-v0 record folds under the v1 key
    assert entries[g1][0] == 104 and entries[g1][3] == 104 and len(entries) == 2


def test_a_record_beyond_the_point_stops_the_fold() -> None:
    records = [commit("g", 0, n) for n in range(4)]
    table, others, error, cut = drive(fold_records, section(records), 4, stop_offset=101)
    assert cut == 2 and dict(table)[fold_key(*commit("g", 0, None), LAYOUTS)][0] == 101
    _table, _others, _error, cut = drive(fold_records, section(records), 4, stop_time=TS)
    assert cut == 1


@needs_compiled
def test_the_key_table_is_a_mapping() -> None:
    t = compiled.KeyTable()
    entry = (5, TS, b"v", 5, "seg", 9)
    t[b"k"] = entry
    t[b"k2"] = (6, TS, None, -1, "seg", 9)
    assert (len(t), t[b"k"], t.get(b"k"), t.get(b"none"), t.get(b"none", 0)) == (2, entry, entry, None, 0)
    assert sorted(t.items()) == [(b"k", entry), (b"k2", (6, TS, None, -1, "seg", 9))]
    with pytest.raises(KeyError):
        t[b"none"]
    with pytest.raises(TypeError):
        t["text"] = entry
    for n in range(5000):                               # growth keeps every entry
        t[n.to_bytes(4, "big")] = (n, TS, b"x" * (n % 7), n, "seg", 0)
    assert len(t) == 5002 and t[(4321).to_bytes(4, "big")] == (4321, TS, b"x" * (4321 % 7), 4321, "seg", 0)
