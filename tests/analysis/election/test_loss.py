"""The data-loss ranking on the replication scenario fixtures (``fixtures/scenarios``), with a
cluster state built to match. Expected numbers are worked out from the §1.4 lookup and §3.3
decision tables of kafka-algorithms (as in test_replication_scenarios.py)."""

from __future__ import annotations

from kreplica.analysis.election.loss import election_json, rank_candidates
from kreplica.analysis.election.scenarios import Scenario, plan_elections
from kreplica.model.logdir.log_dir import scan_log_dir
from kreplica.model.log.partition_log import read_partition_log
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
