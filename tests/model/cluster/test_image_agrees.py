"""``cluster-state --at X`` equals the timeline fold's image at X, in both modes: for every
fixture, the ZooKeeper oracle's histories (``../shared/oracle/zookeeper``) and the real data
directories of ``../shared/oracle/wild``. The two reach X differently: ``cluster-state`` replays
the tree (or the newest snapshot and the log) to X and builds the image once
(``ZkImage.from_tree``, ``KraftImage`` from that snapshot), the timeline applies every change
from its own start one at a time; one image, one ``apply``, so they must agree on every broker,
topic, partition, config and pending item.

Every zxid or offset the fold reaches is checked when the history is short; a long one (real
KRaft logs reach 140,000 offsets, and each ``cluster-state --at`` replays from a snapshot) is
checked at :data:`SAMPLES` points spread over it, its start and its end, to stay under a minute.
Without transaction logs a ZooKeeper timeline goes snapshot to snapshot (its steps are not
states ZooKeeper held), so those histories are checked at their end (the newest snapshot) only. A KRaft history
is checked on both sides of offsets missing from its copy (``kraft_offset_gap``): ``cluster-state``
starts from the newest snapshot at or before X, and the timeline bridges the gap with the same
snapshots (:func:`~kreplica.analysis.timeline.kraft._bridge`). The KRaft controller is
compared where the fold has one: ``cluster-state`` alone falls back to
``quorum-state`` for the Raft leader when the records replayed name none.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.analysis.timeline.kraft import iter_kraft_timeline
from kreplica.analysis.timeline.zookeeper import iter_zookeeper_timeline
from kreplica.formats.errors import FormatError
from kreplica.model.cluster import cluster_state_from_kraft, cluster_state_from_zk, find_kraft_files
from kreplica.model.cluster.zk_chroot import resolve_chroot
from kreplica.model.zookeeper import find_zk_files
from kreplica.model.zookeeper.replay import replay
from kreplica.report.schemas.cluster_state import cluster_state_to_dict
from tests.builders.real_kafka import recordings
from tests.conftest import FIXTURES, ORACLE, generated_fixtures
from tests.interop.wild_cases import WILD, wild_dirs

#: how many points of a long history are checked (besides its start and end)
SAMPLES = 3
#: a history with at most this many points is checked at every one
EVERY_POINT = 150


def _comparable(state, *, controller: bool = True) -> dict:
    doc = cluster_state_to_dict(state)
    del doc["source"]
    if not controller:
        del doc["controller"]
    return doc


def _points(points: list[int]) -> list[int]:
    if len(points) <= EVERY_POINT:
        return points
    step = len(points) / (SAMPLES + 1)
    return sorted({points[0], points[-1], *(points[int(step * i)] for i in range(1, SAMPLES + 1))})


def _zk_histories() -> list:
    cases = [pytest.param(FIXTURES / "timeline" / "zookeeper", id="fixtures/timeline/zookeeper")]
    cases += [pytest.param(r.metadata(r.description["points"][-1]), id=f"real-kafka/{r.name}")
              for r in recordings() if r.mode == "zookeeper"]
    oracle = ORACLE / "zookeeper"
    if oracle.is_dir():
        cases += [pytest.param(p, id=f"oracle/{p.name}") for p in sorted(oracle.iterdir()) if p.is_dir()]
    cases += [pytest.param(d.path, id=f"wild/{d.id}") for d in wild_dirs() if d.kind == "zk-data"]
    return cases


def _kraft_histories() -> list:
    cases = [pytest.param(p, id=str(p.relative_to(FIXTURES))) for p in generated_fixtures("__cluster_metadata-0")]
    # a real 4.4 cluster's: each recording's first controller at its last point (the longest history)
    for recording in recordings():
        if recording.mode == "kraft":
            path = recording.metadata(recording.description["points"][-1]) / "__cluster_metadata-0"
            cases.append(pytest.param(path, id=f"real-kafka/{recording.name}"))
    for d in wild_dirs():
        if d.kind == "kraft":
            cases += [pytest.param(p, id=f"wild/{d.id}") for p in sorted(d.path.rglob("__cluster_metadata-0"))]
    return cases


def _oracle_note(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} is absent (../shared/oracle lives beside the repository)")


@pytest.mark.parametrize("source", _zk_histories())
def test_zookeeper_cluster_state_is_the_fold_at_every_zxid(source: Path) -> None:
    _oracle_note(source)
    files = find_zk_files([source])
    folded: dict[int, dict] = {}
    roots: dict[int, str] = {}

    def watch(zxid, image):
        if image.root is not None:
            roots[zxid] = image.root
            folded[zxid] = _comparable(image.state(files.source, {"zxid": zxid}))

    try:
        for _ in iter_zookeeper_timeline(files, watch=watch):
            pass
    except FormatError as exc:
        pytest.skip(f"no ZooKeeper history to fold: {exc.one_line()}")
    if not folded:
        pytest.skip("the history never holds Kafka's znodes")
    points = sorted(folded)
    if not files.logs:   # snapshot to snapshot: the last step's image is the newest snapshot's
        state = replay(files)
        last = folded[points[-1]]
        doc = _comparable(cluster_state_from_zk(state, chroot=roots[points[-1]]))
        assert {**doc, "position": None} == {**last, "position": None}
        return
    for zxid in _points(points):
        state = replay(files, at_zxid=zxid)
        root = resolve_chroot(state.nodes, roots[zxid], where=f"zxid {zxid:#x}")
        assert _comparable(cluster_state_from_zk(state, chroot=root)) == folded[zxid], f"zxid {zxid:#x}"


@pytest.mark.parametrize("source", _kraft_histories())
def test_kraft_cluster_state_is_the_fold_at_every_offset(source: Path) -> None:
    _oracle_note(source)
    files = find_kraft_files([source])
    reached: list[int] = []
    for _ in iter_kraft_timeline(files, watch=lambda offset, _image: reached.append(offset)):
        pass
    reached = [o for o in reached if o >= 0]
    # and where the history jumps (a snapshot bridging a gap) and the offset after each jump
    jumps = [k for k in range(1, len(reached)) if reached[k] != reached[k - 1] + 1]
    points = set(_points(reached)) | {reached[j] for k in jumps for j in (k, k + 1) if j < len(reached)}
    if not points:
        pytest.skip("the metadata log holds no record")
    folded: dict[int, tuple[dict, bool]] = {}

    def watch(offset, image):   # a second fold, materialising the image only where it is checked
        if offset in points:
            held = image.controller_epoch is not None
            folded[offset] = (_comparable(image.state(files.source, {"offset": offset}, cluster_id=files.cluster_id),
                                          controller=held), held)

    for _ in iter_kraft_timeline(files, watch=watch):
        pass
    for offset in sorted(points):
        expected, with_controller = folded[offset]
        state = cluster_state_from_kraft(files, at_offset=offset)
        assert _comparable(state, controller=with_controller) == expected, f"offset {offset}"


def test_the_histories_are_found() -> None:
    """The parametrisation above is not empty where the evidence is: the fixtures always, the
    oracle and wild corpus when ``../shared`` is there."""
    assert len(_zk_histories()) >= 1 and len(_kraft_histories()) >= 1
    if WILD.is_dir():
        assert any(d.kind == "kraft" for d in wild_dirs())
