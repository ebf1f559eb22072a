"""Real ZooKeeper data directories (``../shared/oracle/wild/``, see its README): the empty digest
trailer of a ``snapshot.0``, Kafka under a chroot, trees that hold no Kafka at all, and
histories that only snapshots show."""

from __future__ import annotations

import pytest

from kreplica.analysis.timeline.events import TimelineSummary
from kreplica.formats.findings import Finding
from kreplica.report.text.timeline import render_text
from kreplica.report.output.console import text_console
from tests.conftest import oracle_dir
from tests.interop.wild_cases import run, wild_dir

pytestmark = pytest.mark.interop

#: ZooKeeper 3.6+ data directories holding only ``snapshot.0``, whose trailer is the empty digest
#: (zxid 0, digest 0) that ZooKeeper writes before any transaction and ignores on load
SNAPSHOT_0 = [
    ("Bheem6005__kafka", "78ab3de/zookeeper"),
    ("trieunguyentm__Bigdata-group53", "86e7774/data/zoo2/data"),
    ("anjaligupta17__kafka_by_docker_compose", "3845754/zookeeper/data"),
]
#: Kafka under the chroot /de-4-3-kafka-cluster (zookeeper.connect=...:2181/de-4-3-kafka-cluster);
#: 116 snapshots and no transaction log
CHROOT = ("devcourse-final-prj__kafka_cluster", "25bf5c0/zookeeper/data")
CHROOT_PATH = "/de-4-3-kafka-cluster"
#: eight snapshots, no transaction log, Kafka at the root
SNAPSHOTS_ONLY = ("matera-aem__kafka-topology-scenarios", "2001f38/data/zookeeper/data")


def _params(cases):
    return [pytest.param(repo, sub, id=f"{repo}/{sub}") for repo, sub in cases]


@pytest.mark.parametrize(("repo", "sub"), _params(SNAPSHOT_0))
def test_the_empty_digest_of_a_snapshot_0_is_not_a_mismatch(repo, sub) -> None:
    ran = run("zk", "dump", wild_dir(repo, sub))
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    assert "zk_digest_mismatch" not in ran.finding_kinds


@pytest.mark.parametrize("command", ["cluster-state", "timeline"])
@pytest.mark.parametrize(("repo", "sub"), _params(SNAPSHOT_0))
def test_a_tree_without_kafka_is_no_cluster_not_an_ok_one(repo, sub, command) -> None:
    ran = run(command, wild_dir(repo, sub))
    assert ran.exit_code == 2 and ran.stdout == ""
    assert "no Kafka metadata" in ran.stderr
    if command == "cluster-state":   # it says what the tree holds instead
        assert "top-level /zookeeper" in ran.stderr


def test_kafka_under_a_chroot_is_found_and_read_from_there() -> None:
    ran = run("cluster-state", wild_dir(*CHROOT))
    assert ran.exit_code == 0, ran.stderr
    (state,) = ran.of_type("cluster_state")
    assert [b["id"] for b in state["brokers"]] == [1, 2, 3]
    assert {t["name"]: len(t["partitions"]) for t in state["topics"]} == {"current_stock": 3,
                                                                           "__consumer_offsets": 50}
    assert state["controller"]["broker_id"] == 1


@pytest.mark.parametrize("command", [pytest.param(["cluster-state"], id="cluster-state"),
                                     pytest.param(["timeline"], id="timeline"),
                                     pytest.param(["plan-elect"], id="plan-elect"),
                                     pytest.param(["plan-reassign", "verify"], id="plan-reassign")])
def test_chroot_option_reads_there_and_a_wrong_one_says_where_kafka_is(command) -> None:
    source = wild_dir(*CHROOT)
    head, rest = command[0], command[1:]
    given = run(head, source, *rest, "--chroot", CHROOT_PATH + "/")
    assert given.exit_code in (0, 1), given.stderr
    wrong = run(head, source, *rest, "--chroot", "/kafka")
    if head == "timeline":   # a history may create Kafka's znodes later: nothing under /kafka ever
        assert wrong.exit_code == 2 and "no Kafka metadata" in wrong.stderr
    else:
        assert wrong.exit_code == 2 and CHROOT_PATH in wrong.stderr and "--chroot" in wrong.stderr


def test_chroot_is_a_znode_path() -> None:
    ran = run("cluster-state", wild_dir(*CHROOT), "--chroot", "de-4-3-kafka-cluster")
    assert ran.exit_code == 2 and "--chroot" in ran.stderr


def test_chroot_does_not_apply_to_kraft() -> None:
    ran = run("cluster-state", wild_dir("stonesy88__shadow-kafka", "c219d4b/kafka-data"), "--chroot", "/kafka")
    assert ran.exit_code == 2 and "ZooKeeper" in ran.stderr


@pytest.mark.parametrize(("repo", "sub"), _params([CHROOT, SNAPSHOTS_ONLY]))
def test_snapshots_without_logs_are_replayed_snapshot_to_snapshot(repo, sub) -> None:
    ran = run("timeline", wild_dir(repo, sub))
    assert ran.exit_code in (0, 1), ran.stderr
    (summary,) = ran.of_type("timeline_summary")
    assert summary["resolution"] == "snapshot"
    changes = [e for e in ran.of_type("partition_event") if e["cause"] != "snapshot"]
    assert changes and summary["events"]["partition"] >= len(changes)
    positions = [int(e["position"], 16) for e in ran.objects if e["type"].endswith("_event")]
    assert positions == sorted(positions)
    text = run("timeline", wild_dir(repo, sub), fmt="text")
    assert "no transaction log" in text.stdout and "snapshot to snapshot" in text.stdout


def test_a_snapshot_history_does_not_take_partitions_for_offline_for_want_of_registrations() -> None:
    """The brokers' registrations the snapshots show are later ones than those live when the
    partitions were created: the partitions led by them are not offline."""
    ran = run("timeline", wild_dir(*CHROOT))
    assert ran.exit_code == 0, ran.stderr
    (summary,) = ran.of_type("timeline_summary")
    assert summary["offline_periods"] == []
    assert {e["broker"] for e in ran.of_type("broker_event")} == {1, 2, 3}
    assert {e["cause"] for e in ran.of_type("partition_event")} >= {"created"}


def test_a_history_with_logs_keeps_its_resolution() -> None:
    ran = run("timeline", oracle_dir("zookeeper", "snapshot-plus-logs"))
    (summary,) = ran.of_type("timeline_summary")
    assert summary["resolution"] == "transaction"


def test_the_timeline_verdict_says_what_the_exit_status_says() -> None:
    """An error finding is exit 1: the verdict line is PROBLEMS, not OK."""
    console = text_console()
    console.width = 120
    summary = {"type": "timeline_summary", "source": "s", "source_kind": "zookeeper", "start": "0x0",
               "end": "0x0", "resolution": "transaction", "events": dict(TimelineSummary().counts),
               "unclean_elections": [], "offline_periods": [], "epochs_without_data": [], "zombie_epochs": []}
    damage = Finding("zk_digest_mismatch", "snapshot.5", 0, "digest differs")
    with console.capture() as captured:
        render_text([], summary, [damage], console, per_partition=False)
    verdict = [line for line in captured.get().strip().splitlines() if not line.startswith(" ")][-1]
    assert verdict.startswith("PROBLEMS")   # its own line; what follows is it wrapped
