"""Every command that reads a broker log directory or a ZooKeeper data directory, run on every
real one of ``../shared/oracle/wild/`` (152 directories of 85 commit states): no internal error
(exit 0, 1 or 2, never 3, never a traceback), none of the findings the corpus's README shows
false, and no "OK" about a cluster with no broker and no topic, or about a history with no event.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.interop.wild_cases import FALSE_KINDS, Ran, WildDir, run, wild_dir, wild_dirs

pytestmark = pytest.mark.interop

#: what each kind of directory is read by, ``{}`` standing for it (plan-reassign with an action that
#: plans on every broker; epochs on every partition directory of the log directory, read together)
COMMANDS = {
    "zk-data": ("zk dump {}", "cluster-state {}", "timeline {}", "plan-elect {}", "plan-reassign {} rebalance"),
    "kraft": ("inspect-dir {}", "epochs", "cluster-state {}", "timeline {}", "plan-elect {}",
              "plan-reassign {} rebalance"),
    "zookeeper": ("inspect-dir {}", "epochs"),
}


def _partitions(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if p.is_dir() and p.name.rsplit("-", 1)[-1].isdigit()
                  and not p.name.startswith("__cluster_metadata"))


def _argv(d: WildDir, command: str) -> list:
    if command == "epochs":
        return ["epochs", *_partitions(d.path)]
    return [d.path if word == "{}" else word for word in command.split()]


def _params():
    return [pytest.param(d, command, id=f"{d.id}:{command.split()[0]}")
            for d in wild_dirs() for command in COMMANDS[d.kind]
            if command != "epochs" or _partitions(d.path)]


def test_the_corpus_is_there() -> None:
    """Skips outside CI, fails in CI when ``../shared`` is absent (the sweep then has no case)."""
    wild_dir()
    dirs = wild_dirs()
    assert len(dirs) > 100 and len({d.id for d in dirs}) == len(dirs)


@pytest.mark.parametrize(("d", "command"), _params())
def test_no_internal_error_no_false_finding_no_empty_ok(d: WildDir, command: str) -> None:
    ran = run(*_argv(d, command))
    assert ran.exit_code in (0, 1, 2), ran.stderr
    assert "Traceback" not in ran.stderr and "internal error" not in ran.stderr
    if ran.exit_code == 2:
        assert ran.stderr.startswith("kreplica: error: ") and ran.stderr.count("\n") == 1, ran.stderr
        return
    assert ran.finding_kinds & FALSE_KINDS == set(), [f for f in ran.of_type("finding") if f["kind"] in FALSE_KINDS]
    _no_empty_ok(ran, command)


def _no_empty_ok(ran: Ran, command: str) -> None:
    for state in ran.of_type("cluster_state"):
        assert state["brokers"] or state["topics"], "a cluster state of no broker and no topic"
    for summary in ran.of_type("timeline_summary"):
        assert sum(summary["events"].values()) > 0, "a history without any event"
    if command.startswith("timeline") and ran.exit_code == 0:
        assert not any(f["severity"] == "error" for f in ran.of_type("finding"))
