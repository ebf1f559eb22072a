"""Where a KRaft metadata history starts and what it reads (``model/cluster/kraft_history.py``):
a snapshot as a start (``load_snapshot``: ``SnapshotPath``'s name ``<endOffset 20 digits>-<epoch
10 digits>.checkpoint`` gives its end offset, the SNAPSHOT_HEADER its
``last_contained_log_timestamp``, its metadata records the image), the snapshot a history
from an offset starts from (``kraft_start``: a snapshot holds every record below its end
offset, ``RawSnapshotReader.snapshotId().offset()``; the newest one a broker's
``MetadataLoader`` could have loaded), and the log records after it (``iter_kraft_records``:
``kraft_offset_gap`` where offsets are missing; a record Kafka skips does not end the segment)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.formats.kraft import records as kraft
from kreplica.formats.findings import Finding
from kreplica.formats.log import default_records
from kreplica.formats.log.batch import NewRecord
from kreplica.model.cluster.kraft_files import KraftFiles, find_kraft_files
from kreplica.model.cluster.kraft_history import KraftStart, iter_kraft_records, kraft_start, load_snapshot
from tests.builders.kraft_metadata import SNAPSHOT_13, broker_registration, history_batches

#: a metadata record of api key 99, unknown to kreplica (``MetadataRecordSerde``: frame version 1,
#: api key, version, body)
UNKNOWN_VALUE = b"\x01\x63\x00\xaa"


def _batch_with_an_unknown_record(base_offset: int, epoch: int) -> bytes:
    """A data batch of three records, the middle one of an api key kreplica does not know."""
    known = kraft.build_metadata_value("FeatureLevelRecord", 0, {"name": "metadata.version", "feature_level": 20})
    topic = kraft.build_metadata_value("TopicRecord", 0, {"name": "t", "topic_id": "8um0e5Bd9LwnM_Jm3NHOHA"})
    news = [NewRecord(base_offset, 5, None, known), NewRecord(base_offset + 1, 5, None, UNKNOWN_VALUE),
            NewRecord(base_offset + 2, 5, None, topic)]
    return default_records.build_batch(news, base_offset=base_offset, partition_leader_epoch=epoch)


def _metadata_dir(root: Path) -> Path:
    d = root / "__cluster_metadata-0"
    d.mkdir()
    return d


def _snapshot(d: Path, end: int, epoch: int, *, timestamp: int = 1) -> Path:
    p = d / kraft.checkpoint_name(end, epoch)
    p.write_bytes(kraft.build_snapshot(SNAPSHOT_13, epoch=epoch, timestamp=timestamp))
    return p


# --- load_snapshot ----------------------------------------------------------------------------

def test_a_snapshot_s_start_is_its_name_s_end_offset_its_header_s_time_and_its_metadata_records(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``SnapshotPath.parse``: ``<endOffset>-<epoch>.checkpoint``; the SNAPSHOT_HEADER's
    ``last_contained_log_timestamp``; the records a ``MetadataLoader`` applies are the metadata
    records only, neither the header/footer control records nor one of an unknown type (its
    ``kraft_unknown_record`` warning passed on, the snapshot still usable). The name is read
    from the path as given, also a bare file name."""
    d = _metadata_dir(tmp_path)
    name = kraft.checkpoint_name(42, 3)
    header = kraft.build_control_batch([(kraft.SNAPSHOT_HEADER, {"version": 0, "last_contained_log_timestamp": 777})],
                                       base_offset=0, epoch=3, timestamp=777)
    footer = kraft.build_control_batch([(kraft.SNAPSHOT_FOOTER, {"version": 0})], base_offset=4, epoch=3,
                                       timestamp=777)
    (d / name).write_bytes(header + _batch_with_an_unknown_record(1, 3) + footer)
    monkeypatch.chdir(d)
    for path in (str(d / name), name):
        start, findings = load_snapshot(path)
        assert (start.path, start.end_offset, start.time) == (path, 42, 777)
        assert [(r.offset, r.name) for r in start.records] == [(1, "FeatureLevelRecord"), (3, "TopicRecord")]
        assert [(f.kind, f.severity, f.details["api_key"]) for f in findings] == [
            ("kraft_unknown_record", "warning", 99)]


def test_bootstrap_checkpoint_starts_at_offset_0(tmp_path: Path) -> None:
    """``bootstrap.checkpoint`` (``BootstrapDirectory``) is written like a snapshot but is not
    named by an end offset: what it holds comes before the log's first record, offset 0."""
    p = tmp_path / "bootstrap.checkpoint"
    p.write_bytes(kraft.build_snapshot(SNAPSHOT_13[:1], epoch=0, timestamp=55))
    start, findings = load_snapshot(str(p))
    assert (start.path, start.end_offset, start.time, findings) == (str(p), 0, 55, [])
    assert [r.name for r in start.records] == ["FeatureLevelRecord"]


def test_a_file_not_named_as_a_snapshot_has_no_header_check_and_no_time(tmp_path: Path) -> None:
    """Only a ``.checkpoint`` file must start with SNAPSHOT_HEADER (``RecordsSnapshotReader``);
    a log segment given as the start is read whole: its records, from offset 0, no time."""
    p = tmp_path / "00000000000000000000.log"
    p.write_bytes(_batch_with_an_unknown_record(0, 1))
    start, findings = load_snapshot(str(p))
    assert (start.path, start.end_offset, start.time) == (str(p), 0, None)
    assert [r.name for r in start.records] == ["FeatureLevelRecord", "TopicRecord"]
    assert [f.kind for f in findings] == ["kraft_unknown_record"]


def test_a_snapshot_without_its_header_is_no_start(tmp_path: Path) -> None:
    """The counter-case: a ``.checkpoint`` not starting with SNAPSHOT_HEADER is refused
    (``RecordsSnapshotReader`` insists on it), its error finding returned."""
    d = _metadata_dir(tmp_path)
    p = d / kraft.checkpoint_name(5, 1)
    p.write_bytes(_batch_with_an_unknown_record(0, 1))
    start, findings = load_snapshot(str(p))
    assert start is None and "kraft_incomplete_snapshot" in [f.kind for f in findings]


# --- kraft_start ------------------------------------------------------------------------------

@pytest.mark.parametrize("from_offset, end", [
    pytest.param(12, 13, id="end-13-holds-offsets-to-12"),
    pytest.param(11, 5, id="end-13-past-offset-12-so-the-one-before"),
    pytest.param(19, 20, id="the-newest"),
    pytest.param(100, 20, id="far-past-the-newest"),
    pytest.param(3, 5, id="none-early-enough-the-oldest"),
    pytest.param(None, 5, id="no-offset-the-oldest"),
])
def test_the_history_from_an_offset_starts_at_the_newest_snapshot_ending_at_most_one_past_it(
        tmp_path: Path, from_offset, end) -> None:
    """A snapshot ending at ``E`` holds the records below ``E`` (``OffsetAndEpoch`` of
    ``SnapshotPath``), so it can start a history read from offset ``from_offset + 1 >= E``; the
    choice is by end offset, not by epoch (epochs 1..3 here are all below every offset)."""
    d = _metadata_dir(tmp_path)
    for e, epoch in ((5, 1), (13, 2), (20, 3)):
        _snapshot(d, e, epoch)
    start, findings = kraft_start(find_kraft_files([d]), from_offset=from_offset)
    epoch = {5: 1, 13: 2, 20: 3}[end]
    assert (start.end_offset, Path(start.path).name, findings) == (end, kraft.checkpoint_name(end, epoch), [])


def test_nothing_at_all_starts_at_offset_0_without_a_finding() -> None:
    assert kraft_start(KraftFiles((), ())) == (KraftStart(None, 0, None), [])


@pytest.mark.parametrize("bases", [pytest.param((1,), id="one-segment-at-1"),
                                   pytest.param((50, 80), id="two-segments-from-50")])
def test_a_log_starting_past_0_without_a_usable_snapshot_is_a_gap_from_0(tmp_path: Path, bases) -> None:
    """Kafka's log starts at offset 0 or at a snapshot's end offset (``KafkaMetadataLog``:
    the log start offset is the oldest snapshot's end); with neither, offsets
    ``0 .. first base - 1`` are missing: a ``kraft_offset_gap`` naming the first segment, and
    the history starts at that segment's base."""
    d = _metadata_dir(tmp_path)
    for b in bases:
        (d / f"{b:020d}.log").write_bytes(b"")
    first = str(d / f"{bases[0]:020d}.log")
    start, findings = kraft_start(find_kraft_files([d]))
    assert start == KraftStart(None, bases[0], None)
    (gap,) = findings
    assert (gap.kind, gap.path, gap.position, gap.details) == ("kraft_offset_gap", first, 0,
                                                               {"expected": 0, "actual": bases[0]})
    assert gap.message == (f"metadata offsets 0..{bases[0] - 1} are missing: no snapshot holds them and the next "
                           f"segment present starts at {bases[0]}; the records between are not replayed (a segment "
                           "left out of the copy?)")


def test_a_log_from_0_needs_no_snapshot(tmp_path: Path) -> None:
    """The counter-case: a first segment at 0 is the start, whatever snapshots there are."""
    d = _metadata_dir(tmp_path)
    (d / "00000000000000000000.log").write_bytes(b"")
    _snapshot(d, 13, 1)
    assert kraft_start(find_kraft_files([d])) == (KraftStart(None, 0, None), [])


def test_damaged_snapshots_only_then_the_gap_from_0(tmp_path: Path) -> None:
    d = _metadata_dir(tmp_path)
    (d / kraft.checkpoint_name(13, 1)).write_bytes(b"\x00" * 7)
    (d / "00000000000000000013.log").write_bytes(b"")
    start, findings = kraft_start(find_kraft_files([d]))
    assert start == KraftStart(None, 13, None)
    assert (findings[-1].kind, findings[-1].details) == ("kraft_offset_gap", {"expected": 0, "actual": 13})
    assert any(f.is_error for f in findings[:-1])


# --- iter_kraft_records -----------------------------------------------------------------------

def _gaps(files: KraftFiles, start: KraftStart) -> list[Finding]:
    return [x for x in iter_kraft_records(files, start) if isinstance(x, Finding) and x.kind == "kraft_offset_gap"]


def test_offsets_missing_right_after_the_snapshot_name_it_and_later_ones_the_last_record(tmp_path: Path) -> None:
    """A segment starting past the snapshot's end: the snapshot holds the records below its end
    offset and the rest up to the segment are missing; a later gap follows the last record read."""
    d = _metadata_dir(tmp_path)
    snap = _snapshot(d, 13, 1)
    (d / "00000000000000000016.log").write_bytes(b"".join(history_batches(16, 17)))    # offset 16
    (d / "00000000000000000021.log").write_bytes(b"".join(history_batches(21)))
    files = find_kraft_files([d])
    start, _ = load_snapshot(str(snap))
    first, second = _gaps(files, start)
    assert (first.path, first.details) == (str(d / "00000000000000000016.log"), {"expected": 13, "actual": 16})
    assert first.message.startswith(f"metadata offsets 13..15 are missing: the snapshot {snap.name} holds the records "
                                    "below offset 13 and the next segment present starts at 16")
    assert (second.path, second.details) == (str(d / "00000000000000000021.log"), {"expected": 17, "actual": 21})
    assert second.message.startswith("metadata offsets 17..20 are missing: the records present end at offset 16 and "
                                     "the next segment present starts at 21")


def test_a_record_kafka_skips_does_not_end_its_segment(tmp_path: Path) -> None:
    """An unknown record type is a warning and the record kept raw (``MetadataRecordSerde`` of
    a newer Kafka); the records after it in the segment are read and applied."""
    d = _metadata_dir(tmp_path)
    after = kraft.build_metadata_batch([broker_registration(1, "a", 10), broker_registration(2, "b", 11)],
                                       base_offset=3, epoch=1, timestamp=6)
    (d / "00000000000000000000.log").write_bytes(_batch_with_an_unknown_record(0, 1) + after)
    items = list(iter_kraft_records(find_kraft_files([d]), KraftStart(None, 0, None)))
    assert [x.kind if isinstance(x, Finding) else (x[0].offset, x[0].name) for x in items] == [
        (0, "FeatureLevelRecord"), "kraft_unknown_record", (1, None), (2, "TopicRecord"),
        (3, "RegisterBrokerRecord"), (4, "RegisterBrokerRecord")]
