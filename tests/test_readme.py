"""The README documents every finding kind, its quick start is what CI runs, every command it shows\nruns as shown and every output it shows is what the tool prints."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import NamedTuple

import pytest

from kreplica.formats.findings import KINDS
from tests.conftest import ROOT
from tests.examples import cannot_run, expand, run_line


def test_every_finding_kind_is_documented() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    missing = [k for k in KINDS if f"| `{k}` |" not in readme]
    assert missing == []


def test_ci_runs_the_readme_quick_start() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    block = readme.split("## Quick start", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [line.strip() for line in block.strip().splitlines()]
    assert len(commands) == 2
    install, test = commands
    assert install in ci
    assert any(line.strip() == test for line in ci.splitlines())


# -- every command shown, run; every output shown, compared --------------------------------------
#
# A README code block in ``sh`` lists command lines; one in ``console`` gives ``$ command`` lines
# each followed by what it prints, compared whole. In a command's comment, ``exit N`` is the status
# it ends with (0 when not said), and text after ``→`` is printed by it: ``...`` stands for what is
# left out, and the pieces appear in that order on one line of its output. Lines that cannot run
# from a clone are listed in NOT_RUN with the reason.

NOT_RUN = {
    "python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test,fleet]' "
    "&& kreplica inspect-log fixtures/logs":
        "the quick start: .ci/run runs it verbatim (tests/cli/test_quick_start.py)",
    ". .venv/bin/activate && pytest": "the quick start: .ci/run runs it verbatim (tests/cli/test_quick_start.py)",
    "kreplica inspect-dir /copies/broker-1 /copies/broker-1-disk2 --shutdown unclean | jq 'select(.type==\"partition\") "
    "| .restart'": "a broker with two log directories, which fixtures/ does not have",
    "kafka-reassign-partitions.sh --bootstrap-server ... --execute --reassignment-json-file /tmp/plan/phase-1.json":
        "Kafka's own tool, against a live cluster",
    "kreplica fleet analyze /tmp/tables --leaders leaders.json": "leaders.json is the reader's own file",
    ". .venv/bin/activate && python -m tests.realkafka.record":
        "remakes the committed corpus from real clusters (minutes; tests/realkafka/test_harness.py runs one "
        "scenario of it)",
    'pip wheel --no-deps -w dist . && pip install "$(ls dist/kreplica-*.whl)[fleet]"': "packaging for a Spark cluster",
    'cp "$(ls dist/kreplica-*.whl)" dist/kreplica.zip': "packaging for a Spark cluster",
    "spark-submit --master spark://host:7077 --archives dist/kreplica.zip#kreplica --conf "
    "spark.executorEnv.PYTHONPATH=kreplica \"$(python -c 'import kreplica.__main__ as m; print(m.__file__)')\" "
    "fleet scan hdfs:///evidence --output-dir hdfs:///tables":
        "a Spark cluster (tests/pipeline/spark/test_standalone_cluster.py ships the wheel the same way)",
}
_ASSIGNMENT = re.compile(r"([A-Z_][A-Z0-9_]*)=(\S.*)")


class Line(NamedTuple):
    command: str
    exit_code: int
    shown: str | None          # text after → in its comment
    output: str | None         # a console block's output lines
    variables: dict[str, str]


class Block(NamedTuple):
    heading: str
    lines: tuple[Line, ...]


def _split_comment(line: str) -> tuple[str, str]:
    """``command  # comment`` -> (command, comment); a ``#`` inside quotes or a word is not one."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), line[i + 1:].strip()
    return line.rstrip(), ""


def _line(text: str, variables: dict[str, str], output: str | None = None) -> Line:
    command, comment = _split_comment(text)
    said, arrow, shown = comment.partition("→")
    code = re.search(r"\bexit (\d)\b", said)
    return Line(command, int(code[1]) if code else 0, shown.strip() if arrow else None, output, dict(variables))


def readme_blocks() -> list[Block]:
    """The README's ``sh`` and ``console`` blocks, continuation lines joined, each under its heading."""
    blocks, heading, fence, body = [], "", None, []
    for raw in (ROOT / "README.md").read_text(encoding="utf-8").splitlines():
        if fence is None:
            if raw.startswith("#"):
                heading = raw.lstrip("#").strip()
            elif raw.startswith("```"):
                fence, body = raw[3:].strip(), []
            continue
        if raw.startswith("```"):
            if fence in ("sh", "console"):
                blocks.append(Block(heading, tuple(_parse(fence, body))))
            fence = None
        else:
            body.append(raw)
    return blocks


def _parse(fence: str, body: list[str]) -> list[Line]:
    joined: list[str] = []
    for raw in body:
        if joined and joined[-1].endswith("\\"):
            joined[-1] = joined[-1][:-1].rstrip() + " " + raw.strip()
        else:
            joined.append(raw)
    lines, variables = [], {}
    for i, text in enumerate(joined):
        if fence == "console":
            if text.startswith("$ "):
                output = []
                for more in joined[i + 1:]:
                    if more.startswith("$ "):
                        break
                    output.append(more)
                lines.append(_line(text[2:], variables, "\n".join(output)))
            continue
        command, _ = _split_comment(text)
        if not command.strip():
            continue
        if m := _ASSIGNMENT.fullmatch(command):
            variables[m[1]] = shlex.split(m[2])[0]
            continue
        lines.append(_line(text, variables))
    return lines


def shown_in(shown: str, stdout: str) -> bool:
    """Whether one line of ``stdout`` holds the pieces of ``shown`` between its ``...``, in order."""
    pieces = [p.strip() for p in shown.split("...") if p.strip()]

    def holds(line: str) -> bool:
        at = 0
        for piece in pieces:
            at = line.find(piece, at)
            if at < 0:
                return False
            at += len(piece)
        return True

    return any(holds(line) for line in stdout.splitlines())


BLOCKS = [b for b in readme_blocks() if any(line.command not in NOT_RUN for line in b.lines)]


def test_every_line_not_run_is_still_in_the_readme() -> None:
    commands = {line.command for block in readme_blocks() for line in block.lines}
    assert set(NOT_RUN) - commands == set()


def test_the_readme_claims_what_the_tool_prints() -> None:
    # the issue that started this: the README said 4,811 bytes where the tool prints 1,333
    assert "4,811" not in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("block", [pytest.param(b, id=f"{n}-{b.heading}") for n, b in enumerate(BLOCKS, 1)])
def test_readme_block_runs_as_shown(block: Block, tmp_path: Path) -> None:
    """Each line of the block in order (a later line may read what an earlier one wrote)."""
    skipped = []
    for line in block.lines:
        if line.command in NOT_RUN:
            continue
        if reason := cannot_run(expand(line.command, line.variables)):
            skipped.append(f"{line.command}: {reason}")
            continue
        ran = run_line(line.command, tmp_path, line.variables)
        where = f"{line.command}\nexit {ran.exit_code}, the README says {line.exit_code}\n{ran.stderr}"
        assert ran.exit_code == line.exit_code, where
        assert ran.stdout.strip(), f"{line.command} printed nothing"
        if line.shown is not None:
            assert shown_in(line.shown, ran.stdout), f"{line.command}\nthe README shows: {line.shown}\n{ran.stdout}"
        if line.output is not None:
            assert [r.rstrip() for r in ran.stdout.rstrip("\n").splitlines()] == line.output.splitlines()
    if skipped:
        pytest.skip("; ".join(skipped))


def test_the_timeline_paragraph_is_what_the_fourth_command_prints(tmp_path: Path) -> None:
    (block,) = [b for b in BLOCKS if b.heading.startswith("What happened, in order")]
    line = block.lines[3]
    assert "--log-dirs" in line.command
    ran = run_line(line.command.replace("-f text", "-f ndjson"), tmp_path, line.variables)
    objs = [json.loads(o) for o in ran.stdout.splitlines()]
    (loss,) = [o for o in objs if o["type"] == "election_loss"]
    summary = objs[-1]
    (zombie,) = summary["zombie_epochs"]
    (unwritten,) = summary["epochs_without_data"]
    below = loss["below_high_watermark"]
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    paragraph = readme.split("the fourth command (with `--log-dirs`) shows", 1)[1].split(" * ", 1)[0]
    assert (f"the election lost offsets {loss['first_lost_offset']}-{loss['end_offset'] - 1} that broker "
            f"{loss['old_leader']} held ({below} of them below its high watermark {loss['old_high_watermark']})"
            in paragraph)
    assert f"epoch {zombie['epoch']} is a zombie (broker {zombie['replicas'][0]} holds data" in paragraph
    assert f"broker {loss['new_leader']} elected uncleanly at epoch {loss['leader_epoch']}" in paragraph
    assert f"nobody wrote epoch {unwritten['epoch']}" in paragraph
