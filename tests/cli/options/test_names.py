"""A mistake is never answered "OK" (issue 20, "Silent 'OK' on a mistake"). Across every command:

* a point in time or position outside the evidence (``--at-zxid``, ``--at-offset``, ``--at-time``,
  ``timeline --from/--to``, ``zk log --from/--to``, ``inspect-log --from/--to``) is exit 2
  naming where the evidence begins or ends, instead of the final (or oldest) state passed off as
  the one asked for, or an empty listing;
* a filter naming a partition, topic, broker or znode the evidence never mentions is exit 2 with
  the names it does mention, closest first, instead of an empty "OK";
* a path that does not exist is "no such file or directory";
* a mistyped enumerated argument gets a did-you-mean;
* a ``--kafka-version`` newer than kreplica's version table is refused, naming the newest known.

Every such error is one line on stderr and nothing on stdout (tests/cli/options/test_usage.py: click's own too)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kreplica.cli.options.names import SHOWN, closest_first, unknown_name
from kreplica.model.versions import NEWEST_KNOWN
from tests.builders.usage import FLEET, run, usage_error
from tests.conftest import FIXTURES

ZK = str(FIXTURES / "timeline" / "zookeeper")            # snapshot.f, then zxids 0x10..0x1b
KRAFT = str(FIXTURES / "elections" / "kraft")            # offsets 0..9
SCENARIO = FIXTURES / "scenarios" / "kip101-scenario-1"
B1, B2 = str(SCENARIO / "broker-1"), str(SCENARIO / "broker-2")
P1 = str(SCENARIO / "broker-1" / "orders-0")
ORDERS = str(FIXTURES / "logs" / "orders-0")           # offsets 0..49
MISSING = "/no/such/evidence"


# -- a point outside the evidence ------------------------------------------------------------------

BEYOND_ZK = "beyond the evidence, which ends at zxid 0x1b"
BEFORE_ZK = "before the evidence, which begins at zxid 0xf"
BEYOND_KRAFT = "beyond the evidence, which ends at offset 9"
LATE = "2030-01-01T00:00:00Z"
EARLY = "2001-01-01T00:00:00Z"
ZK_LAST_TIME = "its last transaction is dated 2023-11-14T22:13:47.000Z"
ZK_FIRST_TIME = "its first transaction is dated 2023-11-14T22:13:36.000Z"
KRAFT_LAST_TIME = "its last record is dated 2023-11-14T22:13:20.004Z"
KRAFT_FIRST_TIME = "its first record is dated 2023-11-14T22:13:20.000Z"


@pytest.mark.parametrize("args, message", [
    pytest.param(["cluster-state", ZK, "--at-zxid", "0x999"], f"--at-zxid: zxid 0x999 is {BEYOND_ZK}",
                 id="cs-zxid-late"),
    pytest.param(["cluster-state", ZK, "--at-zxid", "0x1"], f"--at-zxid: zxid 0x1 is {BEFORE_ZK}", id="cs-zxid-early"),
    pytest.param(["cluster-state", ZK, "--at-time", LATE], ZK_LAST_TIME, id="cs-zk-time-late"),
    pytest.param(["cluster-state", ZK, "--at-time", EARLY], ZK_FIRST_TIME, id="cs-zk-time-early"),
    pytest.param(["cluster-state", KRAFT, "--at-offset", "99999"], f"--at-offset: offset 99999 is {BEYOND_KRAFT}",
                 id="cs-offset-late"),
    pytest.param(["cluster-state", KRAFT, "--at-time", LATE], KRAFT_LAST_TIME, id="cs-kraft-time-late"),
    pytest.param(["cluster-state", KRAFT, "--at-time", "0"], KRAFT_FIRST_TIME, id="cs-kraft-time-early"),
    pytest.param(["zk", "dump", ZK, "--at-zxid", "0x999"], BEYOND_ZK, id="dump-zxid-late"),
    pytest.param(["zk", "dump", ZK, "--at-time", LATE], ZK_LAST_TIME, id="dump-time-late"),
    pytest.param(["zk", "log", ZK, "--from", "0x999"], f"--from: zxid 0x999 is {BEYOND_ZK}",
                 id="log-from-late"),
    pytest.param(["zk", "log", ZK, "--to", "0x1"], f"--to: zxid 0x1 is {BEFORE_ZK}", id="log-to-early"),
    pytest.param(["timeline", ZK, "--from", "0x999"], f"--from: zxid 0x999 is {BEYOND_ZK}", id="timeline-from-late"),
    pytest.param(["timeline", ZK, "--to", "0x999"], f"--to: zxid 0x999 is {BEYOND_ZK}", id="timeline-to-late"),
    pytest.param(["timeline", ZK, "--to", EARLY], ZK_FIRST_TIME, id="timeline-to-early"),
    pytest.param(["timeline", KRAFT, "--from", "99"], f"--from: offset 99 is {BEYOND_KRAFT}", id="timeline-kraft"),
    pytest.param(["timeline", KRAFT, "--to", LATE], KRAFT_LAST_TIME, id="timeline-kraft-time"),
    pytest.param(["plan-elect", ZK, "--at-zxid", "0x999"], BEYOND_ZK, id="plan-elect-zxid"),
    pytest.param(["plan-elect", KRAFT, "--at-offset", "99999"], BEYOND_KRAFT, id="plan-elect-offset"),
    pytest.param(["plan-elect", KRAFT, "--at-time", LATE], KRAFT_LAST_TIME, id="plan-elect-time"),
    pytest.param(["plan-reassign", ZK, "rebalance", "--at-zxid", "0x999"], BEYOND_ZK, id="plan-reassign-zxid"),
    pytest.param(["plan-reassign", KRAFT, "rebalance", "--at-time", EARLY], KRAFT_FIRST_TIME,
                 id="plan-reassign-time"),
    pytest.param(["inspect-log", ORDERS, "--from", "99999"],
                 "--from: offset 99999 is beyond the evidence, which ends at offset 49", id="inspect-log-late"),
    pytest.param(["inspect-log", ORDERS, "--to", "-1"], "--to: offset -1 is before the evidence, which begins at "
                 "offset 0", id="inspect-log-early"),
])
def test_a_point_outside_the_evidence_is_exit_2_naming_its_bounds(args, message) -> None:
    usage_error(run(*args, "-f", "ndjson"), message)


@FLEET
def test_fleet_analyze_refuses_a_point_outside_the_evidence(tmp_path: Path) -> None:
    for table in ("replicas", "segments", "batches", "markers", "findings"):
        (tmp_path / table).mkdir()
        (tmp_path / table / "_SUCCESS").touch()     # a finished scan's tables, empty
    usage_error(run("fleet", "analyze", tmp_path, ZK, "--at-zxid", "0x999"), BEYOND_ZK)


def test_zookeeper_snapshots_alone_cannot_place_a_time(tmp_path: Path) -> None:
    shutil.copy(Path(ZK) / "version-2" / "snapshot.f", tmp_path)
    usage_error(run("cluster-state", tmp_path, "--at-time", LATE), "--at-time: nothing in the evidence is dated")
    assert run("cluster-state", tmp_path, "--at-zxid", "0xf", "-f", "ndjson").exit_code in (0, 1)


@pytest.mark.parametrize("args", [
    pytest.param(["cluster-state", ZK, "--at-zxid", "0xf"], id="first-zxid"),
    pytest.param(["cluster-state", ZK, "--at-zxid", "0x1b"], id="last-zxid"),
    pytest.param(["cluster-state", ZK, "--at-time", "1700000027000"], id="last-time"),
    pytest.param(["cluster-state", KRAFT, "--at-offset", "9"], id="last-offset"),
    pytest.param(["timeline", ZK, "--from", "0x17", "--to", "0x1b"], id="timeline-window"),
    pytest.param(["zk", "log", ZK, "--from", "0xf", "--to", "0x1b"], id="log-window"),
    pytest.param(["inspect-log", ORDERS, "--from", "49"], id="inspect-log-last"),
    pytest.param(["inspect-log", ORDERS, "--to", "0"], id="inspect-log-first"),
    pytest.param(["inspect-log", ORDERS, "--from", "3", "--producer-id", "424242"], id="inspect-log-no-match"),
])
def test_points_at_the_bounds_are_answered(args) -> None:
    result = run(*args, "-f", "ndjson")
    assert result.exit_code in (0, 1), result.stderr
    assert result.stdout and result.stderr == ""


def test_the_first_metadata_offset_is_in_the_evidence_though_it_registers_no_cluster_yet() -> None:
    # offset 0 lies within the metadata log, so it is not "before the evidence"; the state there
    # holds no broker and no topic, which is no cluster to report (exit 2 saying so, never an OK)
    result = run("cluster-state", KRAFT, "--at-offset", "0", "-f", "ndjson")
    assert result.exit_code == 2 and result.stdout == ""
    assert "registers no broker and no topic at offset 0" in result.stderr
    assert "before the evidence" not in result.stderr


# -- a name the evidence never mentions ------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    pytest.param(["timeline", ZK, "--partition", "nosuch-0"], "--partition: no partition 'nosuch-0' in the "
                 "evidence (it has orders-0)", id="timeline-partition"),
    pytest.param(["timeline", ZK, "--partition", "orders-0", "--partition", "ordrs-1"],
                 "no partition 'ordrs-1' in the evidence (it has orders-0)", id="timeline-one-of-two"),
    pytest.param(["timeline", KRAFT, "--partition", "paymnts-1"], "(it has payments-1, payments-0, orders-0)",
                 id="timeline-closest-first"),
    pytest.param(["timeline", ZK, "--broker", "9"], "--broker: no broker 9 in the evidence (it has 1, 2, 3)",
                 id="timeline-broker"),
    pytest.param(["plan-elect", KRAFT, "--fail", "9"], "--fail: no broker 9 in the cluster state (it has 1, 2, 3)",
                 id="elect-fail"),
    pytest.param(["plan-elect", KRAFT, "--controlled-shutdown", "9"], "--controlled-shutdown: no broker 9", id="elect-shutdown"),
    pytest.param(["plan-elect", KRAFT, "--preferred", "ordrs-0"], "(it has orders-0, orders, ", id="elect-preferred"),
    pytest.param(["plan-elect", KRAFT, "--log-dirs", f"9={B1}"], "--log-dirs: no broker 9", id="elect-log-dirs"),
    pytest.param(["plan-reassign", KRAFT, "decommission", "9"], "decommission: no broker 9 in the source "
                 "(it has 1, 2, 3)", id="reassign-decommission"),
    pytest.param(["plan-reassign", KRAFT, "replace-broker", "9=4"], "replace-broker: no broker 9",
                 id="reassign-replace"),
    pytest.param(["plan-reassign", KRAFT, "generate", "--topics", "paymnts"],
                 "--topics: no topic 'paymnts' in the source (it has payments, orders)", id="reassign-topics"),
    pytest.param(["plan-reassign", KRAFT, "rebalance", "--racks", "9:a"], "--racks: no broker 9", id="reassign-racks"),
    pytest.param(["epochs", B1, "--partition", "ordrs-0"], f"--partition: no partition directory 'ordrs-0' in {B1} "
                 "(it has orders-0)", id="epochs-partition"),
    pytest.param(["offset-for-epoch", B1, "--partition", "ordrs-0", "--epoch", "0"], "no partition directory",
                 id="offset-for-epoch-partition"),
    pytest.param(["truncate-plan", "--leader", B1, "--follower", B2, "--partition", "ordrs-0"],
                 "no partition directory 'ordrs-0'", id="truncate-plan-partition"),
    pytest.param(["diverge", B1, B2, "--partition", "ordrs-0"], "no partition directory 'ordrs-0'",
                 id="diverge-partition"),
    pytest.param(["zk", "dump", ZK, "--path", "/brokers/topic"], "--path: no znode matching '/brokers/topic' in "
                 "the tree at zxid 0x1b (it has /brokers/topics, ", id="dump-path"),
])
def test_a_name_the_evidence_never_mentions_is_exit_2_with_the_names_it_has(args, message) -> None:
    usage_error(run(*args, "-f", "ndjson"), message)


def test_brokers_added_by_the_plan_may_be_given_racks() -> None:
    result = run("plan-reassign", KRAFT, "add-brokers", "4", "--racks", "4:rack-a", "-f", "ndjson")
    assert result.exit_code in (0, 1) and result.stdout, result.stderr


def test_a_partition_created_late_is_waited_for_and_nothing_is_lost() -> None:
    # payments-1 appears only with the last record: everything selected before it is printed, in order
    whole = [json.loads(x) for x in run("timeline", KRAFT, "-f", "ndjson").stdout.splitlines()]
    result = run("timeline", KRAFT, "--partition", "payments-1", "-f", "ndjson")
    chosen = [json.loads(x) for x in result.stdout.splitlines()]
    expected = [o for o in whole[:-1] if o["type"] != "partition_event" or o["partition"] == "payments-1"]
    assert result.exit_code == 0 and chosen[:-1] == expected and chosen[-1]["type"] == "timeline_summary"


def test_names_are_listed_closest_first_and_capped() -> None:
    assert closest_first("ordrs-1", ["metrics-0", "orders-0", "orders-1"])[:2] == ["orders-1", "orders-0"]
    many = [f"t{i}-0" for i in range(40)]
    message = unknown_name("--partition", "partition", "nosuch", many).one_line()
    assert message.count(", ") == SHOWN and message.endswith("... (40 in all))")
    assert "it names no broker at all" in unknown_name("--broker", "broker", 5, []).one_line()


# -- a path that does not exist ----------------------------------------------------------------------

@pytest.mark.parametrize("args", [
    pytest.param(["inspect-log", MISSING], id="inspect-log"),
    pytest.param(["inspect-index", MISSING], id="inspect-index"),
    pytest.param(["inspect-dir", MISSING], id="inspect-dir"),
    pytest.param(["epochs", MISSING], id="epochs"),
    pytest.param(["offset-for-epoch", MISSING, "--epoch", "0"], id="offset-for-epoch"),
    pytest.param(["offset-for-epoch", P1, "--epochs-from", MISSING], id="offset-for-epoch-epochs-from"),
    pytest.param(["truncate-plan", "--leader", P1, "--follower", MISSING], id="truncate-plan"),
    pytest.param(["diverge", P1, MISSING], id="diverge"),
    pytest.param(["zk", "dump", MISSING], id="zk-dump"),
    pytest.param(["zk", "log", MISSING], id="zk-log"),
    pytest.param(["cluster-state", MISSING], id="cluster-state"),
    pytest.param(["cluster-state", ZK, MISSING], id="cluster-state-second-source"),
    pytest.param(["plan-elect", MISSING], id="plan-elect"),
    pytest.param(["plan-elect", KRAFT, "--log-dirs", f"1={MISSING}"], id="plan-elect-log-dirs"),
    pytest.param(["timeline", MISSING], id="timeline"),
    pytest.param(["timeline", ZK, "--log-dirs", f"1={MISSING}"], id="timeline-log-dirs"),
    pytest.param(["plan-reassign", MISSING, "rebalance"], id="plan-reassign"),
    pytest.param(["plan-reassign", "--assignment", MISSING, "rebalance"], id="plan-reassign-assignment"),
    pytest.param(["plan-reassign", KRAFT, "rebalance", "--sizes", MISSING], id="plan-reassign-sizes"),
    pytest.param(["plan-reassign", KRAFT, "rebalance", "--sizes-from", MISSING], id="plan-reassign-sizes-from"),
    pytest.param(["plan-reassign", KRAFT, "verify", "--reassignment-json-file", MISSING], id="plan-reassign-verify"),
    pytest.param(["fleet", "scan", MISSING, "--output-dir", MISSING + "-out"], id="fleet-scan", marks=FLEET),
    pytest.param(["fleet", "analyze", MISSING], id="fleet-analyze", marks=FLEET),
])
def test_a_missing_path_is_no_such_file_or_directory(args) -> None:
    line = usage_error(run(*args, "-f", "ndjson"), MISSING, "no such file or directory")
    assert "metadata files" not in line


# -- an enumerated argument mistyped -----------------------------------------------------------------

@pytest.mark.parametrize("args, message", [
    pytest.param(["plan-reassign", KRAFT, "genrate"], "got 'genrate' (did you mean 'generate'?)", id="action"),
    pytest.param(["plan-reassign", KRAFT, "decomission", "3"], "(did you mean 'decommission'?)", id="action-args"),
    pytest.param(["plan-elect", KRAFT, "--unclean-allowed", "ye"], "(did you mean 'yes'?)", id="unclean-allowed"),
    pytest.param(["inspect-dir", B1, "--shutdown", "uncelan"], "(did you mean 'unclean'?)", id="shutdown"),
])
def test_a_mistyped_choice_gets_a_did_you_mean(args, message) -> None:
    usage_error(run(*args), message)


def test_a_word_like_no_action_lists_them_all() -> None:
    line = usage_error(run("plan-reassign", KRAFT, "frobnicate"), "no action: expected one of generate, ")
    assert "did you mean" not in line


def test_a_mistyped_protocol_gets_a_did_you_mean() -> None:
    result = run("truncate-plan", "--leader", P1, "--follower", P1, "--protocol", "kip10")
    assert result.exit_code == 2 and "(did you mean 'kip101'?)" in result.stderr


# -- a Kafka version kreplica does not know ----------------------------------------------------------

NEWEST = f"{NEWEST_KNOWN.major}.{NEWEST_KNOWN.minor}"


@pytest.mark.parametrize("args", [
    pytest.param(["epochs", P1], id="epochs"),
    pytest.param(["offset-for-epoch", P1, "--epoch", "0"], id="offset-for-epoch"),
    pytest.param(["truncate-plan", "--leader", P1, "--follower", P1], id="truncate-plan"),
    pytest.param(["inspect-dir", P1], id="inspect-dir"),
    pytest.param(["plan-elect", KRAFT], id="plan-elect"),
    pytest.param(["plan-reassign", KRAFT, "rebalance"], id="plan-reassign"),
    pytest.param(["fleet", "analyze", MISSING], id="fleet-analyze", marks=FLEET),
])
@pytest.mark.parametrize("version", ["9.9", f"{NEWEST_KNOWN.major}.{NEWEST_KNOWN.minor + 1}"])
def test_a_kafka_version_newer_than_the_table_is_refused(args, version) -> None:
    result = run(*args, "--kafka-version", version, "-f", "ndjson")
    assert result.exit_code == 2 and result.stdout == ""
    assert f"Kafka {version} is newer than any version kreplica knows (the newest is {NEWEST})" in result.stderr


def test_a_patch_release_of_the_newest_line_is_accepted() -> None:
    result = run("epochs", P1, "--kafka-version", f"{NEWEST}.7", "-f", "ndjson")
    assert result.exit_code == 0 and json.loads(result.stdout)["kafka_version"] == f"{NEWEST}.7"


@pytest.mark.parametrize(("version", "refused"), [
    # Kafka 0.8 brought replication (leaders, followers, the ISR): nothing older has what kreplica emulates
    pytest.param("0.7", True, id="0.7-refused"),
    pytest.param("0.7.2", True, id="0.7.2-refused"),
    pytest.param("0.8", False, id="0.8-accepted"),
    pytest.param("0.8.2.2", False, id="0.8.2.2-accepted"),
])
def test_a_kafka_version_before_replication_is_refused(version, refused) -> None:
    result = run("epochs", P1, "--kafka-version", version, "-f", "ndjson")
    if refused:
        assert result.exit_code == 2 and result.stdout == ""
        assert result.stderr.strip() == (f"kreplica: error: --kafka-version: Kafka {version} predates replication, "
                                         "which Kafka 0.8 introduced: kreplica emulates 0.8 and later")
    else:
        assert result.exit_code == 0, result.output


def test_the_kafka_version_help_says_which_versions_it_takes() -> None:
    from kreplica.model.versions import DEFAULT_VERSION

    text = " ".join(run("epochs", "--help").stdout.split())
    assert f"0.8 (the first with replication) to {NEWEST}" in text
    assert f"default {DEFAULT_VERSION.major}.{DEFAULT_VERSION.minor}" in text
