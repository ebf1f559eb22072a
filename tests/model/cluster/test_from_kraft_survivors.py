"""``cluster_state_from_kraft`` (``model/cluster/from_kraft.py``): the snapshot a point's image
starts from, the findings that concern the point, the records replayed to it, and the
controller when no ``LeaderChange`` replayed names it.

Kafka's rules: a snapshot holds the records below its end offset (``SnapshotPath``
``<endOffset>-<epoch>.checkpoint``, ``RawSnapshotReader.snapshotId``) and a broker's
``MetadataLoader`` starts from the newest one it has; its SNAPSHOT_HEADER's
``last_contained_log_timestamp`` dates it. The active controller is the Raft leader of the
epoch: a ``LeaderChange`` control record names it (``LeaderChangeMessage.leaderId``), and
``quorum-state`` (``FileQuorumStateStore.readElectionState``, ``ElectionState``) holds the
leader and epoch this node last knew, leaderId -1 meaning no leader known."""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.formats.errors import FormatError
from kreplica.formats.kraft import records as kraft
from kreplica.formats.kraft.quorum_state import parse_quorum_state
from kreplica.model.cluster import cluster_state_from_kraft, find_kraft_files
from tests.builders.kraft_metadata import SNAPSHOT_13, history_batches

T0 = 1_700_000_000_000     # history_batches stamps each batch T0 + its base offset


def _dir(root: Path, *, log: bytes | None = None, snapshots=(), quorum: bytes | None = None) -> Path:
    """``__cluster_metadata-0`` with ``log`` as its segment from 0, snapshots ``(end, epoch,
    time)`` of :data:`SNAPSHOT_13`'s records, and ``quorum`` as ``quorum-state``."""
    d = root / "__cluster_metadata-0"
    d.mkdir()
    if log is not None:
        (d / "00000000000000000000.log").write_bytes(log)
    for end, epoch, time in snapshots:
        (d / kraft.checkpoint_name(end, epoch)).write_bytes(kraft.build_snapshot(SNAPSHOT_13, epoch=epoch,
                                                                                 timestamp=time))
    if quorum is not None:
        (d / "quorum-state").write_bytes(quorum)
    return d


def _state(d: Path, **at):
    return cluster_state_from_kraft(find_kraft_files([d]), **at)


def _quorum(leader: int, epoch: int) -> bytes:
    """A v1 ``quorum-state`` as ``FileQuorumStateStore.writeElectionState`` writes it."""
    return (f'{{"leaderId":{leader},"leaderEpoch":{epoch},"votedId":-1,'
            f'"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}}').encode()


def _leader_change(leader: int, epoch: int, offset: int = 0) -> bytes:
    return kraft.build_control_batch([(kraft.LEADER_CHANGE, {"version": 0, "leader_id": leader,
                                                             "voters": ({"voter_id": 3000},),
                                                             "granting_voters": ()})],
                                     base_offset=offset, epoch=epoch, timestamp=T0 + offset)


# --- the snapshot a point starts from ---------------------------------------------------------

@pytest.mark.parametrize("at, position, used", [
    pytest.param({}, 15, "16", id="the-end-the-newest"),
    pytest.param({"at_offset": 15}, 15, "16", id="end-16-holds-offset-15"),
    pytest.param({"at_offset": 14}, 12, "13", id="end-16-past-offset-14"),
    pytest.param({"at_offset": 11}, -1, None, id="before-every-snapshot"),
    pytest.param({"at_time": 250}, 15, "16", id="time-after-both"),
    pytest.param({"at_time": 200}, 15, "16", id="time-equal-to-the-newest-s"),
    pytest.param({"at_time": 150}, 12, "13", id="time-between"),
    pytest.param({"at_time": 99}, -1, None, id="time-before-both"),
])
def test_a_point_starts_from_the_newest_snapshot_it_can_contain(tmp_path: Path, at, position, used) -> None:
    """Snapshots ending at 13 (stamped 100) and 16 (stamped 200), no log: the image at a point
    is the newest snapshot whose end is at most the offset + 1 and whose
    ``last_contained_log_timestamp`` is not later than the time; nothing when none is. The
    position is the snapshot's last offset, its end - 1."""
    d = _dir(tmp_path, snapshots=[(13, 1, 100), (16, 1, 200)])
    s = _state(d, **at)
    assert s.position == {"offset": position}
    assert [b.id for b in s.brokers] == ([] if used is None else [1, 2, 3])
    assert s.findings == ()


def test_a_damaged_newest_snapshot_gives_way_to_the_one_before(tmp_path: Path) -> None:
    """``MetadataLoader`` cannot load a snapshot that does not read; the newest one that does
    is the start, and the damaged one's error is reported."""
    d = _dir(tmp_path, snapshots=[(13, 1, 100)])
    (d / kraft.checkpoint_name(16, 1)).write_bytes(b"\x00" * 9)
    s = _state(d)
    assert s.position == {"offset": 12} and [b.id for b in s.brokers] == [1, 2, 3]
    assert s.findings and all(f.is_error for f in s.findings)
    assert {f.path for f in s.findings} == {str(d / kraft.checkpoint_name(16, 1))}


def test_a_log_record_stamped_at_the_time_asked_is_replayed(tmp_path: Path) -> None:
    """``--at-time T`` stops before the first record stamped later than ``T``: the batch at
    offset 13 stamped exactly ``T0 + 13`` is in, the one at 15 is not."""
    d = _dir(tmp_path, log=b"".join(history_batches()))
    assert _state(d, at_time=T0 + 13).position == {"offset": 14}
    assert _state(d, at_time=T0 + 14).position == {"offset": 14}


def test_the_state_names_the_files_it_came_from(tmp_path: Path) -> None:
    d = _dir(tmp_path, log=b"".join(history_batches()))
    files = find_kraft_files([d])
    assert cluster_state_from_kraft(files).source == files.source == str(d)


# --- findings concerning the point ------------------------------------------------------------

@pytest.mark.parametrize("at, expected_gap", [
    pytest.param({}, True, id="the-end"),
    pytest.param({"at_offset": 20}, True, id="past-the-gap"),
    pytest.param({"at_offset": 13}, True, id="at-the-first-missing-offset"),
    pytest.param({"at_offset": 12}, False, id="before-the-gap"),
])
def test_offsets_missing_after_the_point_do_not_concern_it(tmp_path: Path, at, expected_gap) -> None:
    """Offsets 13..15 missing from the log: the image at offset 12 and before is whole (a
    ``MetadataLoader`` at 12 has read nothing after it), so the gap is reported from offset 13."""
    d = _dir(tmp_path, log=b"".join(history_batches(0, 13)))
    (d / "00000000000000000016.log").write_bytes(b"".join(history_batches(16)))
    gaps = [f.details for f in _state(d, **at).findings if f.kind == "kraft_offset_gap"]
    assert gaps == ([{"expected": 13, "actual": 16}] if expected_gap else [])


# --- the controller ---------------------------------------------------------------------------

def _past_the_leader_change(leader: int, *, extra_epoch: int | None = None) -> bytes:
    """The log from 0: a LeaderChange of ``leader`` at epoch 1, then offsets 1..15 of the
    history (epoch 1), and with ``extra_epoch`` a record at 16 of that epoch, no LeaderChange."""
    log = _leader_change(leader, 1) + b"".join(history_batches(1, 16))
    if extra_epoch is not None:
        level = ("FeatureLevelRecord", 0, {"name": "metadata.version", "feature_level": 21})
        log += kraft.build_metadata_batch([level], base_offset=16, epoch=extra_epoch, timestamp=T0 + 16)
    return log


@pytest.mark.parametrize("leader, controller", [
    pytest.param(3000, 3000, id="leader-3000"),
    pytest.param(0, 0, id="node-0-is-a-leader"),
    pytest.param(-1, None, id="minus-1-is-no-leader"),
])
def test_a_leader_change_below_the_snapshot_names_the_controller_of_its_epoch(tmp_path: Path, leader,
                                                                            controller) -> None:
    """The snapshot at 13 is past the LeaderChange at 0 and the log after it (13..15, epoch 1)
    names no leader: the LeaderChange of that same epoch read below the snapshot does
    (``LeaderChangeMessage.leaderId``; -1 is no leader, as in ``ElectionState``)."""
    d = _dir(tmp_path, log=_past_the_leader_change(leader), snapshots=[(13, 1, 100)])
    s = _state(d)
    assert s.position == {"offset": 15}
    assert (s.controller.broker_id, s.controller.epoch) == (controller, 1)


def test_a_leader_change_of_an_earlier_epoch_names_no_controller(tmp_path: Path) -> None:
    """The counter-case: the replay reaches epoch 2 (offset 16) with no LeaderChange of it and no
    ``quorum-state``: the leader of epoch 1 is not epoch 2's, the controller is unknown."""
    d = _dir(tmp_path, log=_past_the_leader_change(3000, extra_epoch=2), snapshots=[(13, 1, 100)])
    s = _state(d)
    assert s.position == {"offset": 16}
    assert (s.controller.broker_id, s.controller.epoch) == (None, None)
    # replayed only to 15: epoch 1's LeaderChange names it
    assert (_state(d, at_offset=15).controller.broker_id, _state(d, at_offset=15).controller.epoch) == (3000, 1)


@pytest.mark.parametrize("quorum, at, controller", [
    pytest.param((3000, 1), {}, (3000, 1), id="same-epoch-at-the-end"),
    pytest.param((3000, 1), {"at_offset": 12}, (3000, 1), id="same-epoch-at-an-offset"),
    pytest.param((0, 1), {"at_offset": 12}, (0, 1), id="node-0-same-epoch"),
    pytest.param((3000, 2), {}, (3000, 2), id="later-epoch-at-the-end"),
    pytest.param((3000, 2), {"at_offset": 12}, (None, None), id="later-epoch-at-an-offset"),
    pytest.param((3000, 2), {"at_time": 100}, (None, None), id="later-epoch-at-a-time"),
    pytest.param((-1, 1), {}, (None, None), id="no-leader-known"),
    pytest.param((-1, 2), {}, (None, None), id="no-leader-known-later-epoch"),
])
def test_quorum_state_names_the_controller_of_the_epoch_reached(tmp_path: Path, quorum, at, controller) -> None:
    """A snapshot (epoch 1 by its name) and no log: the epoch reached is 1 and no LeaderChange
    is replayed. ``quorum-state`` (``ElectionState``: the leader this node last knew, -1 none)
    names epoch 1's leader; a later epoch's leader is the controller only at the end of the
    evidence (it may have been elected after the point asked for)."""
    d = _dir(tmp_path, snapshots=[(13, 1, 100)], quorum=_quorum(*quorum))
    s = _state(d, **at)
    assert s.position == {"offset": 12}
    assert (s.controller.broker_id, s.controller.epoch) == controller
    assert s.findings == ()


def test_quorum_state_says_nothing_when_nothing_was_replayed(tmp_path: Path) -> None:
    """No snapshot and no record: no epoch was reached, so ``quorum-state``'s leader is no
    controller of the (empty) image."""
    d = _dir(tmp_path, quorum=_quorum(3000, 3))
    s = _state(d)
    assert s.position == {"offset": -1}
    assert (s.controller.broker_id, s.controller.epoch) == (None, None)


@pytest.mark.parametrize("content, position", [
    pytest.param(b"{}", 0, id="no-data-version"),
    pytest.param(b'{"a\xff":1}', 3, id="not-utf8"),
])
def test_an_unreadable_quorum_state_is_a_warning_and_the_controller_unknown(tmp_path: Path, content,
                                                                           position) -> None:
    """``FileQuorumStateStore.readElectionState`` fails on the file; all ``cluster-state``
    wanted of it was the controller's id, so a warning with Kafka's reason and where, and no
    controller."""
    d = _dir(tmp_path, snapshots=[(13, 1, 100)], quorum=content)
    qs = str(d / "quorum-state")
    with pytest.raises(FormatError) as kafka:
        parse_quorum_state(content, path=qs)
    s = _state(d)
    assert (s.controller.broker_id, s.controller.epoch) == (None, None)
    (f,) = s.findings
    assert (f.kind, f.path, f.position, f.severity) == ("checkpoint_malformed", qs, position, "warning")
    assert f.message == (f"quorum-state cannot be read as Kafka reads it ({kafka.value.one_line()}); the "
                         "controller stays unknown")
    if position == 0:
        assert f"Error while reading the Quorum status from the file {qs}" in f.message
