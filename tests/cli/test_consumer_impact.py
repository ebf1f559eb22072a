"""Consumer impact in ``truncate-plan``, ``plan-elect --log-dirs`` and ``timeline --log-dirs`` on
``fixtures/scenarios/unclean-with-groups``, end to end through the group loader: the
``__consumer_offsets`` partitions of the log directories a command reads (or of ``--groups``
SOURCEs) add ``consumer_impact`` objects after the command's own (before a closing summary) and a
text block leading with the groups at risk; without them the output is what it was.

Expected values, worked by hand from the fixture (``fixtures/generate.py``: ``GROUP_COMMITS`` and
``unclean_with_groups``). orders-0: broker 1 holds 0-99 (epoch 0) and 100-109 (epoch 3, after its
unclean election); broker 2 holds 0-99 and 100-119 (epoch 1). The groups' last commits: billing
115 (epoch 1), audit 118 (no epoch), search 110 (no epoch), ledger 100, reports 60, fresh 108
(epoch 3).

- broker 2 truncated to broker 1 (``truncate-plan``, and broker 1's election at epoch 3 in
  ``timeline``) loses 100-119: billing consumed 100-114 (15; epoch 1 is broker 2's), audit 100-117
  (18; 118 is above broker 1's end at the election, 100, and now, 110), search 100-109 (10); its
  110 is at broker 1's log end now, so ``truncate-plan`` cannot tell whose records it read (no
  epoch, no commit time) and ``read_from`` is None, while at the election broker 1 ended at 100
  and 110 can only be broker 2's. fresh (epoch 3) read broker 1's records; ledger (100) and reports
  (60) consumed nothing above 100.
- broker 1 failing and broker 2 elected uncleanly at epoch 4 (``plan-elect --fail 1``) loses
  broker 1's 100-109: fresh consumed 100-107 (8, epoch 3 is broker 1's), search 100-109 (10, whose
  it cannot tell), the others read broker 2's records or nothing above 100.
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import msgpack
import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from tests.conftest import FIXTURES

S = FIXTURES / "scenarios" / "unclean-with-groups"
LOG_DIRS = [x for b in (1, 2) for x in ("--log-dirs", f"{b}={S / f'broker-{b}'}")]
TRUNCATE = ["truncate-plan", "--leader", str(S / "broker-1" / "orders-0"), "--follower", str(S / "broker-2" / "orders-0")]
ELECT = ["plan-elect", str(S / "zookeeper"), "--fail", "1", "--unclean-allowed", "yes", *LOG_DIRS]
TIMELINE = ["timeline", str(S / "zookeeper"), *LOG_DIRS]
ARGS = {"truncate-plan": TRUNCATE, "plan-elect": ELECT, "timeline": TIMELINE}
COMMANDS = list(ARGS)

TRUNCATION = "broker-2's truncation to 100"
ELECTION_3 = "the unclean election of broker 1 at epoch 3"
ELECTION_4 = "the unclean election of broker 2 at epoch 4"
EXPECTED = {
    "truncate-plan": [(TRUNCATION, "audit", True, "lost_replica", 18, 118),
                      (TRUNCATION, "billing", True, "lost_replica", 15, 115),
                      (TRUNCATION, "search", True, None, 10, 110), (TRUNCATION, "fresh", False, "new_leader", 0, 108),
                      (TRUNCATION, "ledger", False, None, 0, 100), (TRUNCATION, "reports", False, None, 0, 60)],
    "plan-elect": [(ELECTION_4, "fresh", True, "lost_replica", 8, 108), (ELECTION_4, "search", True, None, 10, 110),
                   (ELECTION_4, "audit", False, "new_leader", 0, 118),
                   (ELECTION_4, "billing", False, "new_leader", 0, 115),
                   (ELECTION_4, "ledger", False, None, 0, 100), (ELECTION_4, "reports", False, None, 0, 60)],
    "timeline": [(ELECTION_3, "audit", True, "lost_replica", 18, 118),
                 (ELECTION_3, "billing", True, "lost_replica", 15, 115),
                 (ELECTION_3, "search", True, "lost_replica", 10, 110),
                 (ELECTION_3, "fresh", False, "new_leader", 0, 108),
                 (ELECTION_3, "ledger", False, None, 0, 100), (ELECTION_3, "reports", False, None, 0, 60)],
}
#: the text line that leads each command's block
AT_RISK = {"truncate-plan": "  AT RISK audit: committed 118 (no leader epoch); 18 consumed records the log no",
           "plan-elect": "  AT RISK fresh: committed 108 (leader epoch 3); 8 consumed records the log no",
           "timeline": "  AT RISK audit: committed 118 (no leader epoch); 18 consumed records the log no"}


def run(args: list[str], fmt: str = "ndjson"):
    return CliRunner().invoke(app, [*args, "-f", fmt])


def objects(result, fmt: str = "ndjson") -> list[dict]:
    if fmt == "msgpack":
        return list(msgpack.Unpacker(io.BytesIO(result.stdout_bytes), raw=False))
    if fmt == "json":
        return json.loads(result.stdout)
    return [json.loads(line) for line in result.stdout.splitlines()]


def impacts(objs: list[dict]) -> list[tuple]:
    return [(o["event"], o["group"], o["at_risk"], o["read_from"], o["consumed_and_lost"], o["committed_offset"])
            for o in objs if o["type"] == "consumer_impact"]


@pytest.mark.parametrize("fmt", ["ndjson", "json", "msgpack"])
@pytest.mark.parametrize("name", COMMANDS)
def test_groups_in_the_log_dirs_read(name: str, fmt: str) -> None:
    args = ARGS[name]
    result = run(args, fmt)
    assert result.exit_code == 1, result.output
    objs = objects(result, fmt)
    assert impacts(objs) == EXPECTED[name]
    kinds = [o["type"] for o in objs]
    first = kinds.index("consumer_impact")
    assert kinds[first:first + 6] == ["consumer_impact"] * 6
    assert kinds[first + 6:] in ([], ["election_summary"], ["timeline_summary"])


@pytest.mark.parametrize("name", COMMANDS)
def test_text_leads_with_the_groups_at_risk(name: str) -> None:
    args = ARGS[name]
    result = run(args, "text")
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    heading = next(i for i, line in enumerate(lines) if line.startswith("consumer groups of orders-0 after"))
    assert lines[heading + 2] == AT_RISK[name]
    assert any(line.startswith("  unaffected") for line in lines[heading:])
    assert all(len(line) <= 80 for line in lines)


def _without_groups(tmp_path: Path) -> Path:
    """The scenario's copy with no __consumer_offsets partition."""
    root = tmp_path / "scenario"
    shutil.copytree(S, root, ignore=shutil.ignore_patterns("__consumer_offsets-*"))
    return root


def _moved(args: list[str], root: Path) -> list[str]:
    return [a.replace(str(S), str(root)) for a in args]


@pytest.mark.parametrize("name", COMMANDS)
def test_without_group_evidence_nothing_is_added(name: str, tmp_path: Path) -> None:
    args = ARGS[name]
    root = _without_groups(tmp_path)
    bare = run(_moved(args, root))
    assert bare.exit_code == 1, bare.output
    with_groups = [o for o in objects(run(args)) if o["type"] != "consumer_impact"]
    assert json.dumps(objects(bare)).replace(str(root), str(S)) == json.dumps(with_groups)
    assert "consumer groups of" not in run(_moved(args, root), "text").stdout


@pytest.mark.parametrize("name", COMMANDS)
def test_groups_option(name: str, tmp_path: Path) -> None:
    """The same answer when the groups come from --groups (broker 2's log directory, or one
    __consumer_offsets-N directory per group) and the log directories read hold none."""
    args = ARGS[name]
    root = _without_groups(tmp_path)
    by_dir = run([*_moved(args, root), "--groups", str(S / "broker-2")])
    assert by_dir.exit_code == 1, by_dir.output
    assert [i[:5] for i in impacts(objects(by_dir))] == [i[:5] for i in EXPECTED[name]]
    partitions = [x for p in sorted((S / "broker-2").glob("__consumer_offsets-*")) for x in ("--groups", str(p))]
    assert impacts(objects(run([*_moved(args, root), *partitions]))) == impacts(objects(by_dir))


@pytest.mark.parametrize("name", COMMANDS)
def test_bad_groups_source_is_refused(name: str) -> None:
    args = ARGS[name]
    zk = run([*args, "--groups", str(S / "zookeeper")], "text")
    assert zk.exit_code == 2 and "ZooKeeper data directory" in zk.output
    other = run([*args, "--groups", str(S / "broker-1" / "orders-0")], "text")
    assert other.exit_code == 2 and "not of __consumer_offsets" in other.output
    missing = run([*args, "--groups", str(S / "nowhere")], "text")
    assert missing.exit_code == 2 and "nowhere" in missing.output


@pytest.mark.parametrize("command", ["plan-elect", "timeline"])
def test_groups_needs_log_dirs(command: str) -> None:
    result = run([command, str(S / "zookeeper"), "--groups", str(S / "broker-1")], "text")
    assert result.exit_code == 2
    assert "--groups: needs --log-dirs" in result.output


def test_truncate_plan_models_a_leader_behind_its_follower_as_kafka_elects_it() -> None:
    """Broker 2 (latest epoch 1) leading broker 1 (epoch 3): modelled at epoch 4, the lowest a
    controller could give it, or at --leader-epoch; an epoch no controller elects at is refused
    in one line with exit 2."""
    behind = ["truncate-plan", "--leader", str(S / "broker-2" / "orders-0"), "--follower", str(S / "broker-1" / "orders-0")]
    (plan,) = [o for o in objects(run(behind, "ndjson"), "ndjson") if o["type"] == "truncation"]
    assert (plan["elected"]["epoch"], plan["elected"]["given"], plan["truncate_to"]) == (4, False, 100)
    assert (plan["discarded"]["ranges"], plan["committed_loss"]) == ([[100, 109]], True)
    (given,) = [o for o in objects(run([*behind, "--leader-epoch", "7"], "ndjson"), "ndjson")
                if o["type"] == "truncation"]
    assert (given["elected"]["epoch"], given["elected"]["given"], given["truncate_to"]) == (7, True, 100)
    for epoch, says in (("3", "not above every replica's latest epoch"), ("-1", "a leader epoch is 0 or more")):
        refused = run([*behind, "--leader-epoch", epoch], "ndjson")
        assert refused.exit_code == 2 and says in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    # the counter-case: broker 1, at the newest epoch, leads as its files are
    (ahead,) = [o for o in objects(run(TRUNCATE, "ndjson"), "ndjson") if o["type"] == "truncation"]
    assert ahead["elected"] is None
