"""``plan-elect`` as one call (:func:`~kreplica.analysis.election.analysis.analyze_elections`) on
``fixtures/scenarios/unclean-with-groups``: broker 1 fails and broker 2 is elected uncleanly at
epoch 4. Without log directories the answer is the plan alone and the group evidence is not read;
with them, the candidates are ranked and the election's consumer impact is the one
:func:`~kreplica.analysis.consumers.elections.leader_change_impacts` gives for the leaders before
and after."""

from __future__ import annotations

from kreplica.analysis.consumers.elections import leader_change_impacts
from kreplica.analysis.election.analysis import analyze_elections
from kreplica.analysis.election.scenarios import Scenario
from kreplica.analysis.groups.committed import committed_offsets
from kreplica.model.cluster import load_cluster_state
from kreplica.model.log.broker_replicas import BrokerLogDirs
from tests.conftest import FIXTURES

SCENARIO = FIXTURES / "scenarios" / "unclean-with-groups"
FAIL_1 = Scenario((1,), (), None, False, "yes")


def _state():
    return load_cluster_state([str(SCENARIO / "zookeeper")])


def test_without_log_dirs_the_plan_alone_and_no_group_evidence_read() -> None:
    asked = []
    found = analyze_elections(_state(), FAIL_1, committed=lambda version: asked.append(version) or ())
    (election,) = found.plan.elections
    assert (election.before.leader, election.after.leader, election.unclean) == (1, 2, True)
    assert found.rankings == () and found.impacts == () and asked == []
    assert found.has_problems   # an unclean election, as the plan says


def test_with_log_dirs_the_candidates_and_the_consumer_impact() -> None:
    dirs = BrokerLogDirs({b: str(SCENARIO / f"broker-{b}") for b in (1, 2)})
    asked = []

    def committed(version):
        asked.append(version)
        return committed_offsets([str(SCENARIO / "broker-1")], version)

    found = analyze_elections(_state(), FAIL_1, log_dirs=dirs, committed=committed)
    (election,) = found.plan.elections
    assert asked == [found.plan.kafka_version]   # the plan's coordinator version loads the groups
    (ranking,) = found.rankings
    assert ranking.key == ("orders", 0) and {c.broker for c in ranking.candidates} == {1, 2}
    # each candidate leads at the epoch the controller elects it at, registered at its log end
    # (Partition.makeLeader): broker 2 (epoch 1, log end 120) at epoch 4 from 120, so broker 1
    # (epoch 3: 100-109, its high watermark 110) asks for epoch 3, is told (1, 120) and truncates
    # to the end of its own epoch 0, 100: ten committed records. Broker 1 leading costs broker 2
    # 100-119 (epoch 1 ends at 100 in broker 1's cache), committed too (below broker 2's 110)
    losses = {c.broker: [(x.broker, x.ranges, x.records, x.committed) for x in c.losses] for c in ranking.candidates}
    assert losses == {2: [(1, ((100, 109),), 10, True)], 1: [(2, ((100, 119),), 20, True)]}
    assert ranking.best == 2   # the fewer records among those that could lead
    replicas = dirs.read_partitions({election.key: "orders-0"})[election.key]
    expected = leader_change_impacts(election.key, 1, 2, replicas, committed(found.plan.kafka_version),
                                     leader_epoch=election.after.leader_epoch, unclean=True,
                                     kafka_version=found.plan.kafka_version)
    assert [(i.committed.group, i.read_from, i.consumed_and_lost) for i in found.impacts] \
        == [(i.committed.group, i.read_from, i.consumed_and_lost) for i in expected]
    assert {i.event for i in found.impacts} == {"the unclean election of broker 2 at epoch 4"}
    # "fresh" read broker 1's records of epoch 3 that broker 2 does not hold
    assert any(i.loses_consumed_records for i in found.impacts)


def test_impacts_per_partition_with_evidence_from_first_leader_to_last(monkeypatch) -> None:
    """analysis._impacts (module docstring): one leader_change_impacts call per partition whose
    replicas were read and whose last election elected a leader, from the leader before its first
    election to the leader after its last (unclean if any was); the impacts of all are kept."""
    from types import SimpleNamespace as NS

    from kreplica.analysis.election import analysis

    calls = []

    def fake(key, before, after, replicas, offsets, *, leader_epoch, unclean, kafka_version):
        calls.append((key, before, after, replicas, leader_epoch, unclean))
        return [f"impact-{key[1]}"]

    monkeypatch.setattr(analysis, "leader_change_impacts", fake)

    def e(p, before, after, epoch=5, elected=True, unclean=False, isr=(1,)):
        return NS(key=("t", p), before=NS(leader=before, isr=isr), after=NS(leader=after, leader_epoch=epoch),
                  elected=elected, unclean=unclean)

    elections = [e(0, 1, 2),                                      # t-0: no replica evidence
                 e(1, 1, -1, elected=False),                       # t-1: nobody elected
                 e(2, 1, 2, epoch=4, unclean=True), e(2, 2, 3, epoch=6),   # t-2: two elections
                 e(3, 2, 1, epoch=9),
                 # t-4: already offline (an admin UNCLEAN election): consumers last read the ISR's
                 # last member, 7, which Kafka keeps there when the partition goes offline
                 e(4, -1, 3, epoch=8, unclean=True, isr=(7,)),
                 # t-5: offline with an ISR that names no single last leader: nobody to judge from
                 e(5, -1, 3, epoch=8, unclean=True, isr=())]
    evidence = {("t", 1): "ev1", ("t", 2): "ev2", ("t", 3): "ev3", ("t", 4): "ev4", ("t", 5): "ev5"}
    out = analysis._impacts(elections, evidence, ["offset"], None)
    assert out == ["impact-2", "impact-3", "impact-4", "impact-5"]
    assert calls == [(("t", 2), 1, 3, "ev2", 6, True), (("t", 3), 2, 1, "ev3", 9, False),
                     (("t", 4), 7, 3, "ev4", 8, True), (("t", 5), -1, 3, "ev5", 8, True)]
    assert analysis._impacts(elections, evidence, [], None) == []
