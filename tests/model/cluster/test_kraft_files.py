"""Where a KRaft metadata history is (``model/cluster/kraft_files.py``): ``KafkaRaftLog``'s file
names (``<20 digits>.log`` segments; ``<20 digits>-<10 digits>.checkpoint`` snapshots named by end
offset and epoch), the files Kafka deletes at start ignored (``.checkpoint.part``, ``.deleted``),
the cluster id of a ``meta.properties`` beside the directory or above it, ``quorum-state``; and the
words of the finding for offsets missing between them."""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.formats.errors import FormatError
from kreplica.model.cluster.kraft_files import KraftFiles, find_kraft_files, offset_gap

SEG = "{:020d}.log"
SNAP = "{:020d}-{:010d}.checkpoint"


def metadata_dir(root: Path, names: list[str], *, meta: str | None = "above") -> Path:
    d = root / "logs" / "__cluster_metadata-0"
    d.mkdir(parents=True)
    for n in names:
        (d / n).write_bytes(b"")
    if meta is not None:
        where = d.parent if meta == "above" else d
        (where / "meta.properties").write_text("version=1\nnode.id=1\n cluster.id = abc-DEF\n", encoding="utf-8")
    return d


def test_snapshots_and_segments_sorted_and_the_rest_ignored(tmp_path: Path) -> None:
    d = metadata_dir(tmp_path, [SEG.format(300), SEG.format(0), SNAP.format(250, 3), SNAP.format(120, 2),
                                SNAP.format(400, 4) + ".part", SEG.format(500) + ".deleted", "leader-epoch-checkpoint",
                                "quorum-state", "partition.metadata"])
    files = find_kraft_files([d])
    assert files == KraftFiles(
        ((120, 2, str(d / SNAP.format(120, 2))), (250, 3, str(d / SNAP.format(250, 3)))),
        ((0, str(d / SEG.format(0))), (300, str(d / SEG.format(300)))), "abc-DEF", str(d), str(d / "quorum-state"))


@pytest.mark.parametrize("meta, cluster_id", [("above", "abc-DEF"), ("beside", "abc-DEF"), (None, None)])
def test_the_cluster_id_comes_from_meta_properties_beside_or_above(tmp_path: Path, meta, cluster_id) -> None:
    d = metadata_dir(tmp_path, [SEG.format(0)], meta=meta)
    assert find_kraft_files([d]).cluster_id == cluster_id
    assert find_kraft_files([d / SEG.format(0)]).cluster_id == cluster_id


def test_files_given_one_by_one_and_the_source_names_them_all(tmp_path: Path) -> None:
    d = metadata_dir(tmp_path, [SEG.format(0), SNAP.format(7, 1), "quorum-state"])
    files = find_kraft_files([d / SNAP.format(7, 1), d / SEG.format(0)])
    assert (files.snapshots, files.segments) == (((7, 1, str(d / SNAP.format(7, 1))),), ((0, str(d / SEG.format(0))),))
    assert files.source == f"{d / SNAP.format(7, 1)}, {d / SEG.format(0)}"
    assert files.quorum_state is None     # found only in a directory read whole
    twice = find_kraft_files([d, d / SEG.format(0)])
    assert twice.segments == ((0, str(d / SEG.format(0))),)


def test_a_file_that_is_neither_or_a_missing_path_is_refused(tmp_path: Path) -> None:
    d = metadata_dir(tmp_path, ["leader-epoch-checkpoint"])
    with pytest.raises(FormatError) as other:
        find_kraft_files([d / "leader-epoch-checkpoint"])
    assert (other.value.reason, other.value.path) == (
        "not a KRaft metadata segment (<20 digits>.log) or snapshot (<20 digits>-<10 digits>.checkpoint)",
        str(d / "leader-epoch-checkpoint"))
    with pytest.raises(FormatError) as missing:
        find_kraft_files([tmp_path / "nope"])
    assert (missing.value.reason, missing.value.path) == ("no such file or directory", str(tmp_path / "nope"))
    # a directory with no metadata file is no error here: the history is empty
    assert find_kraft_files([d]).snapshots == () and find_kraft_files([d]).segments == ()


@pytest.mark.parametrize("expected, snapshot, before", [
    (120, "/x/00000000000000000120-0000000002.checkpoint",
     "the snapshot 00000000000000000120-0000000002.checkpoint holds the records below offset 120"),
    (120, None, "the records present end at offset 119"),
    (0, None, "no snapshot holds them"),
])
def test_the_gap_finding_says_what_holds_the_records_below_it(expected, snapshot, before) -> None:
    f = offset_gap(expected, 300, "/x/00000000000000000300.log", snapshot=snapshot)
    assert (f.kind, f.path, f.position, f.details) == ("kraft_offset_gap", "/x/00000000000000000300.log", 0,
                                                       {"expected": expected, "actual": 300})
    assert f.message == (f"metadata offsets {expected}..299 are missing: {before} and the next segment present "
                         "starts at 300; the records between are not replayed (a segment left out of the copy?)")
