"""The pipeline's table rows carry a replica faithfully, and a partition is analysed from them
as the single-partition commands analyse its files — checked here without Spark, row by row."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import asdict

import pytest

from kreplica.analysis.replication.truncation import plan_truncations
from kreplica.model.log.replica import read_replicas
from kreplica.model.versions import DEFAULT_VERSION, Protocol
from tests.builders.fleet_rows import partition_rows as scenario_rows
from tests.conftest import FIXTURES

pytest.importorskip("pyarrow", reason="the fleet tables are Parquet, written with pyarrow (the fleet extra)")
from kreplica.pipeline.analyze import partitions as analyze  # noqa: E402
from kreplica.pipeline.tables import schemas as tables  # noqa: E402

SCENARIOS = FIXTURES / "scenarios"


def partition_rows(scenario: str):
    return scenario_rows(SCENARIOS / scenario)


@pytest.mark.parametrize("scenario", sorted(p.name for p in SCENARIOS.iterdir() if p.is_dir()))
def test_a_replica_rebuilt_from_its_rows_equals_the_one_read_from_files(scenario: str) -> None:
    logs, replicas, segments, batches, markers = partition_rows(scenario)
    for log, row in zip(logs, replicas):
        rk = (row["broker"], row["log_dir"])
        rebuilt = tables.replica_log_from_rows(
            row, [s for s in segments if (s["broker"], s["log_dir"]) == rk],
            [b for b in batches if (b["broker"], b["log_dir"]) == rk],
            [m for m in markers if (m["broker"], m["log_dir"]) == rk])
        assert rebuilt.label == log.label and rebuilt.batches == log.batches
        assert (rebuilt.lineage, rebuilt.log_end_offset, rebuilt.log_start_offset, rebuilt.high_watermark,
                rebuilt.recovery_point, rebuilt.epoch_checkpoint_lines) == \
               (log.lineage, log.log_end_offset, log.log_start_offset, log.high_watermark, log.recovery_point,
                log.epoch_checkpoint_lines)
        assert [asdict(m) for s in rebuilt.segments for m in s.markers.values()] == \
               [asdict(m) for s in log.segments for m in s.markers.values()]


def test_the_leader_comes_from_the_facts_else_from_the_evidence() -> None:
    logs, replicas, segments, batches, markers = partition_rows("kip101-scenario-2")
    run = lambda facts, source: analyze.analyze_partition(  # noqa: E731
        "orders", 0, replicas, segments, batches, markers, facts=facts, facts_source=source,
        protocol=Protocol.KIP279, kafka_version=DEFAULT_VERSION)
    chosen = run(analyze.PartitionFacts(2), analyze.LEADER_FROM_CLUSTER_STATE)
    assert chosen.leader == "broker-2" and chosen.leader_source == "cluster state" and not chosen.notes
    expected = plan_truncations([logs[1], logs[0]], protocol=Protocol.KIP279, kafka_version=DEFAULT_VERSION)
    assert [vars(p) for p in chosen.plans] == [vars(p) for p in expected]
    offline = run(analyze.PartitionFacts(-1, offline=True), analyze.LEADER_FROM_CLUSTER_STATE)
    assert offline.leader_source.startswith("evidence") and "offline" in offline.notes[0]
    missing = run(analyze.PartitionFacts(9), analyze.LEADER_FROM_LEADERS_FILE)
    assert missing.leader_source.startswith("evidence") and "broker 9" in missing.notes[0]
    none = run(None, None)
    last_epoch = lambda log: (log.lineage[-1].epoch, log.log_end_offset)  # noqa: E731
    assert none.leader == max(logs, key=last_epoch).label


def test_a_future_directory_is_reported_not_merged() -> None:
    logs, replicas, segments, batches, markers = partition_rows("kip101-scenario-1")
    future = {**replicas[1], "suffix": "future", "dir": replicas[1]["dir"] + ".abc-future"}
    result = analyze.analyze_partition("orders", 0, [replicas[0], future], segments, batches, markers, facts=None,
                                       facts_source=None, protocol=Protocol.DIVERGING_EPOCH,
                                       kafka_version=DEFAULT_VERSION)
    assert result.replicas == ("broker-1",) and "-future" in result.notes[0] and not result.plans


def test_records_are_compared_where_the_evidence_is_and_not_guessed_where_it_is_not() -> None:
    # same-records-other-batches: the rows name the segment files, which diverge's analysis reads
    _, replicas, segments, batches, markers = partition_rows("same-records-other-batches")

    def run(segment_rows, batch_rows):
        return analyze.analyze_partition("orders", 0, replicas, segment_rows, batch_rows, markers, facts=None,
                                         facts_source=None, protocol=Protocol.DIVERGING_EPOCH,
                                         kafka_version=DEFAULT_VERSION)

    here = run(segments, batches)
    assert [r.kind for d in here.divergences for r in d.ranges] == ["same_records"]
    assert not here.divergent and not here.notes
    # the same rows naming evidence this task cannot read (a remote URI): not compared, and said so
    away = run(*([{**r, "file": "s3a://evidence/" + r["file"]} for r in rows] for rows in (segments, batches)))
    assert [r.kind for d in away.divergences for r in d.ranges] == ["batches_differ"]
    assert away.divergent and "s3a://evidence/" in away.notes[0] and "batches_differ" in away.notes[0]


def test_leaders_documents_are_read_as_kafka_election_json_plus_leader() -> None:
    facts = analyze.facts_from_leaders({"partitions": [{"topic": "t", "partition": 3, "leader": 5}]})
    assert facts == {("t", 3): analyze.PartitionFacts(5)}


@pytest.mark.parametrize("zxid, offline", [pytest.param(0x17, True, id="no-leader-at-0x17"),
                                           pytest.param(None, False, id="broker-3-leads-at-the-end")])
def test_cluster_state_facts_carry_its_health_lists(zxid, offline) -> None:
    # The health lists name partitions "orders-0"; fleet analyze once looked them up by
    # ("orders", 0), so no partition was ever offline or under min ISR from a cluster state.
    from kreplica.model.cluster import load_cluster_state

    state = load_cluster_state([str(FIXTURES / "timeline" / "zookeeper")], at_zxid=zxid)
    (facts,) = analyze.facts_from_cluster_state(state).values()
    assert (facts.leader == -1, facts.offline, facts.under_min_isr) == (offline, offline, offline)


def test_fleet_without_java_is_a_usage_error(tmp_path) -> None:
    # Java is looked for once the fleet extra is there (without it, the missing extra is the error)
    pytest.importorskip("pyspark", reason="the Java check follows the fleet extra's (pyspark) check")
    env = {**os.environ, "PATH": os.path.dirname(sys.executable), "JAVA_HOME": ""}
    result = subprocess.run([sys.executable, "-m", "kreplica", "fleet", "scan",
                             str(SCENARIOS / "kip101-scenario-1"), "--output-dir", str(tmp_path / "t")],
                            capture_output=True, text=True, env=env)
    assert result.returncode == 2 and "needs Java 17" in result.stderr and result.stderr.count("\n") == 1


@pytest.mark.parametrize("log_dir", sorted(p.name for p in (FIXTURES / "logs").iterdir() if p.is_dir()))
def test_batch_rows_say_compression_and_timestamp_type_as_inspect_log_does(log_dir: str) -> None:
    # one vocabulary: the batches table and inspect-log's JSON give the same words (issue 22)
    from kreplica.report.schemas.inspect_log import batch_object

    (log,) = read_replicas([str(FIXTURES / "logs" / log_dir)], None, {})
    for b in log.batches:
        row = dict(zip(tables.BATCHES.names, tables.batch_row((7, "d", "t", 0), b)))
        obj = batch_object(b)
        assert (row["compression"], row["timestamp_type"]) == (obj["compression"], obj["timestamp_type"])
        assert tables.batch_fields(row) == b._asdict()


@pytest.mark.parametrize("code", range(8))  # the three bits of the attributes' codec field
def test_every_codec_id_has_a_word_and_comes_back(code: int) -> None:
    from kreplica.report.schemas import describe

    word = tables.compression_word(code)
    assert word == str(describe.compression(code)) and tables.compression_code(word) == code


def test_every_timestamp_type_has_inspect_logs_word_and_comes_back() -> None:
    from kreplica.formats.log.batch import CREATE_TIME, LOG_APPEND_TIME, NO_TIMESTAMP_TYPE
    from kreplica.report.schemas import describe

    for code in (NO_TIMESTAMP_TYPE, CREATE_TIME, LOG_APPEND_TIME):
        word = tables.timestamp_type_word(code)
        assert word == describe.timestamp_type(code) and tables.timestamp_type_code(word) == code


def test_the_analysis_tables_name_brokers_by_id_as_the_scan_tables_do() -> None:
    logs, replicas, segments, batches, markers = partition_rows("kip279-fast-failover")
    result = analyze.analyze_partition("orders", 0, replicas, segments, batches, markers, facts=None,
                                       facts_source=None, protocol=Protocol.KIP279, kafka_version=DEFAULT_VERSION)
    row = dict(zip((name for name, _ in analyze.ANALYSIS_PARTITIONS), analyze.partition_row(result)))
    broker = {log.label: log.broker_id for log in logs}
    assert (row["topic"], row["partition"]) == ("orders", 0)
    assert row["leader_broker"] == broker[result.leader] and isinstance(row["leader_broker"], int)
    assert row["brokers_losing_committed"] == [broker[f] for f in result.followers_losing_committed]
    assert result.followers_losing_committed  # the scenario loses committed data: the list is not vacuous
    assert row["divergent_pairs"] == sum(d.differs for d in result.divergences)


@pytest.mark.parametrize("code", [None, *range(8)])  # 7 is no type Kafka defines
def test_every_control_type_has_a_word_and_comes_back(code: int | None) -> None:
    from kreplica.report.schemas import describe

    word = tables.control_type_word(code)
    assert tables.control_type_code(word) == code
    assert word == describe.control_type(code) or (describe.control_type(code), word) == ("unknown", str(code))
