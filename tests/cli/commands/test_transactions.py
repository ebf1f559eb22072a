"""``kreplica transactions`` through its command line, on ``fixtures/transactions`` and on
partitions written in the test: the objects and their order, every format, the options, exit
codes, and the text report rendered whole at 80 columns."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import msgpack
import pytest
from typer.testing import CliRunner

from kreplica.analysis.transactions.analysis import analyze_transactions
from kreplica.cli.main import app
from kreplica.formats.coordinator.records import TRANSACTION_STATE
from kreplica.formats.log.batch import CONTROL_COMMIT
from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.logdir.log_dir import find_log_dirs
from kreplica.report.output.console import text_console
from kreplica.report.schemas.transactions import report_objects
from kreplica.report.text.transactions import render_text
from tests.builders.transactions import (TS, coordinator_records, data, marker, txn_key, txn_value,
                                                write_partition)
from tests.conftest import FIXTURES

BROKER = FIXTURES / "transactions" / "broker-1"


def run(*args):
    return CliRunner().invoke(app, ["transactions", *[str(a) for a in args]])


def ndjson(result) -> list[dict]:
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_the_fixture_as_ndjson() -> None:
    result = run(BROKER, "-f", "ndjson")
    assert result.exit_code == 1, result.stderr
    objs = ndjson(result)
    assert [o["type"] for o in objs] == ["hanging_transaction"] * 2 + ["transaction_log"] + ["transaction"] * 5 + \
        ["open_transaction"] * 4
    hanging = {(o["topic"], o["partition"], o["producer_id"]): (o["reason"], o["transactional_id"],
                                                                o["last_stable_offset"], o["pins_lso"])
               for o in objs if o["type"] == "hanging_transaction"}
    assert hanging == {("transfers", 0, 8003): ("producer_fenced", "txn-fenced", 7, True),
                       ("transfers", 1, 8100): ("timed_out", None, 6, True)}
    ongoing = next(o for o in objs if o["type"] == "transaction" and o["transactional_id"] == "txn-ongoing")
    assert [(t["topic"], t["partition"], t["first_offset"], t["status"]) for t in ongoing["open_transactions"]] == \
        [("transfers", 0, 11, "ongoing"), ("transfers", 1, 7, "ongoing")]
    assert ongoing["partitions"] == [{"topic": "transfers", "partition": 0}, {"topic": "transfers", "partition": 1}]
    log = next(o for o in objs if o["type"] == "transaction_log")
    assert (log["records"], log["transactional_ids"], log["kafka_stopped_at"]) == (23, 5, None)


def test_json_and_msgpack_carry_the_ndjson_objects() -> None:
    objs = ndjson(run(BROKER, "-f", "ndjson"))
    assert json.loads(run(BROKER, "-f", "json").stdout) == objs
    packed = CliRunner().invoke(app, ["transactions", str(BROKER), "-f", "msgpack"]).stdout_bytes
    assert list(msgpack.Unpacker(io.BytesIO(packed))) == objs


def test_every_partition_read_decides_a_producer_without_transactional_id() -> None:
    objs = ndjson(run(BROKER, "--transaction-state-log-num-partitions", "1", "-f", "ndjson"))
    assert [o["reason"] for o in objs if o["type"] == "hanging_transaction"] == ["producer_fenced",
                                                                                 "no_transactional_id"]


def test_a_longer_timeout_leaves_the_old_transaction_undecided() -> None:
    result = run(BROKER, "--transaction-max-timeout-ms", str(3_600_000), "-f", "ndjson")
    objs = ndjson(result)
    assert [o["producer_id"] for o in objs if o["type"] == "hanging_transaction"] == [8003]
    unknown = next(o for o in objs if o["type"] == "open_transaction" and o["producer_id"] == 8100)
    assert (unknown["status"], unknown["reason"], unknown["find_hanging"]) == \
        ("undecided", "coordinator_partition_missing", False)


def test_at_time_before_the_fence_finds_the_transaction_ongoing() -> None:
    result = run(BROKER, "--at-time", "2023-11-14T22:13:51Z", "-f", "ndjson")
    assert result.exit_code == 0, result.stderr
    opened = [o for o in ndjson(result) if o["type"] == "open_transaction"]
    assert [(o["producer_id"], o["status"], o["age_ms"]) for o in opened] == [(8003, "ongoing", 999)]


def test_now_ages_the_transactions() -> None:
    objs = ndjson(run(BROKER, "--now", str(TS + 31_001), "-f", "ndjson"))
    assert {o["producer_id"]: o["age_ms"] for o in objs if o["type"] == "open_transaction" and
            o["topic"] == "transfers" and o["partition"] == 0} == {8003: 1000, 8002: 31_001 - 1_681_001}


def test_at_offset_replays_the_coordinator_up_to_it() -> None:
    objs = ndjson(run(BROKER, "--at-offset", "14", "-f", "ndjson"))
    fenced = next(o for o in objs if o["type"] == "transaction" and o["transactional_id"] == "txn-fenced")
    assert (fenced["state"], fenced["record_offset"]) == ("Ongoing", 14)
    assert not any(o["type"] == "transaction" and o["transactional_id"] == "txn-ongoing" for o in objs)


def test_transactional_id_filters() -> None:
    result = run(BROKER, "--transactional-id", "txn-ongoing", "-f", "ndjson")
    assert result.exit_code == 0, result.stderr
    objs = ndjson(result)
    assert {o["type"] for o in objs} == {"transaction_log", "transaction", "open_transaction"}
    assert {o["transactional_id"] for o in objs if o["type"] != "transaction_log"} == {"txn-ongoing"}
    assert run(BROKER, "--transactional-id", "txn-fenced", "-f", "ndjson").exit_code == 1


@pytest.mark.parametrize("args, message", [
    pytest.param(["--transactional-id", "txn-fnced"],
                 "--transactional-id: no transactional id 'txn-fnced' in the evidence (it has txn-fenced, ",
                 id="an unknown transactional id, closest first"),
    pytest.param(["--at-time", "2020-01-01T00:00:00Z"], "--at-time: 2020-01-01T00:00:00.000Z is before the evidence",
                 id="a time before the evidence"),
    pytest.param(["--at-time", "2030-01-01T00:00:00Z"], "--at-time: 2030-01-01T00:00:00.000Z is beyond the evidence",
                 id="a time beyond it"),
    pytest.param(["--at-offset", "23"], "--at-offset: offset 23 is beyond the evidence, which ends at offset 22",
                 id="an offset beyond the coordinator log"),
    pytest.param(["--at-offset", "x"], "--at-offset: expected a non-negative integer offset, got 'x'",
                 id="not an offset"),
    pytest.param(["--now", "yesterday"], "--now: expected epoch milliseconds or an ISO-8601 time, got 'yesterday'",
                 id="not a time"),
])
def test_usage_errors_are_exit_2_in_one_line(args, message) -> None:
    result = run(BROKER, *args, "-f", "ndjson")
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.startswith(f"kreplica: error: {message}")
    assert result.stderr.count("\n") == 1


def test_at_offset_needs_one_coordinator_partition(tmp_path: Path) -> None:
    result = run(BROKER / "transfers-0", "--at-offset", "3", "-f", "ndjson")
    assert result.exit_code == 2
    assert "needs one __transaction_state partition in the evidence, which holds 0" in result.stderr
    for n in (0, 1):
        write_partition(tmp_path, f"{TRANSACTION_STATE}-{n}",
                        coordinator_records([(txn_key(f"t{n}"), txn_value("Empty", n))]))
    result = run(tmp_path, "--at-offset", "0", "-f", "ndjson")
    assert result.exit_code == 2 and "which holds 2 (0, 1)" in result.stderr


def test_no_transaction_anywhere_is_exit_0(tmp_path: Path) -> None:
    write_partition(tmp_path, "t-0", [data(0, 2, pid=5, epoch=0, txn=True), marker(2, 5, CONTROL_COMMIT)], hw=3)
    result = run(tmp_path, "-f", "ndjson")
    assert (result.exit_code, ndjson(result)) == (0, [])


def test_a_coordinator_record_that_does_not_decode_is_an_error_finding(tmp_path: Path) -> None:
    write_partition(tmp_path, f"{TRANSACTION_STATE}-0",
                    coordinator_records([(txn_key("a"), txn_value("Ongoing", 1)[:-2]),
                                         (txn_key("b"), txn_value("Empty", 2))]))
    result = run(tmp_path, "-f", "ndjson")
    assert result.exit_code == 1
    objs = ndjson(result)
    assert objs[0]["type"] == "finding" and objs[0]["kind"] == "coordinator_invalid_record"
    log = next(o for o in objs if o["type"] == "transaction_log")
    assert (log["kafka_stopped_at"], log["transactional_ids"]) == (0, 1)


def test_the_groups_a_hanging_transaction_stalls() -> None:
    committed = [CommittedOffset("reader", "transfers", 0, 7, 0, "", TS, None, 4, 12, "broker-1", 3),
                 CommittedOffset("behind", "transfers", 0, 5, 0, "", TS, None, 5, 12, "broker-1", 3)]
    result = analyze_transactions(find_log_dirs([str(BROKER)]), committed=committed)
    objs = report_objects(result)
    fenced = next(o for o in objs if o["type"] == "hanging_transaction" and o["producer_id"] == 8003)
    assert fenced["stalled_groups"] == [{"group": "reader", "offset": 7, "leader_epoch": 0,
                                         "coordinator_partition": 12, "source": "broker-1"}]
    out = io.StringIO()
    render_text(objs, result, text_console(out))
    assert "read_committed consumers stalled at 7: reader at 7" in out.getvalue()


def test_the_groups_in_the_same_log_dirs_are_named(tmp_path: Path) -> None:
    """The groups come from the __consumer_offsets partitions beside the data: "reader" committed
    7 in transfers-0, where producer 8003's hanging transaction pins the last stable offset at 7
    (so its read_committed consumers wait there: stalled); "behind" committed 5, below it (it
    still has records 5-6 to read: not stalled). Without them no group is named. A
    __consumer_offsets-N directory given alone counts the same."""
    from fixtures.generate import consumer_offsets

    copy = tmp_path / "broker-1"
    shutil.copytree(BROKER, copy)
    consumer_offsets(copy, {"reader": [(7, 0, 3)], "behind": [(5, 0, 3)]}, topic="transfers")
    result = run(copy, "-f", "ndjson")
    assert result.exit_code == 1, result.output
    fenced = next(o for o in ndjson(result) if o["type"] == "hanging_transaction" and o["producer_id"] == 8003)
    assert [(g["group"], g["offset"], g["leader_epoch"]) for g in fenced["stalled_groups"]] == [("reader", 7, 0)]
    alone = [str(copy / "transfers-0"), str(copy / "__transaction_state-0"),
             *map(str, sorted(copy.glob("__consumer_offsets-*")))]
    again = next(o for o in ndjson(run(*alone, "-f", "ndjson"))
                 if o["type"] == "hanging_transaction" and o["producer_id"] == 8003)
    assert again["stalled_groups"] == fenced["stalled_groups"]
    without = next(o for o in ndjson(run(BROKER, "-f", "ndjson"))
                   if o["type"] == "hanging_transaction" and o["producer_id"] == 8003)
    assert without["stalled_groups"] == []


def test_evidence_is_left_as_it_was(tmp_path: Path) -> None:
    copy = tmp_path / "broker-1"
    shutil.copytree(BROKER, copy)
    before = {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()}
    run(copy, "-f", "ndjson")
    assert {p: p.read_bytes() for p in copy.rglob("*") if p.is_file()} == before


TEXT = """\
HANGING transfers-0 (broker-1): producer 8003 epoch 0 from offset 7
  open 29m 29s, pins the last stable offset at 7; the producer was fenced:
    txn-fenced is at epoch 2 (Empty), and the coordinator's marker never reached
    this partition
HANGING transfers-1 (broker-1): producer 8100 epoch 0 from offset 6
  open 29m, pins the last stable offset at 6; past transaction.max.timeout.ms
    (15m), when the coordinator aborts a transaction; no transactional id in the
    evidence uses producer 8100
coordinator state: __transaction_state-0 of broker-1 (1 of 50 partitions)
transactional ids
┏━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━┳━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━┓
┃ transactional ┃                ┃ producer    ┃              ┃                ┃
┃ id            ┃ state          ┃ (epoch)     ┃ partitions   ┃ open at        ┃
┡━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━┩
│ txn-aborted   │ CompleteAbort  │ 8001 (0)    │ -            │ -              │
│ txn-committed │ CompleteCommit │ 8000 (0)    │ -            │ -              │
│ txn-fenced    │ Empty          │ 8003 (2)    │ -            │ transfers-0@7  │
│ txn-ongoing   │ Ongoing        │ 8002 (0)    │ transfers-0, │ transfers-0@11 │
│               │                │             │ transfers-1  │ transfers-1@7  │
│ txn-v2        │ CompleteCommit │ 8005 (1)    │ -            │ -              │
└───────────────┴────────────────┴─────────────┴──────────────┴────────────────┘
open transactions
┏━━━━━━━━━━━━━┳━━━━━━━━━━━━┳━━━━━━━━━┳━━━━━━━━━┳━━━━━┳━━━━━━━━━┳━━━━━━━━━━━━━━━┓
┃             ┃ producer   ┃         ┃         ┃     ┃         ┃ transactional ┃
┃ partition   ┃ (epoch)    ┃ offsets ┃ age     ┃ LSO ┃ status  ┃ id            ┃
┡━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━╇━━━━━━━━━╇━━━━━╇━━━━━━━━━╇━━━━━━━━━━━━━━━┩
│ transfers-0 │ 8003 (0)   │ 7-8     │ 29m 29s │ 7   │ hanging │ txn-fenced    │
│ transfers-0 │ 8002 (0)   │ 11-12   │ 1m 58s  │ 7   │ ongoing │ txn-ongoing   │
│ transfers-1 │ 8100 (0)   │ 6-6     │ 29m     │ 6   │ hanging │ -             │
│ transfers-1 │ 8002 (0)   │ 7-8     │ 1m 57s  │ 6   │ ongoing │ txn-ongoing   │
└─────────────┴────────────┴─────────┴─────────┴─────┴─────────┴───────────────┘
(left out at 80 columns: replica; a wider terminal or -f json shows them)
2 hanging transactions; 2 ongoing transactions (5 transactional ids)
"""


def test_the_text_report_leads_with_the_hanging_transactions() -> None:
    result = analyze_transactions(find_log_dirs([str(BROKER)]))
    out = io.StringIO()
    render_text(report_objects(result), result, text_console(out))
    assert out.getvalue() == TEXT
