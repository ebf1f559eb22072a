"""Every text view readable in an 80-column terminal and using the width of a wider one (issue
20): each command of the README and the man pages that prints text, run on ``fixtures/`` at 80,
160 and (as the reference) 1,000 columns through ``COLUMNS``, as a terminal of that width sets it."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from tests.conftest import ROOT, oracle_dir
from tests.builders.text_width import UNWRAPPED, assert_readable

S = "fixtures/scenarios"
K = f"{S}/kip279-fast-failover"
T = "fixtures/timeline"
A = ["--assignment", "fixtures/reassign/assignment.json", "--brokers", "1-6", "--racks", "1:a,2:b,3:a,4:b,5:a,6:b"]
LOG_DIRS = [f"--log-dirs={b}={S}/three-replicas/broker-{b}" for b in (1, 2, 3)]

COMMANDS = [
    pytest.param(["inspect-log", "fixtures/logs"], id="inspect-log"),
    pytest.param(["inspect-log", "fixtures/damaged"], id="inspect-log-damaged"),
    pytest.param(["inspect-log", "--records", "--payload", "utf8", "fixtures/logs/payments-0"], id="inspect-log-records"),
    pytest.param(["inspect-dir", "fixtures/logs"], id="inspect-dir"),
    pytest.param(["inspect-dir", "fixtures/damaged/truncated-tail-0", "--shutdown", "unclean"], id="inspect-dir-unclean"),
    pytest.param(["inspect-index", "fixtures/logs/orders-0"], id="inspect-index"),
    pytest.param(["epochs", f"{S}/three-replicas/broker-1", f"{S}/three-replicas/broker-2", f"{S}/three-replicas/broker-3",
                  "--partition", "orders-0"], id="epochs"),
    pytest.param(["offset-for-epoch", f"{K}/broker-1/orders-0", "--epoch", "1", "--current-leader-epoch", "5"],
                 id="offset-for-epoch"),
    pytest.param(["truncate-plan", "--leader", f"{K}/broker-1/orders-0", "--follower", f"{K}/broker-2/orders-0"],
                 id="truncate-plan"),
    pytest.param(["truncate-plan", "--leader", f"{K}/broker-1/orders-0", "--follower", f"{K}/broker-2/orders-0",
                  "--protocol", "kip101"], id="truncate-plan-kip101"),
    pytest.param(["diverge", f"{S}/divergent-middle/broker-1/orders-0", f"{S}/divergent-middle/broker-2/orders-0"],
                 id="diverge"),
    pytest.param(["groups", "fixtures/groups/broker-1", "fixtures/groups/broker-2"], id="groups"),
    pytest.param(["zk", "dump", f"{T}/zookeeper"], id="zk-dump"),
    pytest.param(["zk", "log", f"{T}/zookeeper"], id="zk-log"),
    pytest.param(["cluster-state", f"{T}/zookeeper", "--at-zxid", "0x17"], id="cluster-state-zookeeper"),
    pytest.param(["cluster-state", "fixtures/elections/kraft"], id="cluster-state-kraft"),
    pytest.param(["plan-elect", "fixtures/elections/kraft", "--fail", "1", *LOG_DIRS], id="plan-elect"),
    pytest.param(["plan-elect", "fixtures/elections/kraft", "--sweep", "2", "--by-rack"], id="plan-elect-sweep"),
    pytest.param(["timeline", f"{T}/zookeeper", *[f"--log-dirs={b}={T}/broker-{b}" for b in (1, 2, 3)]], id="timeline"),
    pytest.param(["timeline", f"{T}/zookeeper", "--per-partition"], id="timeline-per-partition"),
    pytest.param(["plan-reassign", *A, "add-brokers", "5,6", "--sizes", "fixtures/reassign/log-dirs.json"],
                 id="plan-reassign"),
    pytest.param(["plan-reassign", *A, "decommission", "4", "--phases", "2", "--throttle", "50"],
                 id="plan-reassign-phases"),
    pytest.param(["transactions", "fixtures/transactions/broker-1"], id="transactions"),
]
ORACLE_COMMANDS = [
    pytest.param(["cluster-state", "zookeeper/gz-snapshot-plus-logs"], id="cluster-state-endpoints"),
    pytest.param(["timeline", "zookeeper/snapshot-plus-logs"], id="timeline-paths"),
    pytest.param(["plan-reassign", "zookeeper/snapshot-plus-logs", "verify"], id="plan-reassign-verify"),
]


def _text(args: list[str], width: int) -> str:
    result = CliRunner().invoke(app, [*args, "-f", "text"], env={"COLUMNS": str(width)})
    assert result.exit_code in (0, 1), result.stderr
    return result.stdout


def _check(args: list[str]) -> None:
    wide = _text(args, UNWRAPPED)
    for width in (80, 160):
        assert_readable(_text(args, width), wide, width)


@pytest.mark.parametrize("args", COMMANDS)
def test_text_fits_80_and_160_columns(args: list[str], monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    _check(args)


@pytest.mark.parametrize("args", ORACLE_COMMANDS)
def test_text_of_real_evidence_fits(args: list[str]) -> None:
    _check([args[0], str(oracle_dir(*args[1].split("/"))), *args[2:]])


def test_a_wider_terminal_is_used(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    """The timeline fits its rows to the terminal, whatever it is: 80 columns are not 160."""
    narrow, wide = (_text(["timeline", f"{T}/zookeeper"], w) for w in (80, 160))
    assert max(map(len, narrow.splitlines())) <= 80 < max(map(len, wide.splitlines()))


EPOCHS_AT_80 = """\
leader epochs
┏━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━┓
┃                 ┃ broker-1          ┃ broker-2          ┃ broker-3           ┃
┡━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━┩
│ log start / end │ 0 / 15            │ 0 / 12            │ 0 / 9              │
│ high watermark  │ 15                │ 10                │ 6                  │
│ epoch 0         │ 0-9 (2 batches);  │ 0-9 (2 batches);  │ 0-5 (2 batches);   │
│                 │ ckpt 0            │ ckpt 0            │ ckpt 0             │
│ epoch 1         │ -                 │ 10-11 (1 batch);  │ 6-8 (1 batch);     │
│                 │                   │ ckpt 10           │ ckpt 6             │
│ epoch 2         │ 10-14 (1 batch);  │ -                 │ -                  │
│                 │ ckpt 10           │                   │                    │
│ broker loads    │ 0@0, 2@10         │ 0@0, 1@10         │ 0@0, 1@6           │
└─────────────────┴───────────────────┴───────────────────┴────────────────────┘
"""


def test_side_by_side_epochs_keep_each_part_of_a_cell_whole(monkeypatch) -> None:
    """``10-11 (1 batch)`` and ``ckpt 10`` each stay on one line of their cell (at 80 columns rich
    cut ``ckpt`` from its ``10``), and a batch count agrees with its noun."""
    monkeypatch.chdir(ROOT)
    args = ["epochs", *[f"{S}/three-replicas/broker-{b}" for b in (1, 2, 3)], "--partition", "orders-0"]
    assert _text(args, 80) == EPOCHS_AT_80


def test_zk_dump_shows_as_much_data_as_the_terminal_has_room_for(monkeypatch) -> None:
    """A node's data is cut where the line ends, not at 72 characters whatever the width."""
    monkeypatch.chdir(ROOT)
    args = ["zk", "dump", f"{T}/zookeeper", "--path", "/brokers/ids/*"]
    lines = {w: next(ln for ln in _text(args, w).splitlines() if '{"features"' in ln) for w in (80, 160, 300)}
    assert len(lines[80]) <= 80 and len(lines[160]) == 160 and lines[300].endswith("}")
