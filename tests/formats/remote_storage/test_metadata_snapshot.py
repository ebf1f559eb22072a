"""``remote_log_snapshot`` (Kafka 3.1 to 3.7, ``RemoteLogMetadataSnapshotFile``): the header and
entries as its ``write`` lays them out, and each way its ``read`` fails, with its counter-case."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kreplica.formats.errors import FormatError, Malformed, Truncated, UnsupportedVersion
from kreplica.formats.remote_storage.metadata_snapshot import (HEADER_SIZE, build_remote_log_snapshot,
                                                               parse_remote_log_snapshot)
from tests.formats.remote_storage.test_metadata_records import PARTITION_DELETE, SEGMENT_ID

#: api key 3, version 0: SegmentId, offsets 0-9, broker 1, timestamps 2 and 3, one epoch, 512 bytes,
#: no custom metadata, COPY_SEGMENT_FINISHED, no tags (3.x had no TxnIndexEmpty)
ENTRY = (b"\x01\x03\x00" + SEGMENT_ID + (0).to_bytes(8, "big") + (9).to_bytes(8, "big") + (1).to_bytes(4, "big")
         + (2).to_bytes(8, "big") + (3).to_bytes(8, "big") + b"\x02" + (0).to_bytes(4, "big")
         + (0).to_bytes(8, "big") + b"\x00" + (512).to_bytes(4, "big") + b"\x00" + b"\x01" + b"\x00")
#: version 0, metadata partition 7, offset 42, 1 entry; then the entry's int32 length and bytes
FILE = struct.pack(">hiqi", 0, 7, 42, 1) + struct.pack(">i", len(ENTRY)) + ENTRY


def test_a_snapshot_as_write_lays_it_out() -> None:
    snap = parse_remote_log_snapshot(FILE)
    assert (snap.version, snap.metadata_partition, snap.metadata_partition_offset) == (0, 7, 42)
    (entry,) = snap.entries
    assert (entry.name, entry.data["end_offset"], entry.data["segment_size_in_bytes"], entry.state_name) == (
        "RemoteLogSegmentMetadataSnapshotRecord", 9, 512, "COPY_SEGMENT_FINISHED")
    assert build_remote_log_snapshot(7, 42, [entry.data]) == FILE


def test_an_empty_file_is_no_snapshot_and_an_empty_snapshot_is_one() -> None:
    # the 3.x constructor creates the file empty; read() returns Optional.empty for it
    assert parse_remote_log_snapshot(b"") is None
    assert parse_remote_log_snapshot(struct.pack(">hiqi", 0, 7, 42, 0)).entries == ()


@pytest.mark.parametrize(("data", "error"), [
    pytest.param(FILE[:HEADER_SIZE - 1], Truncated, id="short-header"),
    pytest.param(struct.pack(">h", 1) + FILE[2:], UnsupportedVersion, id="version-1"),
    pytest.param(FILE[:HEADER_SIZE + 2], Truncated, id="short-length"),
    pytest.param(FILE[:-1], Truncated, id="short-entry"),
    pytest.param(FILE[:HEADER_SIZE] + struct.pack(">i", -1), Malformed, id="negative-length"),
    pytest.param(struct.pack(">hiqi", 0, 7, 42, 2) + FILE[HEADER_SIZE:], Malformed, id="count-differs"),
    pytest.param(FILE[:HEADER_SIZE] + struct.pack(">i", len(PARTITION_DELETE)) + PARTITION_DELETE, Malformed,
                 id="not-a-snapshot-record"),
])
def test_where_kafkas_read_fails(data, error) -> None:
    with pytest.raises(error):
        parse_remote_log_snapshot(data, path="remote_log_snapshot")


@settings(max_examples=300)
@given(st.one_of(st.binary(max_size=100), st.integers(0, len(FILE)).map(lambda n: FILE[:n]),
                 st.tuples(st.integers(0, len(FILE) - 1), st.integers(0, 255)).map(
                     lambda p: FILE[:p[0]] + bytes([p[1]]) + FILE[p[0] + 1:])))
def test_any_bytes_give_a_snapshot_nothing_or_a_format_error(data) -> None:
    try:
        parse_remote_log_snapshot(data)
    except FormatError:
        pass
