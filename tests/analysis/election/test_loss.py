"""The data-loss ranking on the replication scenario fixtures (``fixtures/scenarios``), with a
cluster state built to match. Expected numbers are worked out from the §1.4 lookup and §3.3
decision tables of kafka-algorithms (as in test_replication_scenarios.py)."""

from __future__ import annotations

from kreplica.analysis.election.common import OFFLINE, Election
from kreplica.analysis.election.loss import election_json, rank_candidates
from kreplica.analysis.election.scenarios import Scenario, plan_elections
from kreplica.model.logdir.log_dir import scan_log_dir
from kreplica.model.log.partition_log import read_partition_log
from kreplica.model.versions import parse_kafka_version
from tests.builders.cluster import cluster, part
from tests.conftest import FIXTURES

# three-replicas: broker 1 = 0-14 (epochs 0@0, 2@10; HW 15); broker 2 = 0-11 (0@0, 1@10; HW 10);
# broker 3 = 0-8 (0@0, 1@6; HW 6). Batches: 1 [0-4][5-9][10-14], 2 [0-4][5-9][10-11], 3 [0-4][5][6-8].


def evidence(scenario: str, brokers):
    out = {}
    for b in brokers:
        log_dir = scan_log_dir(FIXTURES / "scenarios" / scenario / f"broker-{b}")
        pdir = next(p for p in log_dir.partitions if p.name == "orders-0")
        out[b] = read_partition_log(pdir, log_dir)
    return out


def rank(state, scenario):
    plan = plan_elections(state, scenario)
    (e,) = plan.elections
    return rank_candidates(e, evidence("three-replicas", (1, 2, 3)), kafka_version=plan.kafka_version,
                           online=plan.online_after)


def test_ranking_names_the_replica_that_loses_nothing_committed() -> None:
    # orders-0 is offline with ISR [3] only and 3 alive: the controller elects 3 cleanly.
    r = rank(cluster({"orders": [part(0, [3, 2, 1], -1, [3])]}, alive=(1, 2, 3)), Scenario())
    # KIP-966 order: last epoch 2 (broker 1) before 1 (brokers 2, 3); then LEO 12 (2) before 9 (3)
    assert [c.broker for c in r.candidates] == [1, 2, 3]
    assert [(c.last_epoch, c.log_end_offset) for c in r.candidates] == [(2, 15), (1, 12), (1, 9)]
    c1, c2, c3 = r.candidates
    # 1 leads: 2 asks for epoch 1, 1 answers (0, 10) -> 2 keeps 0-9, loses 10-11 (above its HW 10);
    # 3 asks for epoch 1, answer (0, 10); 3's own end for epoch 0 is 6 -> truncates to 6: loses 6-8
    # (above its HW 6). Nothing committed.
    assert [(x.broker, x.records, x.ranges, x.committed) for x in c1.losses] == \
        [(2, 2, ((10, 11),), False), (3, 3, ((6, 8),), False)]
    assert not c1.committed_loss
    # 2 leads: 1 asks for epoch 2, 2 answers (1, 12); 1's own end for epoch 1 is (0, 10) -> to 10,
    # then epoch 0 -> (0, 10): 1 loses 10-14, below its HW 15: committed. 3 asks for epoch 1, 2
    # answers (1, 12), 3's own end for 1 is 9: min(9, 12, 9) = 9, no truncation.
    assert [(x.broker, x.records, x.committed) for x in c2.losses] == [(1, 5, True), (3, 0, False)]
    # 3 leads: 1 truncates to 6 (epoch 0 ends at 6 on 3), at the batch holding 6 -> loses 5-14;
    # 2 asks for epoch 1, 3 answers (1, 9): truncates to 9 -> the batch 5-9 goes: 5-11. Both committed.
    assert [(x.broker, x.ranges, x.committed) for x in c3.losses] == [(1, ((5, 14),), True), (2, ((5, 11),), True)]
    assert r.best == 1 and r.recovery_choice == 1 and r.planned_leader == 3
    # 1 is alive but out of sync: an unclean election, with 3 (live ISR) and 2 (ahead of 1 in
    # [3,2,1]) stopped first
    assert r.election_type == "unclean"
    assert "stop brokers [2, 3]" in r.steps[0]
    assert election_json([r]) == {"partitions": [{"topic": "orders", "partition": 0}]}


def test_best_is_chosen_among_replicas_that_can_lead() -> None:
    # replicas [2,3,1], all in the ISR, leader 1 fails: the controller elects 2. Broker 1 ranks
    # first but is dead; of 2 (5 committed records lost) and 3 (17) the best is 2 — what the
    # controller does anyway: no steps.
    r = rank(cluster({"orders": [part(0, [2, 3, 1], 1, [1, 2, 3])]}, alive=(1, 2, 3)), Scenario(fail=(1,)))
    assert r.recovery_choice == 1 and r.best == 2 and r.planned_leader == 2
    assert not r.candidates[0].electable
    assert r.election_type is None and r.steps[0].startswith("none")
    assert election_json([r]) == {"partitions": []}


# Hand-built elections: ``after`` is the partition record the ranking advises on, the evidence the
# three-replicas fixture above (broker 1 loses nothing committed as leader; 2 and 3 do).

def ranked(after, online, brokers=(1, 2, 3)):
    e = Election(("orders", 0), OFFLINE, after, after, True, False, "", "")
    return rank_candidates(e, evidence("three-replicas", brokers), kafka_version=parse_kafka_version("3.9"),
                           online=frozenset(online))


UNCLEAN_COMMAND = ("kafka-leader-election.sh --bootstrap-server HOST:PORT --election-type unclean "
                   "--path-to-json-file FILE (or set unclean.leader.election.enable=true on the topic)")


def test_candidates_carry_rank_watermark_isr_and_committed_loss() -> None:
    """KIP-966's recovery order numbered from 1 (the first replica the controller would recover
    from); each candidate keeps the high watermark its checkpoint recorded (HW 15, 10, 6 in the
    fixture) and whether it is in the ISR; committed loss is the §3.3 "below a high watermark" test."""
    r = ranked(part(0, [1, 2, 3], 3, [3]), (1, 2, 3))
    assert [(c.broker, c.rank, c.high_watermark, c.in_isr) for c in r.candidates] == \
        [(1, 1, 15, False), (2, 2, 10, False), (3, 3, 6, True)]
    assert [c.committed_loss for c in r.candidates] == [False, True, True]
    # the protocol a 3.9 follower truncates with (KIP-595's DivergingEpoch in Fetch, 2.8+)
    assert r.protocol == "diverging-epoch"


def test_preferred_replica_in_the_isr_is_reached_by_a_preferred_election() -> None:
    """``PreferredReplicaPartitionLeaderElectionStrategy``: the leader becomes ``A[0]`` iff it is
    live and in the ISR (spec §4.3); ``kafka-leader-election.sh`` (``LeaderElectionCommand``)
    runs it with ``--election-type preferred``."""
    r = ranked(part(0, [1, 2, 3], 2, [1, 2, 3]), (1, 2, 3))
    assert r.best == 1 and r.election_type == "preferred"
    assert r.steps == ("kafka-leader-election.sh --election-type preferred --path-to-json-file FILE "
                       "(broker 1 is the preferred replica and in the ISR)",)
    # counter-case: broker 1 in the ISR but not first in the assignment: no preferred election
    # elects it; the leader ahead of it is stopped instead (below)
    assert ranked(part(0, [2, 1, 3], 2, [1, 2, 3]), (1, 2, 3)).election_type is None


def test_clean_path_stops_the_live_isr_ahead_and_the_leader() -> None:
    """The offline and controlled-shutdown elections take the first live ISR member in assignment
    order, and a controlled shutdown re-elects only the partitions the departing broker leads
    (``ControlledShutdownPartitionLeaderElectionStrategy``, spec §4.3)."""
    # [3,2,1], 3 out of the ISR: only the leader 2 stands ahead of 1 in the live ISR
    r = ranked(part(0, [3, 2, 1], 2, [1, 2]), (1, 2, 3))
    assert r.election_type is None
    assert r.steps == ("stop (controlled shutdown) brokers [2]: the clean election takes the first live ISR member "
                       "in assignment order [3, 2, 1]", "broker 1 is then elected; restart [2]")
    # the leader 2 behind 1, nothing ahead: stopping the leader alone moves it to 1
    r = ranked(part(0, [3, 1, 2], 2, [1, 2]), (1, 2, 3))
    assert r.election_type is None and r.steps[0].startswith("stop (controlled shutdown) brokers [2]:")
    # 2 ahead of 1 and the leader 3 behind it: both stop
    r = ranked(part(0, [2, 1, 3], 3, [1, 2, 3]), (1, 2, 3))
    assert r.steps[1] == "broker 1 is then elected; restart [2, 3]"


def test_unclean_path_stops_live_isr_members_wherever_they_sit() -> None:
    """An unclean election happens only when no ISR member is alive and takes the first live
    replica in assignment order (``OfflinePartitionLeaderElectionStrategy``, spec §4.3): every
    live ISR member stops, and every live replica ahead of the candidate."""
    # ISR [3] behind broker 1 in [1,2,3]: 3 stops; 2 (live, not stopped) follows 1 as well
    r = ranked(part(0, [1, 2, 3], 3, [3]), (1, 2, 3))
    assert r.election_type == "unclean"
    assert r.steps == ("stop brokers [3]: an unclean election takes the first live replica in assignment order "
                       "[1, 2, 3], and only when no ISR member is alive", UNCLEAN_COMMAND,
                       "restart brokers [3]: they truncate to broker 1's log (as do [2])")
    # counter-case: the only ISR member 3 is dead, so it is not stopped; 2 is, as it sits ahead of 1
    r = ranked(part(0, [3, 2, 1], -1, [3]), (1, 2))
    assert r.steps == ("stop brokers [2]: an unclean election takes the first live replica in assignment order "
                       "[3, 2, 1], and only when no ISR member is alive", UNCLEAN_COMMAND,
                       "restart brokers [2]: they truncate to broker 1's log")


def test_no_live_or_no_evidenced_replica_leaves_nothing_to_run() -> None:
    """Without a live replica no election can elect (spec §4.4, the partition stays offline)."""
    r = ranked(part(0, [3, 2, 1], -1, [3]), ())
    assert r.best == 1 and r.election_type is None
    assert r.steps == ("broker 1 is not alive: start it first, then run plan-elect again",)
    # no replica's files at hand: nothing is ranked
    r = ranked(part(0, [3, 2, 1], -1, [3]), (1, 2), brokers=())
    assert (r.candidates, r.best, r.recovery_choice, r.no_evidence) == ((), None, None, (3, 2, 1))
    assert r.steps == ("no replica with evidence can lead: bring one of its brokers back first",)
    # counter-case: only 3's files missing
    assert ranked(part(0, [3, 2, 1], -1, [3]), (1, 2), brokers=(1, 2)).no_evidence == (3,)
