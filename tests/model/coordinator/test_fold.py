"""The fold (:mod:`kreplica.model.coordinator.fold`) gives the plain replay's state, findings included.

Every case of tests/model/coordinator/test_replay.py is loaded both ways already (group_builder.load);
here random logs of commits, tombstones, group records, transactions and markers, cut at random
points, are loaded by the plain replay, the compiled fold and the pure-Python fold, and must agree.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreplica.formats.log import key_fold
from kreplica.formats.log.batch import CONTROL_ABORT, CONTROL_COMMIT
from kreplica.model.coordinator.replay import NEW_COORDINATOR, OLD_COORDINATOR, ReplayPoint
from tests.builders.groups import commit, group_record, load, member

GROUPS = ("a", "b")
PRODUCERS = (7000, 7001)


def _record(draw) -> tuple:
    kind = draw(st.sampled_from(("commit", "commit", "commit", "tombstone", "group", "group-tombstone", "bad")))
    group = draw(st.sampled_from(GROUPS))
    partition = draw(st.integers(0, 1))
    if kind == "commit":
        return commit(group, "t", partition, draw(st.integers(0, 99)), version=draw(st.sampled_from((1, 3, 4))),
                      key_version=draw(st.sampled_from((0, 1))))
    if kind == "tombstone":
        return commit(group, "t", partition)
    if kind == "group":
        return group_record(group, draw(st.sampled_from(([], [member("m", ["t"], {"t": [0]})]))))
    if kind == "group-tombstone":
        return group_record(group, None)
    return commit(group, "t", partition, 1)[0], b"\x00\x03\x01"          # a value that does not decode


@st.composite
def logs(draw) -> list:
    entries = []
    for _ in range(draw(st.integers(1, 14))):
        shape = draw(st.sampled_from(("plain", "plain", "txn", "marker")))
        if shape == "marker":
            entries.append({"marker": draw(st.sampled_from((CONTROL_COMMIT, CONTROL_ABORT, 4))),
                            "producer_id": draw(st.sampled_from(PRODUCERS))})
            continue
        records = [draw(st.composite(lambda d: _record(d))()) for _ in range(draw(st.integers(1, 4)))]
        entries.append(records if shape == "plain" else {"records": records,
                                                         "producer_id": draw(st.sampled_from(PRODUCERS))})
    return entries


@pytest.mark.parametrize("coordinator", [OLD_COORDINATOR, NEW_COORDINATOR])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=logs(), cut=st.one_of(st.none(), st.integers(0, 40)))
def test_the_fold_agrees_with_the_plain_replay(tmp_path: Path, coordinator: str, entries: list, cut) -> None:
    load(tmp_path, entries, coordinator, ReplayPoint(at_offset=cut))     # asserts the three agree


def test_both_fold_implementations_are_reachable() -> None:
    assert key_fold.FOLD_IMPLEMENTATION in ("compiled", "python")
    if key_fold.FOLD_IMPLEMENTATION == "compiled":
        assert type(key_fold.new_table()).__name__ == "KeyTable"


def test_a_record_the_compiled_fold_does_not_frame_is_read_by_the_reference_reader(tmp_path: Path) -> None:
    """A CreateTime stamp past Long.MAX_VALUE: Kafka's DefaultRecord.readFrom adds the timestamp
    delta to the base timestamp as a Java long (it wraps); the compiled fold refuses to frame
    the record (FOLD_FRAMING) and the fold reads the rest of the section with the reference
    reader (``GroupFold._framing``), which gives the plain replay's records, offsets and stamps."""
    import struct

    from kreplica.formats.checksums import crc32c
    from kreplica.formats.log.default_records import ATTRIBUTES_OFFSET, CRC_OFFSET
    from tests.builders.groups import load_dir, offsets, write

    log_dir = write(tmp_path, [[commit("g", "t", 0, 1), commit("g", "t", 1, 2), commit("g", "t", 2, 3)]])
    segment = next((log_dir / "__consumer_offsets-0").glob("*.log"))
    data = bytearray(segment.read_bytes())
    base = (1 << 63) - 1500          # record 1 at +1000 fits, record 2 at +2000 wraps
    struct.pack_into(">qq", data, 27, base, base + 1000)       # baseTimestamp, maxTimestamp
    struct.pack_into(">I", data, CRC_OFFSET, crc32c(bytes(data[ATTRIBUTES_OFFSET:])))
    segment.write_bytes(bytes(data))
    for coordinator in (OLD_COORDINATOR, NEW_COORDINATOR):
        state = load_dir(log_dir, coordinator)                   # plain, compiled fold and pure fold agree
        assert (state.findings, offsets(state)) == ((), {("g", "t", 0): 1, ("g", "t", 1): 2, ("g", "t", 2): 3})
        assert (state.records, state.replayed_to, state.newest_timestamp) == (3, 2, base + 1000)


def test_a_log_append_time_batch_cut_by_damage_counts_the_broker_stamp(tmp_path: Path) -> None:
    """A LogAppendTime batch: every record is stamped with the batch's max timestamp
    (DefaultRecordBatch: ``timestampType == LOG_APPEND_TIME``); the records before a record that
    does not read are replayed and counted at that stamp, by the fold as by the plain replay."""
    import struct

    from kreplica.formats.checksums import crc32c
    from kreplica.formats.log.default_records import ATTRIBUTES_OFFSET, CRC_OFFSET
    from tests.builders.groups import TS, kinds, load_dir, offsets, write

    first = commit("g", "t", 0, 1)
    log_dir = write(tmp_path, [[first, commit("g", "t", 1, 2)]])
    segment = next((log_dir / "__consumer_offsets-0").glob("*.log"))
    data = bytearray(segment.read_bytes())
    data[data.index(first[1]) + len(first[1]) + 1] = 0x7F      # the second record's length: far too long
    (attributes,) = struct.unpack_from(">h", data, ATTRIBUTES_OFFSET)
    struct.pack_into(">h", data, ATTRIBUTES_OFFSET, attributes | 0x08)   # timestamp type LogAppendTime
    struct.pack_into(">q", data, 35, TS + 777_000)                        # maxTimestamp: the broker's stamp
    struct.pack_into(">I", data, CRC_OFFSET, crc32c(bytes(data[ATTRIBUTES_OFFSET:])))
    segment.write_bytes(bytes(data))
    state = load_dir(log_dir, NEW_COORDINATOR)
    assert (kinds(state), offsets(state)) == (["invalid_record"], {("g", "t", 0): 1})
    assert (state.records, state.replayed_to, state.newest_timestamp) == (1, 0, TS + 777_000)


@pytest.mark.parametrize("magic", [0, 1])
def test_a_coordinator_of_before_0_11_wrote_messages_the_fold_reads(tmp_path: Path, magic: int) -> None:
    """Before 0.11 the group coordinator appended its records as magic 0 (0.9) or magic 1 (0.10)
    messages (``GroupMetadataManager`` builds them at the log's message format version); the
    fold reads them with the legacy reader (``AbstractLegacyRecordBatch``), as the plain replay
    does, and both give the commits."""
    from fixtures.generate import Partition
    from kreplica.formats.log.legacy_records import build_message
    from kreplica.formats.logdir.naming import segment_file_name
    from tests.builders.groups import TS, load_dir, offsets

    log_dir = tmp_path / "broker"
    partition = Partition(log_dir, "__consumer_offsets-0")
    for offset, (key, value) in enumerate((commit("g", "t", 0, 5), commit("g", "t", 1, 9), commit("h", "t", 0, 2))):
        partition.append(build_message(offset, key, value, magic=magic, timestamp=TS + offset), offset, offset + 1)
    for base, data in partition.segments:
        (partition.dir / segment_file_name(base)).write_bytes(bytes(data))
    for coordinator in (OLD_COORDINATOR, NEW_COORDINATOR):
        state = load_dir(log_dir, coordinator)                   # plain, compiled fold and pure fold agree
        assert offsets(state) == {("g", "t", 0): 5, ("g", "t", 1): 9, ("h", "t", 0): 2}
        assert (state.findings, state.records, state.replayed_to) == ((), 3, 2)
