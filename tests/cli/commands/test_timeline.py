"""``kreplica timeline`` end to end: ndjson on stdout, exit statuses, the selection options, the
text report (rendered whole at a fixed width), and the README example on fixtures/."""

from __future__ import annotations

import io
import json

import msgpack
import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from tests.conftest import FIXTURES
from tests.builders.zk_history import ZkHistory

ZK = str(FIXTURES / "timeline" / "zookeeper")
DIRS = [a for b in (1, 2, 3) for a in ("--log-dirs", f"{b}={FIXTURES / 'timeline' / f'broker-{b}'}")]


def _run(*args):
    result = CliRunner().invoke(app, ["timeline", *args])
    return result.exit_code, [json.loads(line) for line in result.stdout.splitlines() if line.strip()], result


def test_ndjson_events_then_evidence_then_summary():
    code, objs, _ = _run(ZK, *DIRS, "-f", "ndjson")
    assert code == 1      # an unclean election, an offline period, a zombie epoch, data lost
    types = [o["type"] for o in objs]
    assert types[-1] == "timeline_summary" and types.count("election_loss") == 1
    assert types.index("epoch_evidence") > max(i for i, t in enumerate(types) if t.endswith("_event"))
    parts = [(o["position"], o["cause"]) for o in objs if o["type"] == "partition_event"]
    assert parts == [("0x13", "created"), ("0x14", "isr_shrink"), ("0x17", "leader_election"),
                     ("0x18", "unclean_leader_election"), ("0x19", "isr_expand"), ("0x1a", "controlled_shutdown")]
    summary = objs[-1]
    # offline from when its leader stopped, broker 1's session expiring at 0x15, not from the
    # controller's next write of the state (0x17): the leader was dead from then on
    assert summary["offline_periods"] == [{"partition": "orders-0", "from": "0x15", "from_time": 1700000021000,
                                           "to": "0x18", "to_time": 1700000024000, "since_after": False}]
    assert summary["zombie_epochs"] == [{"partition": "orders-0", "epoch": 1, "replicas": [1]}]
    assert summary["epochs_without_data"] == [{"partition": "orders-0", "epoch": 3, "leader": 3}]
    brokers = [(o["broker"], o["event"]) for o in objs if o["type"] == "broker_event" and o["event"] != "snapshot"]
    assert brokers == [(1, "session_expired"), (2, "session_closed")]


def test_json_is_one_array_and_msgpack_the_same_stream():
    code, stream, _ = _run(ZK, "-f", "ndjson")
    assert code == 1 and stream[-1]["type"] == "timeline_summary"
    result = CliRunner().invoke(app, ["timeline", ZK, "-f", "json"])
    assert result.exit_code == 1 and json.loads(result.stdout) == stream
    packed = CliRunner().invoke(app, ["timeline", ZK, "-f", "msgpack"])
    assert packed.exit_code == 1
    assert list(msgpack.Unpacker(io.BytesIO(packed.stdout_bytes), raw=False, strict_map_key=False)) == stream


def test_clean_history_exits_0(tmp_path):
    h = ZkHistory()
    h.create_topic("orders", {0: [1, 2, 3]})
    h.set_state("orders", 0, 1, 0, [1, 2], by_broker=1)
    code, objs, _ = _run(str(h.write(tmp_path)), "-f", "ndjson")
    assert code == 0 and objs[-1]["unclean_elections"] == [] and objs[-1]["offline_periods"] == []


def test_selection_by_partition_broker_and_window():
    _, objs, _ = _run(ZK, "--broker", "2", "--from", "0x17", "--to", "0x18", "-f", "ndjson")
    assert [(o["type"], o.get("cause") or o.get("event"), o["position"]) for o in objs[:-1]] == [
        ("broker_event", "snapshot", "0xd"), ("partition_event", "snapshot", "0x17"),
        ("partition_event", "unclean_leader_election", "0x18")]
    code, objs, result = _run(ZK, "--partition", "nope-0", "-f", "ndjson")   # a typo: nothing printed, exit 2
    assert code == 2 and objs == [] and "no partition 'nope-0' in the evidence (it has orders-0)" in result.stderr


@pytest.mark.parametrize("args, message", [
    pytest.param(["--from", "yesterday"], "--from", id="bad-from"),
    pytest.param(["--partition", "orders"], "TOPIC-PARTITION", id="bad-partition"),
    pytest.param(["--log-dirs", "one=/tmp"], "BROKER=DIR", id="bad-log-dirs"),
    pytest.param(["--log-dirs", "1=/no/such/dir"], "no such file or directory", id="missing-log-dir"),
])
def test_bad_usage_exits_2(args, message):
    result = CliRunner().invoke(app, ["timeline", ZK, *args, "-f", "ndjson"])
    assert result.exit_code == 2 and result.stdout == "" and message in result.stderr


def test_unreadable_source_exits_2(tmp_path):
    (tmp_path / "junk.txt").write_text("x")
    result = CliRunner().invoke(app, ["timeline", str(tmp_path), "-f", "ndjson"])
    assert result.exit_code == 2 and "no ZooKeeper or KRaft metadata files" in result.stderr


def test_text_report():
    from rich.console import Console

    from kreplica.analysis.timeline.events import PartitionEvent, TimelineSummary
    from kreplica.analysis.timeline.zookeeper import iter_zookeeper_timeline
    from kreplica.model.zookeeper import find_zk_files
    from kreplica.report.schemas.timeline import event_to_dict, summary_to_dict
    from kreplica.report.text.timeline import render_text

    summary, objs, end = TimelineSummary(), [], None
    for ev in iter_zookeeper_timeline(find_zk_files([ZK])):
        if hasattr(ev, "source_kind"):
            end = ev
            continue
        summary.feed(ev)
        objs.append(event_to_dict(ev, "zookeeper"))
    out = io.StringIO()
    render_text([o for o in objs if o["type"] == "partition_event"], summary_to_dict(end, summary, []), [],
                Console(file=out, width=200, color_system=None, highlight=False), per_partition=True)
    text = out.getvalue()
    lines = text.splitlines()
    # the verdict needs the whole history: it comes last, after the streamed table
    assert lines[-1] == ("PROBLEMS zookeeper history 0xf .. 0x1b: 6 partition events, 5 broker events, "
                         "3 controller events; 1 unclean election, 1 offline period")
    assert lines[0] == "orders-0"
    assert any("0x18" in line and "unclean_leader_election" in line and "none→2" in line for line in lines)
    assert any("0x17" in line and "leader_election OFFLINE" in line for line in lines)
    assert "offline orders-0 from 0x15 (2023-11-14 22:13:41.000) until 0x18 (2023-11-14 22:13:44.000)" in text
    assert isinstance(PartitionEvent, type)


def test_readme_example_runs_on_fixtures():
    result = CliRunner().invoke(app, ["timeline", ZK, *DIRS, "--partition", "orders-0", "-f", "text"])
    assert result.exit_code == 1
    assert "unclean election orders-0 at 0x18 (epoch 2, 1→2): 25 offsets lost, 10 below the old high watermark" \
        in " ".join(result.stdout.split())
