"""The replication commands on replicas written by the fixture writer, from the worked examples
of kafka-algorithms spec §3.8. Every expected value is worked out by hand in the comments, from
the §1.4 lookup table and the §3.3 decision table — not copied from kreplica's output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from tests.conftest import FIXTURES

SCENARIOS = FIXTURES / "scenarios"


def rep(scenario: str, broker: int) -> str:
    return str(SCENARIOS / scenario / f"broker-{broker}" / "orders-0")


def plan(scenario: str, leader: int, follower: int | list[int], *extra: str) -> list[dict]:
    followers = follower if isinstance(follower, list) else [follower]
    args = ["truncate-plan", "--leader", rep(scenario, leader), "-f", "ndjson", *extra]
    for f in followers:
        args += ["--follower", rep(scenario, f)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code in (0, 1), result.output
    objs = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(o["type"] == "truncation" for o in objs)
    for o in objs:
        assert (result.exit_code == 1) == any(p["committed_loss"] for p in objs)
    return objs


def summary(o: dict) -> tuple:
    return o["truncate_to"], o["discarded"]["ranges"], o["committed_loss"]


# KIP-101 scenario 1: A = 0:0 1:0 (HW 2), B = same log but HW 1.
def test_kip101_scenario_1_hw_truncation_loses_acknowledged_m2() -> None:
    (o,) = plan("kip101-scenario-1", 1, 2, "--protocol", "hw")
    # pre-KIP-101: B truncates to its HW 1; m2 (offset 1) sat below A's HW 2 and A holds it
    assert summary(o) == (1, [[1, 1]], True)
    assert o["held_elsewhere"] == [{"first": 1, "last": 1, "replicas": ["broker-1"]}]
    assert o["rounds"] == []


@pytest.mark.parametrize("protocol,rounds", [
    pytest.param("kip101", [[0, -1, 2]], id="kip101-answers-offset-only"),   # 0.11: A's latest is 0 -> LEO 2
    pytest.param("kip279", [[0, 0, 2]], id="kip279"),                         # 2.0+: (0, LEO 2)
    pytest.param("diverging-epoch", [[0, 0, 2]], id="diverging-epoch"),       # not diverging: records follow
])
def test_kip101_scenario_1_epochs_keep_m2(protocol: str, rounds: list) -> None:
    (o,) = plan("kip101-scenario-1", 1, 2, "--protocol", protocol)
    assert [[r["requested_epoch"], r["leader_epoch"], r["end_offset"]] for r in o["rounds"]] == rounds
    assert summary(o) == (2, [], False)


# KIP-101 scenario 2: A = 0:0 1:0 {0@0}; B (leader, epoch 1) = 0:0 1:1 {0@0, 1@1}.
@pytest.mark.parametrize("protocol,rounds", [
    pytest.param("kip101", [[0, -1, 1]], id="kip101"),     # B: floor 0, next 1@1 -> offset 1; 1 < LEO 2
    pytest.param("kip279", [[0, 0, 1]], id="kip279"),      # (0,1); A's own (0,2); min(2,1,2) = 1
])
def test_kip101_scenario_2_m2_is_removed(protocol: str, rounds: list) -> None:
    (o,) = plan("kip101-scenario-2", 2, 1, "--protocol", protocol)
    assert [[r["requested_epoch"], r["leader_epoch"], r["end_offset"]] for r in o["rounds"]] == rounds
    # m2 sat below A's own HW 2 and no other replica holds it: committed data is lost
    assert summary(o) == (1, [[1, 1]], True)
    assert o["held_elsewhere"] == [{"first": 1, "last": 1, "replicas": []}]


def test_kip101_scenario_2_hw_truncation_keeps_a_divergent_log() -> None:
    (o,) = plan("kip101-scenario-2", 2, 1, "--protocol", "hw")
    assert summary(o) == (2, [], False)   # A's HW 2: nothing removed; the logs now silently differ
    result = CliRunner().invoke(app, ["diverge", "-f", "ndjson", rep("kip101-scenario-2", 1),
                                      rep("kip101-scenario-2", 2)])
    assert result.exit_code == 1
    (d,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert d["first_divergent_offset"] == 1 and d["common_prefix_end"] == 1
    assert [(r["first"], r["last"], r["kind"]) for r in d["ranges"]] == [(1, 1, "divergent")]


# KIP-279 fast fail-over: A (leader) = 0:1 1:1 2:1 3:4 {1@0, 4@3}; B = 0:1 1:1 2:2 {1@0, 2@2}, HW 3.
def test_fast_failover_diverges_under_the_kip101_rule() -> None:
    (o,) = plan("kip279-fast-failover", 1, 2, "--protocol", "kip101")
    # B asks 2; A's first epoch above 2 is 4@3 -> 3; 3 >= B's LEO 3: no truncation (the old bug)
    assert [[r["requested_epoch"], r["end_offset"]] for r in o["rounds"]] == [[2, 3]]
    assert summary(o) == (3, [], False)


@pytest.mark.parametrize("protocol", ["kip279", "diverging-epoch"])
def test_fast_failover_converges_from_kip279_on(protocol: str) -> None:
    (o,) = plan("kip279-fast-failover", 1, 2, "--protocol", protocol)
    # A answers (1,3); B's own endOffsetFor(1) = (1,2); min(2,3,3) = 2: X at offset 2 goes.
    # X sat below B's own HW 3 (acknowledged while B was the sole ISR member): committed loss.
    assert o["rounds"][0] == {"requested_epoch": 2, "leader_epoch": 1, "end_offset": 3}
    assert summary(o) == (2, [[2, 2]], True)
    assert o["epoch_cache_after"] == [[1, 0]]


@pytest.mark.parametrize("protocol", ["kip279", "diverging-epoch"])
def test_several_rounds_when_the_follower_lacks_the_leaders_epochs(protocol: str) -> None:
    (o,) = plan("multi-round", 1, 2, "--protocol", protocol)
    # Example 4: (4 -> (3,2)) row 4 to 2; (2 -> (1,1)) row 4 to 1; (0 -> (0,0)) row 5 to 0
    assert [[r["requested_epoch"], r["leader_epoch"], r["end_offset"]] for r in o["rounds"]] == \
        [[4, 3, 2], [2, 1, 1], [0, 0, 0]]
    assert summary(o) == (0, [[0, 2]], False)
    assert o["discarded"]["batches"] == 3 and o["epoch_cache_after"] == []


def test_unclean_election_of_a_shorter_leader() -> None:
    (o,) = plan("unclean-shorter-leader", 1, 2)
    # the leader re-registers epoch 2 at its LEO 100; B asks 1 -> (0,100); own (0,100); to 100.
    # B's HW was 110, so offsets 100-109 were acknowledged: committed loss, nobody else has them.
    assert o["protocol"] == "diverging-epoch" and o["rounds"][0] == {"requested_epoch": 1, "leader_epoch": 0,
                                                                      "end_offset": 100}
    assert summary(o) == (100, [[100, 119]], True)
    assert o["discarded"]["records"] == 20


def test_unclean_election_under_hw_truncation_takes_the_out_of_range_path() -> None:
    (o,) = plan("unclean-shorter-leader", 1, 2, "--protocol", "hw")
    # HW 110 leaves 100-109; fetching 110 from a leader ending at 100 is out of range -> truncate to 100
    assert o["out_of_range"] == "above_leader_log_end"
    assert summary(o) == (100, [[100, 119]], True)


def test_follower_behind_the_leaders_log_start_restarts_there() -> None:
    (o,) = plan("out-of-range-retention", 1, 2)
    # B (0-49) is kept by the epoch exchange, then 50 < the leader's log start 200: truncateFullyAndStartAt(200).
    # Retention deleted those offsets on the leader, so they are not counted as lost.
    assert o["out_of_range"] == "below_leader_log_start"
    assert summary(o) == (200, [[0, 49]], False)
    assert any("retention" in n for n in o["notes"])


def test_follower_without_checkpoint_truncates_to_its_high_watermark() -> None:
    (o,) = plan("follower-without-checkpoint", 1, 2)
    # clean shutdown + no leader-epoch-checkpoint = empty cache; 2.1+ sends no request (KAFKA-6859)
    assert o["rounds"] == [] and summary(o) == (5, [[5, 7]], False)


def test_legacy_format_partition_only_has_hw_truncation() -> None:
    (o,) = plan("legacy-format", 1, 2)
    assert o["rounds"] == [] and summary(o) == (4, [[4, 7]], False)
    assert any("pre-v2" in n for n in o["notes"])


def test_three_replicas_truncate_to_different_offsets() -> None:
    o2, o3 = plan("three-replicas", 1, [2, 3])
    # leader {0@0, 2@10}: both followers ask 1 and get (0,10); broker 2's own (0,10) -> 10;
    # broker 3's own endOffsetFor(0) is (0,6) -> min(6,10,9) = 6
    assert summary(o2) == (10, [[10, 11]], False)
    assert summary(o3) == (6, [[6, 8]], False)


def test_truncating_a_commit_marker_reopens_the_transaction() -> None:
    (o,) = plan("txn-marker-truncated", 1, 2)
    assert summary(o) == (3, [[3, 3]], False)
    assert o["reopened_transactions"] == [{"producer_id": 7000, "marker_offset": 3, "marker": "commit"}]


def test_export_round_trips_through_inspect_log(tmp_path: Path) -> None:
    out = tmp_path / "salvage"
    plan("unclean-shorter-leader", 1, 2, "--output-dir", str(out))
    (segment,) = list(out.rglob("*.log"))
    records_file = next(out.rglob("*.records.ndjson"))
    exported = [json.loads(line) for line in records_file.read_text().splitlines()]
    assert [r["offset"] for r in exported] == list(range(100, 120))
    result = CliRunner().invoke(app, ["inspect-log", "--records", "-f", "ndjson", str(segment)])
    assert result.exit_code == 0
    objs = [json.loads(line) for line in result.stdout.splitlines()]
    assert all(b["crc_valid"] for b in objs if b["type"] == "batch")
    assert [r["value"] for r in objs if r["type"] == "record"] == [r["value"] for r in exported]


def test_divergent_middle_with_identical_tail() -> None:
    result = CliRunner().invoke(app, ["diverge", "-f", "ndjson", rep("divergent-middle", 1),
                                      rep("divergent-middle", 2)])
    assert result.exit_code == 1
    (d,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert d["first_divergent_offset"] == 3 and d["common_prefix_end"] == 3
    assert [(r["first"], r["last"], r["kind"]) for r in d["ranges"]] == [(3, 4, "divergent")]
    assert d["ranges"][0]["below_high_watermark"] == {"broker-1": True, "broker-2": True}
    assert d["records_unread"] is None


def test_identical_replicas_do_not_diverge() -> None:
    result = CliRunner().invoke(app, ["diverge", "-f", "ndjson", rep("kip101-scenario-1", 1),
                                      rep("kip101-scenario-1", 2)])
    assert result.exit_code == 0
    (d,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert d["ranges"] == [] and d["first_divergent_offset"] is None and d["common_prefix_end"] == 2


def test_the_same_records_in_other_batches_are_not_a_divergence() -> None:
    # same-records-other-batches: broker-2 holds broker-1's records 0-9 cut at 2 and gzip-compressed
    args = [rep("same-records-other-batches", 1), rep("same-records-other-batches", 2)]
    result = CliRunner().invoke(app, ["diverge", "-f", "ndjson", *args])
    assert result.exit_code == 0
    (d,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["first"], r["last"], r["kind"]) for r in d["ranges"]] == [(0, 9, "same_records")]
    assert (d["first_divergent_offset"], d["common_prefix_end"], d["records_unread"]) == (None, 10, None)
    text = CliRunner().invoke(app, ["diverge", "-f", "text", *args])
    assert text.exit_code == 0
    assert text.stdout == ("broker-1 and broker-2 hold the same records, in other batches at offsets 0-9\n"
                           "  (not divergence of data)\n")   # 80 columns: wrapped under a hanging indent


def test_shorter_replica_is_an_only_range_not_a_divergence() -> None:
    result = CliRunner().invoke(app, ["diverge", "-f", "ndjson", rep("out-of-range-retention", 1),
                                      rep("out-of-range-retention", 2)])
    (d,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert d["first_divergent_offset"] is None
    assert [(r["first"], r["last"], r["kind"]) for r in d["ranges"]] == [(0, 49, "only_broker-2"),
                                                                          (200, 399, "only_broker-1")]


@pytest.mark.parametrize("epoch,current,expected", [
    pytest.param(1, None, (1, 3, "NONE"), id="between-epochs"),                 # floor 1@0, next 4@3
    pytest.param(4, None, (4, 4, "NONE"), id="latest-gives-leo"),
    pytest.param(0, None, (0, 0, "NONE"), id="below-first-echoes-requested"),   # 2.1+ echo with first start
    pytest.param(7, None, (-1, -1, "NONE"), id="above-latest-undefined"),
    pytest.param(-1, None, (-1, -1, "NONE"), id="undefined-requested"),
    pytest.param(1, 3, (-1, -1, "FENCED_LEADER_EPOCH"), id="caller-behind-is-fenced"),
    pytest.param(1, 6, (-1, -1, "UNKNOWN_LEADER_EPOCH"), id="replica-behind-is-unknown"),
])
def test_offset_for_epoch_answers(epoch: int, current: int | None, expected: tuple) -> None:
    args = ["offset-for-epoch", rep("kip279-fast-failover", 1), "--epoch", str(epoch), "-f", "ndjson"]
    if current is not None:
        args += ["--current-leader-epoch", str(current)]
    result = CliRunner().invoke(app, args)
    (o,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert (o["leader_epoch"], o["end_offset"], o["error"]) == expected
    assert result.exit_code == (0 if expected[2] == "NONE" else 1)


def test_offset_for_epoch_version_differences_and_stream() -> None:
    queries = "\n".join(json.dumps({"epoch": e}) for e in (0, 1)) + "\n"
    result = CliRunner().invoke(app, ["offset-for-epoch", rep("kip279-fast-failover", 1), "--epochs-from", "-",
                                      "--kafka-version", "2.0", "-f", "ndjson"], input=queries)
    objs = [json.loads(line) for line in result.stdout.splitlines()]
    # 2.0 answers (-1,-1) below the first epoch instead of echoing it
    assert [(o["requested_epoch"], o["leader_epoch"], o["end_offset"]) for o in objs] == [(0, -1, -1), (1, 1, 3)]
    assert all(o["kafka_version"] == "2.0.0" for o in objs)


def test_epochs_shows_lineage_checkpoint_and_loaded_cache() -> None:
    result = CliRunner().invoke(app, ["epochs", "-f", "ndjson", rep("kip279-fast-failover", 1),
                                      rep("kip279-fast-failover", 2)])
    assert result.exit_code == 0, result.output
    a, b = [json.loads(line) for line in result.stdout.splitlines() if '"type":"epochs"' in line]
    assert [(e["epoch"], e["start_offset"], e["last_offset"]) for e in a["lineage"]] == [(1, 0, 2), (4, 3, 3)]
    assert a["checkpoint"] == [[1, 0], [4, 3]] and a["loaded_cache"] == [[1, 0], [4, 3]]
    assert b["loaded_cache"] == [[1, 0], [2, 2]]


def test_cli_protocol_names_match_the_analysis() -> None:
    from kreplica.analysis.replication import truncation
    from kreplica.cli.options import protocols

    assert protocols.PROTOCOLS == truncation.PROTOCOLS and protocols.AUTO == truncation.AUTO


def test_after_truncation_a_divergent_middle_stays_different() -> None:
    # divergent-middle: broker-2's offsets 3-4 were written in another epoch than broker-1's, and
    # both logs then share an identical tail up to offset 10 (KAFKA-6880): the diverging-epoch
    # exchange finds no divergence at the tail, nothing is truncated, and 3-4 stay different.
    (o,) = plan("divergent-middle", 1, 2)
    assert o["after"] == {"leader_log_end": 10, "follower_log_end": 10, "refetch_records": 0,
                          "still_divergent": [[3, 4]], "never_refetched": [], "heals": False}


def test_after_truncation_a_healed_follower_refetches_to_the_leader_end() -> None:
    # kip101-scenario-2 with broker-2 leading: broker-1 truncates its uncommitted offset 1 and
    # refetches offset 1 from broker-2, whose log ends at 2: identical afterwards.
    (o,) = plan("kip101-scenario-2", 2, 1)
    assert o["truncate_to"] == 1
    assert o["after"] == {"leader_log_end": 2, "follower_log_end": 1, "refetch_records": 1,
                          "still_divergent": [], "never_refetched": [], "heals": True}
