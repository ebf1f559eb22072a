"""``fixtures/scenarios/unclean-with-groups`` end to end: its ``__consumer_offsets`` partitions
decode to the commits ``fixtures/generate.py`` wrote, and the consumer impact of the unclean
election (as ``timeline --log-dirs`` sees it: broker 1's log at the election) and of broker 2's
truncation (as ``truncate-plan`` sees it: broker 1's log now) is what Kafka's client rules give,
worked by hand in the generator's docstring and below.

The committed offsets are read here by a test-only replay (``tests/builders/group_offsets.py``); the
product's loader is ``kreplica.model.coordinator.replay``.
"""

from __future__ import annotations

import pytest

from kreplica.analysis.consumers.impact import (
    CONTINUES,
    FAILS,
    LOST_REPLICA,
    RESETS,
    SEEKS_TO_DIVERGENCE,
    STALLS,
    impacts,
    lost_range_of,
    new_leader,
)
from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.logdir.log_dir import scan_log_dir
from kreplica.model.log.partition_log import read_partition_log
from tests.conftest import FIXTURES
from tests.builders.group_offsets import read_committed_offsets

SCENARIO = FIXTURES / "scenarios" / "unclean-with-groups"


def replicas(broker: int) -> dict[str, object]:
    log_dir = scan_log_dir(SCENARIO / f"broker-{broker}")
    return {p.name: read_partition_log(p, log_dir, label=f"broker-{broker}") for p in log_dir.partitions}


def committed_offsets(broker: int) -> list[CommittedOffset]:
    return read_committed_offsets(SCENARIO / f"broker-{broker}")


def test_the_groups_decode_as_written() -> None:
    got = {(c.group, c.offset, c.leader_epoch, c.value_version, c.coordinator_partition)
           for c in committed_offsets(1)}
    assert got == {("billing", 115, 1, 3, 9), ("audit", 118, None, 2, 5), ("search", 110, None, 3, 6),
                   ("ledger", 100, 0, 3, 39), ("reports", 60, None, 1, 49), ("fresh", 108, 3, 3, 46)}
    # both brokers hold the same __consumer_offsets replicas
    def same(c: CommittedOffset) -> tuple:
        return c.group, c.offset, c.leader_epoch, c.record_offset, c.commit_timestamp, c.expire_timestamp
    assert sorted(map(same, committed_offsets(1))) == sorted(map(same, committed_offsets(2)))


def lost() -> object:
    return lost_range_of(replicas(2)["orders-0"], 100, 120)


def by_group(found) -> dict:
    return {i.committed.group: i for i in found}


def test_the_unclean_election_as_timeline_sees_it() -> None:
    # broker 1 at the election: log end 100, epoch 3 from 100; its own 100-109 are the later copy
    leader = new_leader(replicas(1)["orders-0"], leader_epoch=3, log_end_offset=100)
    assert (leader.log_end_offset, leader.later_log_end) == (100, 110)
    found = impacts(committed_offsets(1), "orders", 0, lost(), leader, event="unclean election")
    assert [(i.committed.group, i.at_risk, i.consumed_and_lost) for i in found] == [
        ("audit", True, 18), ("billing", True, 15), ("search", True, 10),
        ("fresh", False, 0), ("ledger", False, 0), ("reports", False, 0)]
    g = by_group(found)
    assert g["fresh"].committed_after_event
    # billing by its epoch (broker 2 wrote 114 at epoch 1), audit and search by their offsets
    # above broker 1's log end at the election: all read broker 2's records
    assert {n: g[n].read_from for n in ("billing", "audit", "search")} == dict.fromkeys(
        ("billing", "audit", "search"), LOST_REPLICA)
    # billing: 2.3+ validates epoch 1: (0, 100) < 115, seeks to 100 (2.3-2.5 and 2.6+ alike but
    # under none, where 2.3-2.5 stall: the last four rows)
    validated = [(str(b.clients_from), b.outcome.action, b.outcome.resumes_at) for b in g["billing"].behaviours[-4:]]
    assert validated == [("2.3.0", SEEKS_TO_DIVERGENCE, 100), ("2.3.0", STALLS, None),
                         ("2.6.0", SEEKS_TO_DIVERGENCE, 100), ("2.6.0", FAILS, None)]
    # search (no epoch): 110 is above the log end at the election (100); if producers wrote past
    # 110 first it continues there and skips 100-109, all shown by broker 1's later records
    assert (g["search"].reused_offsets, g["search"].reused_seen) == (10, 10)
    writes_first = g["search"].behaviours[-1].outcome
    assert (writes_first.action, writes_first.records_skipped, writes_first.records_skipped_up_to) == (CONTINUES, 10, 10)


@pytest.mark.parametrize("group, actions", [
    # 115 > broker 1's log end 110: out of range for old clients; 2.3+ seeks to 100
    pytest.param("billing", [RESETS, RESETS, FAILS, CONTINUES, SEEKS_TO_DIVERGENCE, STALLS, SEEKS_TO_DIVERGENCE,
                             FAILS], id="billing"),
    # at the log end without an epoch: every client continues, past 100-109 it never reads
    pytest.param("search", [CONTINUES], id="search"),
    pytest.param("ledger", [CONTINUES, CONTINUES], id="ledger"),
])
def test_the_truncation_as_truncate_plan_sees_it(group: str, actions: list[str]) -> None:
    leader = new_leader(replicas(1)["orders-0"], leader_epoch=3)
    found = by_group(impacts(committed_offsets(1), "orders", 0, lost(), leader, event="truncation of broker-2"))
    assert [b.outcome.action for b in found[group].behaviours] == actions
    if group == "search":
        # broker 1 now ends at 110: without an epoch or the event's time, search may have read
        # either broker's 100-109; 10 is the most it lost
        o = found[group].behaviours[0].outcome
        assert (o.resumes_at, o.records_skipped, found[group].consumed_and_lost) == (110, 10, 10)
        assert found[group].read_from is None


# -- the events of the three commands, through their adapters -------------------------------------
def orders(broker: int):
    return replicas(broker)["orders-0"]


def summary(found) -> list[tuple]:
    return [(i.committed.group, i.at_risk, i.read_from, i.consumed_and_lost) for i in found]


def test_truncate_plan_adapter() -> None:
    from kreplica.analysis.consumers.truncation import truncation_impacts
    from kreplica.analysis.replication.truncation import plan_truncations
    from kreplica.model.versions import DEFAULT_VERSION, Protocol

    logs = [orders(1), orders(2)]
    plans = plan_truncations(logs, protocol=Protocol.DIVERGING_EPOCH, kafka_version=DEFAULT_VERSION)
    found = truncation_impacts(plans, logs, committed_offsets(1))
    assert {i.event for i in found} == {"broker-2's truncation to 100"}
    assert summary(found)[:3] == [("audit", True, LOST_REPLICA, 18), ("billing", True, LOST_REPLICA, 15),
                                  ("search", True, None, 10)]
    assert truncation_impacts(plans, logs, [c for c in committed_offsets(1) if c.topic != "orders"]) == []


def test_truncate_plan_adapter_per_follower_and_version() -> None:
    from kreplica.analysis.consumers.truncation import truncation_impacts
    from kreplica.analysis.replication.truncation import plan_truncations
    from kreplica.model.versions import KafkaVersion, Protocol

    v2_2 = KafkaVersion(2, 2)
    # two followers that lose the same records, one that loses nothing (a copy of the leader)
    logs = [orders(1), orders(2), orders(2).relabelled("broker-3"), orders(1).relabelled("broker-4")]
    plans = plan_truncations(logs, protocol=Protocol.KIP279, kafka_version=v2_2)
    found = truncation_impacts(plans, logs, committed_offsets(1), kafka_version=v2_2)
    assert sorted({i.event for i in found}) == ["broker-2's truncation to 100", "broker-3's truncation to 100"]
    assert len(found) == 12
    # a 2.2 leader serves no OffsetsForLeaderEpoch v3: no client validates
    assert all(b.outcome.validation is None for i in found for b in i.behaviours)


def test_truncate_plan_adapter_counts_what_a_leader_behind_its_follower_costs() -> None:
    # broker 2 (latest epoch 1) leads broker 1 (epoch 3, 100-109 committed): it can lead only once
    # elected at epoch 4, registered at its log end 120 (Partition.makeLeader); broker 1 asks for
    # epoch 3, is told (1, 120) (LeaderEpochFileCache.endOffsetFor: the floor entry, ending where
    # epoch 4 starts) and truncates to the end of its own epoch 0, 100: fresh read 100-107 (epoch 3)
    from kreplica.analysis.consumers.truncation import truncation_impacts
    from kreplica.analysis.replication.truncation import plan_truncations
    from kreplica.model.versions import DEFAULT_VERSION, Protocol

    logs = [orders(2), orders(1)]
    (plan,) = plan_truncations(logs, protocol=Protocol.DIVERGING_EPOCH, kafka_version=DEFAULT_VERSION)
    assert (plan.elected.epoch, plan.elected.start_offset, plan.elected.given) == (4, 120, False)
    assert [(r.requested_epoch, r.leader_epoch, r.end_offset) for r in plan.rounds][0] == (3, 1, 120)
    assert (plan.truncate_to, plan.discarded_records, plan.committed_loss, plan.heals) == (100, 10, True, True)
    found = {i.committed.group: i for i in truncation_impacts([plan], logs, committed_offsets(1))}
    assert (found["fresh"].lost.first_offset, found["fresh"].lost.end_offset) == (100, 110)
    assert (found["fresh"].read_from, found["fresh"].consumed_and_lost) == (LOST_REPLICA, 8)
    # billing read broker 2's 100-114, which broker 2 still leads with: nothing lost, nothing moves
    assert (found["billing"].read_from, found["billing"].at_risk) == ("new_leader", False)


def test_timeline_adapter() -> None:
    from kreplica.analysis.consumers.elections import election_loss_impacts
    from kreplica.analysis.timeline.events import PartitionEvent
    from kreplica.analysis.timeline.evidence import join_partition
    from kreplica.analysis.timeline.zookeeper import iter_zookeeper_timeline
    from kreplica.model.zookeeper import find_zk_files

    events = [ev for ev in iter_zookeeper_timeline(find_zk_files([SCENARIO / "zookeeper"]))
              if isinstance(ev, PartitionEvent)]
    logs = {1: orders(1), 2: orders(2)}
    (loss,) = join_partition(events, logs).losses

    def election_impacts(loss, logs, offsets):   # what the timeline's join (analysis/timeline/analysis.py) asks
        return election_loss_impacts((loss.topic, loss.partition), loss.old_leader, loss.new_leader, logs, offsets,
                                     leader_epoch=loss.leader_epoch, first_lost_offset=loss.first_lost_offset,
                                     end_offset=loss.end_offset, event_time=loss.time)

    found = election_impacts(loss, logs, committed_offsets(1))
    assert {i.event for i in found} == {"the unclean election of broker 1 at epoch 3"}
    assert summary(found) == [("audit", True, LOST_REPLICA, 18), ("billing", True, LOST_REPLICA, 15),
                              ("search", True, LOST_REPLICA, 10), ("fresh", False, "new_leader", 0),
                              ("ledger", False, None, 0), ("reports", False, None, 0)]
    assert found[0].leader.log_end_offset == 100 and found[0].leader.later_log_end == 110
    del logs[2]
    assert election_impacts(loss, logs, committed_offsets(1)) == []


def test_plan_elect_adapter() -> None:
    from kreplica.analysis.consumers.elections import leader_change_impacts
    from kreplica.analysis.election.scenarios import Scenario, plan_elections
    from kreplica.model.cluster import load_cluster_state

    state = load_cluster_state([str(SCENARIO / "zookeeper")])
    plan = plan_elections(state, Scenario((1,), (), None, False, "yes"), None)
    (election,) = plan.elections
    assert (election.before.leader, election.after.leader, election.unclean) == (1, 2, True)
    found = leader_change_impacts(election.key, election.before.leader, election.after.leader,
                                  {1: orders(1), 2: orders(2)}, committed_offsets(1),
                                  leader_epoch=election.after.leader_epoch, unclean=election.unclean,
                                  kafka_version=plan.kafka_version)
    assert {i.event for i in found} == {"the unclean election of broker 2 at epoch 4"}
    # broker 1 keeps 100-109 of epoch 3 different from broker 2's: fresh read 100-107 of them
    # (epoch 3) and KIP-320 does not notice (epoch 3 ends at 120 on broker 2, past 108); billing
    # (epoch 1) and audit (past broker 1's end) read broker 2's records; search may have read either
    assert summary(found) == [("fresh", True, LOST_REPLICA, 8), ("search", True, None, 10),
                              ("audit", False, "new_leader", 0), ("billing", False, "new_leader", 0),
                              ("ledger", False, None, 0), ("reports", False, None, 0)]
    fresh = found[0].behaviours
    assert {(b.outcome.action, b.outcome.records_skipped) for b in fresh} == {(CONTINUES, 8)}
    assert fresh[-1].outcome.validation.end_offset == 120


# -- issue 27 §7: the adapters' decisions the mutation run found untested --------------------------
def plan_elect(replicas, *, old: int = 1, new: int = 2, unclean: bool = True, kafka_version=None):
    from kreplica.analysis.consumers.elections import leader_change_impacts
    from kreplica.model.versions import DEFAULT_VERSION

    return leader_change_impacts(("orders", 0), old, new, replicas, committed_offsets(1), leader_epoch=4,
                                 unclean=unclean, kafka_version=kafka_version or DEFAULT_VERSION)


@pytest.mark.parametrize("old, new, brokers", [
    pytest.param(1, 2, (1,), id="the new leader's replica missing"),
    pytest.param(1, 2, (2,), id="the old leader's replica missing"),
    pytest.param(2, 2, (1, 2), id="the leader does not change"),
])
def test_plan_elect_adapter_needs_both_replicas_and_a_change(old, new, brokers) -> None:
    assert plan_elect({b: orders(b) for b in brokers}, old=old, new=new) == []


def test_plan_elect_adapter_names_a_clean_election_and_loads_the_leader_as_its_version() -> None:
    """A clean election is "the election of broker N at epoch E"; the new leader is loaded as the
    cluster's Kafka version (a 2.2 leader serves no OffsetsForLeaderEpoch v3: KIP-320 needs 2.3)."""
    from kreplica.model.versions import KafkaVersion

    v2_2 = KafkaVersion(2, 2)
    found = plan_elect({1: orders(1), 2: orders(2)}, unclean=False, kafka_version=v2_2)
    assert {i.event for i in found} == {"the election of broker 2 at epoch 4"}
    assert {i.leader.kafka_version for i in found} == {v2_2}
    assert all(b.outcome.validation is None for i in found for b in i.behaviours)


def _commit(offset: int, *, epoch: int | None = None, at: int = 1_700_000_000_000) -> CommittedOffset:
    return CommittedOffset("g", "orders", 0, offset, epoch, "", at, None, 0, 7, "broker-1", 3 if epoch is not None else 2)


def _unclean(tmp_path, offsets, *, third: bool = False, event_time=None, kafka_version=None, third_options=None):
    """Broker 2 led epoch 1 and wrote 100-119; broker 1, elected uncleanly at epoch 2, held
    ``new_batches``; with ``third``, broker 3 followed broker 1 and holds 100-109 of epoch 2 it wrote since."""
    from kreplica.analysis.consumers.elections import election_loss_impacts
    from kreplica.model.versions import DEFAULT_VERSION
    from tests.builders.replicas import replica_log

    old = replica_log(tmp_path, 2, [(0, 100, 0, "a"), (100, 20, 1, "b")], hw=120, checkpoint=[(0, 0), (1, 100)])
    new = replica_log(tmp_path, 1, [(0, 100, 0, "a"), *offsets["new"]], hw=None, checkpoint=offsets["epochs"])
    replicas = {1: new, 2: old}
    if third:
        replicas[3] = replica_log(tmp_path, 3, [(0, 100, 0, "a"), (100, 10, 2, "c")], hw=None,
                                  **(third_options or {"checkpoint": [(0, 0), (2, 100)]}))
    return election_loss_impacts(("orders", 0), 2, 1, replicas, offsets["commits"], leader_epoch=2,
                                 first_lost_offset=100, end_offset=120, event_time=event_time,
                                 kafka_version=kafka_version or DEFAULT_VERSION)


def test_timeline_adapter_takes_the_later_log_end_from_another_replica_of_the_new_lineage(tmp_path) -> None:
    """``new_leader(later=...)``: broker 1's files end where it was elected (100), broker 3 (its
    follower, epochs 0@0 2@100 as broker 1 registered them, KAFKA-7415) shows 100-109 written since;
    broker 2, the lost replica, is another lineage and is not a later copy. A commit at 105
    without epoch is above the log end at the election: 5 reused offsets, all seen in broker 3."""
    found = _unclean(tmp_path, {"new": [], "epochs": [(0, 0)], "commits": [_commit(105)]}, third=True)
    (i,) = found
    assert (i.leader.log_end_offset, i.leader.later_log_end, i.reused_offsets, i.reused_seen) == (100, 110, 5, 5)
    without = _unclean(tmp_path / "2", {"new": [], "epochs": [(0, 0)], "commits": [_commit(105)]})
    assert (without[0].leader.later_log_end, without[0].reused_seen) == (None, None)


def test_timeline_adapter_loads_the_leader_as_its_version(tmp_path) -> None:
    from kreplica.model.versions import KafkaVersion

    v2_2 = KafkaVersion(2, 2)
    (i,) = _unclean(tmp_path, {"new": [], "epochs": [(0, 0)], "commits": [_commit(105, epoch=1)]}, kafka_version=v2_2)
    assert i.leader.kafka_version == v2_2
    assert all(b.outcome.validation is None for b in i.behaviours)


@pytest.mark.parametrize("event_time, expected", [
    pytest.param(1_700_000_000_001, (LOST_REPLICA, 5), id="committed before the election: broker 2's records"),
    pytest.param(1_700_000_000_000, (None, 5), id="committed at the election time: either history"),
    pytest.param(None, (None, 5), id="no election time: either history"),
])
def test_timeline_adapter_dates_a_commit_by_the_election_time(tmp_path, event_time, expected) -> None:
    """Broker 1 held its own 100-109 (epoch 0, written before broker 2 led epoch 1): a commit at 105
    without epoch is below both log ends, so only its time tells whose 104 it read: made before
    the unclean election, on broker 2's history."""
    (i,) = _unclean(tmp_path, {"new": [(100, 10, 0, "d")], "epochs": [(0, 0)], "commits": [_commit(105)]},
                    event_time=event_time)
    assert i.leader.log_end_offset == 110
    assert (i.read_from, i.consumed_and_lost) == expected


def test_truncate_plan_adapter_takes_the_partition_from_the_leader(tmp_path) -> None:
    """``replicas[0]`` leads and names the partition: a follower copied to a directory that names
    none (``require_one_partition`` lets it through) still truncates the leader's ``orders-0``;
    without the leader's name there is no partition to join groups with."""
    import shutil

    from kreplica.analysis.consumers.truncation import truncation_impacts
    from kreplica.analysis.replication.truncation import plan_truncations
    from kreplica.model.logdir.log_dir import find_log_dirs
    from kreplica.model.versions import DEFAULT_VERSION, Protocol

    copy = tmp_path / "broker-2-copy"
    shutil.copytree(SCENARIO / "broker-2" / "orders-0", copy)
    (copy_dir,) = find_log_dirs([str(copy)])
    follower = read_partition_log(copy_dir.partitions[0], copy_dir, label="broker-2")
    assert (orders(1).key, follower.key) == (("orders", 0), None)
    logs = [orders(1), follower]
    plans = plan_truncations(logs, protocol=Protocol.DIVERGING_EPOCH, kafka_version=DEFAULT_VERSION)
    found = truncation_impacts(plans, logs, committed_offsets(1))
    assert summary(found)[:3] == [("audit", True, LOST_REPLICA, 18), ("billing", True, LOST_REPLICA, 15),
                                  ("search", True, None, 10)]
    assert truncation_impacts(plans, logs[::-1], committed_offsets(1)) == []


@pytest.mark.parametrize("version, later", [
    pytest.param("2.5", None, id="2.5 recovers broker 3 without epoch 0: another lineage"),
    pytest.param("3.9", 110, id="a current broker re-adds epoch 0: the same lineage"),
])
def test_timeline_adapter_loads_the_later_copies_as_its_version(tmp_path, version, later) -> None:
    """KAFKA-10432: broker 3 without a leader-epoch-checkpoint, recovered from offset 0 after an
    unclean shutdown: a 2.1.1-2.6 broker's ``LogSegment.recover`` never re-adds the epoch-0 entry
    (cache 2@100), a current one does (0@0 2@100, which holds broker 1's 0@0 2@100)."""
    from kreplica.model.versions import parse_kafka_version

    (i,) = _unclean(tmp_path, {"new": [], "epochs": [(0, 0)], "commits": [_commit(105)]}, third=True,
                    kafka_version=parse_kafka_version(version),
                    third_options={"checkpoint": None, "clean": False, "recovery_point": 0})
    assert (i.leader.log_end_offset, i.leader.later_log_end) == (100, later)


def test_truncate_plan_loads_the_leader_as_its_version() -> None:
    """``truncate-plan --kafka-version 2.2``: the leader is a 2.2 broker, which serves no
    OffsetsForLeaderEpoch v3 (``OffsetFetcherUtils.hasUsableOffsetForLeaderEpochVersion``), so no
    client validates; billing (epoch 1, at 115 past the log end 110) gets OFFSET_OUT_OF_RANGE, or
    continues when producers wrote past 115 first, and no client seeks to the divergence point."""
    from kreplica.analysis.consumers.truncation import analyze_truncations
    from kreplica.model.versions import KafkaVersion, Protocol

    v2_2 = KafkaVersion(2, 2)
    found = analyze_truncations([orders(1), orders(2)], protocol=Protocol.KIP279, kafka_version=v2_2,
                                committed=lambda: committed_offsets(1)).impacts
    assert {i.leader.kafka_version for i in found} == {v2_2}
    billing = by_group(found)["billing"]
    assert {b.outcome.validation for b in billing.behaviours} == {None}
    assert {b.outcome.action for b in billing.behaviours} == {RESETS, FAILS, CONTINUES}
