"""Real KRaft metadata directories (``../shared/oracle/wild/``, see its README): a snapshot past
the last LeaderChange, offsets missing between a snapshot and the next segment, a metadata
directory whose files are all empty, leaderless epoch bumps at a broker's fencing, and planning
on a cluster whose only broker is down."""

from __future__ import annotations

import pytest

from tests.interop.wild_cases import run, wild_dir

pytestmark = pytest.mark.interop

#: log from offset 0 and snapshots at 7205 and 14403: the LeaderChange lies below the newest one;
#: quorum-state: leaderId 1, leaderEpoch 1
PAST_LEADER_CHANGE = ("stonesy88__shadow-kafka", "c219d4b/kafka-data")
#: snapshots only (epochs 1, 2 and 3), no segment; quorum-state: leaderId 1, leaderEpoch 3
SNAPSHOTS_ONLY = ("qkrckstjq__spring-kafka", "57423fa/data")
#: the newest snapshot ends at 136814, the first segment present starts at 140971 (the 4 MiB+
#: 00000000000000000000.log is absent from the copy)
GAP = ("Dung1109__kafka-spring", "1087df1/kafka1/data")
#: every file of __cluster_metadata-0 is empty (0 bytes)
ALL_EMPTY = ("HotoMazur__library", "b9905ae/data")
#: a single broker shut down (controlled) and fenced, three times: the fencing rewrites every
#: leaderless partition with leader -1 and a new epoch
FENCED = ("greenlemonT__kafka-temp", "0f4b018/data/kafka")
#: a single broker, fenced at the end: no live broker
NONE_ALIVE = ("Balaji-MohanAG__Kirana-store", "1d17b31/kafka/data")


def test_the_controller_comes_from_quorum_state_when_the_log_after_the_snapshot_names_none() -> None:
    ran = run("cluster-state", wild_dir(*PAST_LEADER_CHANGE))
    (state,) = ran.of_type("cluster_state")
    assert state["controller"] == {"broker_id": 1, "epoch": 1}


@pytest.mark.parametrize(("at", "controller"), [
    pytest.param(None, {"broker_id": 1, "epoch": 3}, id="end-epoch-3"),
    pytest.param(50000, {"broker_id": None, "epoch": None}, id="epoch-2-quorum-state-says-3"),
])
def test_quorum_state_names_the_leader_of_its_own_epoch_only(at, controller) -> None:
    args = ["cluster-state", wild_dir(*SNAPSHOTS_ONLY)] + (["--at-offset", at] if at is not None else [])
    (state,) = run(*args).of_type("cluster_state")
    assert state["controller"] == controller


@pytest.mark.parametrize("command", ["cluster-state", "timeline"])
def test_offsets_missing_between_the_snapshot_and_the_next_segment_are_reported(command) -> None:
    ran = run(command, wild_dir(*GAP))
    (gap,) = [f for f in ran.of_type("finding") if f["kind"] == "kraft_offset_gap"]
    assert (gap["expected"], gap["actual"], gap["severity"]) == (136814, 140971, "warning")
    assert gap["path"].endswith("00000000000000140971.log")


def test_a_log_that_starts_where_its_snapshot_ends_has_no_gap() -> None:
    assert "kraft_offset_gap" not in run("cluster-state", wild_dir(*PAST_LEADER_CHANGE)).finding_kinds


@pytest.mark.parametrize("command", [pytest.param(["cluster-state"], id="cluster-state"),
                                     pytest.param(["timeline"], id="timeline"),
                                     pytest.param(["plan-elect"], id="plan-elect"),
                                     pytest.param(["plan-reassign", "verify"], id="plan-reassign")])
def test_a_metadata_directory_of_empty_files_is_no_evidence(command) -> None:
    ran = run(command[0], wild_dir(*ALL_EMPTY), *command[1:])
    assert ran.exit_code == 2 and ran.stdout == ""
    assert "no KRaft metadata records" in ran.stderr or "no record at all" in ran.stderr


def test_leaderless_epoch_bumps_at_a_fencing_are_classified() -> None:
    ran = run("timeline", wild_dir(*FENCED))
    events = ran.of_type("partition_event")
    assert [e for e in events if e["cause"] == "unknown"] == []
    bumps = [e for e in events if e["before"] and e["before"]["leader"] == -1 and e["after"]["leader"] == -1]
    assert len(bumps) == 154     # each leaderless partition at each of the three fencings
    assert {e["cause"] for e in bumps} == {"controlled_shutdown"}
    assert all(e["after"]["leader_epoch"] == e["before"]["leader_epoch"] + 1 for e in bumps)


def test_rebalance_with_no_live_broker_says_so() -> None:
    ran = run("plan-reassign", wild_dir(*NONE_ALIVE), "rebalance")
    assert ran.exit_code == 2 and ran.stdout == ""
    assert "no live broker in the evidence (known but not alive: 1)" in ran.stderr
    assert "every broker would be removed" not in ran.stderr
