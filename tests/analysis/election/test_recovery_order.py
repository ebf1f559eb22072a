"""KIP-966's unclean-recovery order (highest last leader epoch, then longest log), read from the
replica as its broker holds it once loaded (``UnifiedLog.latestEpoch``, ``logEndOffset``), and
the one order ``plan-elect`` and the fleet share."""

from __future__ import annotations

import pytest

from kreplica.analysis.election.loss import rank_candidates
from kreplica.analysis.election.recovery_order import RecoveryFacts, recovery_facts, recovery_order
from kreplica.analysis.election.scenarios import Scenario, plan_elections
from kreplica.model.versions import DEFAULT_VERSION, Protocol
from tests.builders.cluster import cluster, part
from tests.builders.fleet_rows import partition_rows
from tests.builders.replicas import replica_log
from tests.conftest import FIXTURES

SCENARIOS = FIXTURES / "scenarios"


def test_the_highest_epoch_leads_even_with_the_shorter_log() -> None:
    shorter_newer, longer_older = RecoveryFacts(2, 3, 100, 100), RecoveryFacts(1, 1, 120, 110)
    assert [f.broker for f in recovery_order([longer_older, shorter_newer])] == [2, 1]


def test_the_same_epoch_is_decided_by_the_longer_log() -> None:
    # the counter-case: without a newer epoch the log end decides, whatever the high watermarks say
    assert [f.broker for f in recovery_order([RecoveryFacts(1, 4, 90, 90), RecoveryFacts(2, 4, 95, 10)])] == [2, 1]


def test_ties_go_to_the_higher_high_watermark_then_the_lower_broker() -> None:
    order = recovery_order([RecoveryFacts(3, 4, 95, 90), RecoveryFacts(2, 4, 95, 80), RecoveryFacts(1, 4, 95, 80)])
    assert [f.broker for f in order] == [3, 1, 2]


def test_the_epoch_is_the_loaded_cache_s_not_the_batches(tmp_path) -> None:
    # broker 1's checkpoint holds epoch 2 from offset 5, its batches only epoch 0: a broker that
    # loads the log keeps the checkpoint's cache (LeaderEpochFileCache read from the file, trimmed to
    # the log end), so it reports epoch 2 and leads before broker 2 (epoch 1, the longer log)
    one = replica_log(tmp_path, 1, [(0, 10, 0, "a")], hw=10, checkpoint=[(0, 0), (2, 5)])
    two = replica_log(tmp_path, 2, [(0, 10, 0, "a"), (10, 2, 1, "b")], hw=10, checkpoint=[(0, 0), (1, 10)])
    assert one.lineage[-1].epoch == 0
    facts = [recovery_facts(b, log, kafka_version=DEFAULT_VERSION) for b, log in ((1, one), (2, two))]
    assert [(f.broker, f.last_epoch, f.log_end_offset) for f in recovery_order(facts)] == [(1, 2, 10), (2, 1, 12)]
    # and the fleet, which rebuilds the logs from its rows, elects the same replica as plan-elect
    assert _fleet_and_plan_elect(tmp_path) == (1, 1)


def test_without_an_epoch_the_longest_log_leads(tmp_path) -> None:
    # pre-v2 records only: no epoch cache on either (KAFKA-7897), so both report -1 and the log end decides
    one = replica_log(tmp_path / "a", 1, [(0, 4, 0, "a")], hw=4, checkpoint=None, legacy=1)
    two = replica_log(tmp_path / "b", 2, [(0, 6, 0, "a")], hw=4, checkpoint=None, legacy=1)
    facts = [recovery_facts(b, log, kafka_version=DEFAULT_VERSION) for b, log in ((1, one), (2, two))]
    assert [(f.broker, f.last_epoch) for f in recovery_order(facts)] == [(2, -1), (1, -1)]


def _fleet_and_plan_elect(root) -> tuple[int | None, int | None]:
    """The fleet's evidence leader and plan-elect's first candidate for ``root/broker-*/orders-0``
    with no leader (offline, every broker alive)."""
    analyze = pytest.importorskip("kreplica.pipeline.analyze.partitions",
                                  reason="the fleet's analysis reads Arrow rows (the fleet extra)")
    logs, replicas, segments, batches, markers = partition_rows(root)
    fleet = analyze.analyze_partition("orders", 0, replicas, segments, batches, markers, facts=None,
                                      facts_source=None, protocol=Protocol.KIP279, kafka_version=DEFAULT_VERSION)
    brokers = tuple(log.broker_id for log in logs)
    state = cluster({"orders": [part(0, list(brokers), -1, [brokers[0]])]}, alive=brokers)
    plan = plan_elections(state, Scenario())
    (election,) = plan.elections
    ranking = rank_candidates(election, dict(zip(brokers, logs)), kafka_version=DEFAULT_VERSION,
                              online=plan.online_after)
    assert ranking.recovery_choice == ranking.candidates[0].broker
    return fleet.leader_broker, ranking.recovery_choice


@pytest.mark.parametrize("scenario", sorted(p.name for p in SCENARIOS.iterdir() if p.is_dir()))
def test_the_fleet_s_evidence_leader_is_plan_elect_s_first_candidate(scenario: str) -> None:
    fleet, plan_elect = _fleet_and_plan_elect(SCENARIOS / scenario)
    assert fleet == plan_elect is not None
