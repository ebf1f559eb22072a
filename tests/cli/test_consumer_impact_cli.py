"""Consumer impact in ``truncate-plan``, ``plan-elect --log-dirs`` and ``timeline --log-dirs`` on
``fixtures/scenarios/unclean-with-groups``: with group evidence, ``consumer_impact`` objects come
after the command's own (before a closing summary) and the text adds a block leading with the
groups at risk; without it, the output is what it was.

The group evidence is fed through ``kreplica.cli.group_evidence.committed_offsets`` (the seam the
group loader plugs into) from the log directories the command reads, by the test-only replay of
``tests/group_offsets.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kreplica.cli import group_evidence
from kreplica.cli.main import app
from tests.conftest import FIXTURES
from tests.group_offsets import read_committed_offsets

S = FIXTURES / "scenarios" / "unclean-with-groups"
LOG_DIRS = [x for b in (1, 2) for x in ("--log-dirs", f"{b}={S / f'broker-{b}'}")]
TRUNCATE = ["truncate-plan", "--leader", str(S / "broker-1" / "orders-0"), "--follower", str(S / "broker-2" / "orders-0")]
ELECT = ["plan-elect", str(S / "zookeeper"), "--fail", "1", "--unclean-allowed", "yes", *LOG_DIRS]
TIMELINE = ["timeline", str(S / "zookeeper"), *LOG_DIRS]


@pytest.fixture
def groups(monkeypatch):
    """The loader's stand-in: each log directory's groups (every broker holds the same replicas)."""
    def offsets(log_dirs, groups=()):
        first = next(iter(log_dirs))
        return tuple(read_committed_offsets(Path(first)))
    monkeypatch.setattr(group_evidence, "committed_offsets", offsets)


def run(args: list[str], fmt: str = "ndjson"):
    result = CliRunner().invoke(app, [*args, "-f", fmt])
    objs = [json.loads(line) for line in result.stdout.splitlines()] if fmt == "ndjson" else []
    return result, objs


def impacts(objs: list[dict]) -> list[tuple]:
    return [(o["event"], o["group"], o["at_risk"], o["read_from"], o["consumed_and_lost"])
            for o in objs if o["type"] == "consumer_impact"]


@pytest.mark.parametrize("args", [pytest.param(TRUNCATE, id="truncate-plan"), pytest.param(ELECT, id="plan-elect"),
                                  pytest.param(TIMELINE, id="timeline")])
def test_without_group_evidence_nothing_is_added(args: list[str]) -> None:
    result, objs = run(args)
    assert result.exit_code == 1, result.output
    assert not [o for o in objs if o["type"] == "consumer_impact"]
    text, _ = run(args, "text")
    assert "consumer groups of" not in text.stdout


def test_truncate_plan(groups) -> None:
    result, objs = run(TRUNCATE)
    assert result.exit_code == 1, result.output
    assert [o["type"] for o in objs] == ["truncation", *["consumer_impact"] * 6]
    event = "broker-2's truncation to 100"
    assert impacts(objs) == [(event, "audit", True, "lost_replica", 18), (event, "billing", True, "lost_replica", 15),
                             (event, "search", True, None, 10), (event, "fresh", False, "new_leader", 0),
                             (event, "ledger", False, None, 0), (event, "reports", False, None, 0)]
    text, _ = run(TRUNCATE, "text")
    lines = text.stdout.splitlines()
    start = lines.index("consumer groups of orders-0 after broker-2's truncation to 100: offsets 100-119")
    assert lines[start + 2].startswith("  AT RISK audit: committed 118")
    assert all(len(line) <= 80 for line in lines)


def test_plan_elect(groups) -> None:
    result, objs = run(ELECT)
    assert result.exit_code == 1, result.output
    assert [o["type"] for o in objs] == ["election", "election_candidates", *["consumer_impact"] * 6, "summary"]
    assert impacts(objs)[:2] == [("the unclean election of broker 2 at epoch 4", "fresh", True, "lost_replica", 8),
                                 ("the unclean election of broker 2 at epoch 4", "search", True, None, 10)]
    text, _ = run(ELECT, "text")
    assert "AT RISK fresh: committed 108 (leader epoch 3); 8 consumed records the" in text.stdout


def test_timeline(groups) -> None:
    result, objs = run(TIMELINE)
    assert result.exit_code == 1, result.output
    kinds = [o["type"] for o in objs]
    assert kinds[-7:] == [*["consumer_impact"] * 6, "timeline_summary"]
    event = "the unclean election of broker 1 at epoch 3"
    assert impacts(objs)[:3] == [(event, "audit", True, "lost_replica", 18), (event, "billing", True, "lost_replica", 15),
                                 (event, "search", True, "lost_replica", 10)]
    text, _ = run(TIMELINE, "text")
    out = text.stdout
    assert out.index("unclean election orders-0 at 0x1a") < out.index("consumer groups of orders-0 after the unclean "
                                                                    "election of broker 1 at epoch 3") < out.index("PROBLEMS")
