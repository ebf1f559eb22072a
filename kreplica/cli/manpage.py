"""Man pages (roff) generated from the commands' own ``--help`` data.

``python -m kreplica.cli.manpage man/`` rewrites ``man/kreplica.1`` and one
``man/kreplica-<command>.1`` per command; ``tests/cli/test_manpages.py`` regenerates them and
fails when the committed pages differ, so the pages cannot drift from ``--help``.

Each page ends with :data:`EXAMPLES`: command lines that run from the root of a source tree on
the sample evidence in ``fixtures/``; ``tests/cli/test_examples.py`` runs every one and checks the
exit status the page states.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NamedTuple

import typer
import typer.core

from kreplica import __version__
from kreplica.cli.main import app

DATE = "2026"
SEE_ALSO_EXTRA = ("kafka-dump-log.sh(1)",)


class Example(NamedTuple):
    """One entry of a page's EXAMPLES section.

    ``lines`` are typed in order from the root of a source tree; every line but the last exits 0
    and the last exits ``exit_code``, which the page states when it is not 0. Files an example
    writes go under ``/tmp``.
    """

    text: str
    lines: tuple[str, ...]
    exit_code: int = 0


def _ex(text: str, *lines: str, exit_code: int = 0) -> Example:
    return Example(text, lines, exit_code)


_KIP279 = "fixtures/scenarios/kip279-fast-failover"
_THREE = "fixtures/scenarios/three-replicas"
_ZK = "fixtures/timeline/zookeeper"
_KRAFT = "fixtures/elections/kraft"
_ASSIGNMENT = ("--assignment fixtures/reassign/assignment.json --brokers 1-6 "
               "--racks 1:a,2:b,3:a,4:b,5:a,6:b")
_LOG_DIRS = f"--log-dirs 1={_THREE}/broker-1 --log-dirs 2={_THREE}/broker-2 --log-dirs 3={_THREE}/broker-3"
_TXN = "fixtures/transactions/broker-1"
_GROUPS = "fixtures/scenarios/unclean-with-groups"
_GROUP_DIRS = f"--log-dirs 1={_GROUPS}/broker-1 --log-dirs 2={_GROUPS}/broker-2"
_TRUNCATE = f"kreplica truncate-plan --leader {_KIP279}/broker-1/orders-0 --follower {_KIP279}/broker-2/orders-0"

#: command ("zk dump" for a nested one; "" for kreplica(1) itself) -> its EXAMPLES, 1 to 3 each (a 4th
#: where one shows consumer impact);
#: tests/cli/test_examples.py runs them all and asserts each exit status
EXAMPLES: dict[str, tuple[Example, ...]] = {
    "": (
        _ex("Read the sample partitions (every magic and codec): the batches of each segment and a verdict line.",
            "kreplica inspect-log fixtures/logs -f text"),
        _ex("Simulate a follower's truncation against its leader: the follower loses a committed record.",
            f"{_TRUNCATE} -f text", exit_code=1),
        _ex("The cluster state ZooKeeper held at zxid 0x17, just after broker 1's session expired: orders-0 is "
            "offline.", f"kreplica cluster-state {_ZK} --at-zxid 0x17 -f text", exit_code=1),
    ),
    "inspect-log": (
        _ex("Read every partition of a log directory: the batches of each segment and a verdict line.",
            "kreplica inspect-log fixtures/logs -f text"),
        _ex("A segment with a damaged batch: the crc_mismatch finding, and the byte at which a broker recovering "
            "it after an unclean shutdown would truncate.",
            "kreplica inspect-log fixtures/damaged/crc-flip-0 -f text", exit_code=1),
        _ex("The records of offsets 20 to 22 as ndjson, keys and values as text.",
            "kreplica inspect-log fixtures/logs/orders-0 --records --from 20 --to 22 --payload utf8 -f ndjson"),
    ),
    "inspect-index": (
        _ex("Check every index of a partition against its segments, one verdict line per index file.",
            "kreplica inspect-index fixtures/logs/orders-0 --verify-only -f text"),
        _ex("List the entries of one offset index.",
            "kreplica inspect-index fixtures/logs/orders-0/00000000000000000000.index -f text"),
    ),
    "inspect-dir": (
        _ex("Every partition of a log directory, problems first: offsets, epochs, and what a restart would do.",
            "kreplica inspect-dir fixtures/logs -f text"),
        _ex("What an unclean restart would do to a partition whose last batch is cut off: truncate 157 bytes.",
            "kreplica inspect-dir fixtures/damaged/truncated-tail-0 --shutdown unclean -f text", exit_code=1),
    ),
    "epochs": (
        _ex("Two replicas' epoch lineages side by side: batch headers, checkpoint and the cache a broker loads.",
            f"kreplica epochs {_KIP279}/broker-1/orders-0 {_KIP279}/broker-2/orders-0 -f text"),
        _ex("The same for three brokers' log directories, choosing the partition.",
            f"kreplica epochs {_THREE}/broker-1 {_THREE}/broker-2 {_THREE}/broker-3 --partition orders-0 -f text"),
    ),
    "offset-for-epoch": (
        _ex("What broker 1 would answer, as leader, to a follower asking for the end of epoch 1.",
            f"kreplica offset-for-epoch {_KIP279}/broker-1/orders-0 --epoch 1 -f text"),
        _ex("The same request answered by Kafka 0.11, which returns an offset only.",
            f"kreplica offset-for-epoch {_KIP279}/broker-1/orders-0 --epoch 1 --kafka-version 0.11.0 -f text"),
        _ex("A request from a follower that knows a newer leader epoch than the replica: UNKNOWN_LEADER_EPOCH.",
            f"kreplica offset-for-epoch {_KIP279}/broker-1/orders-0 --epoch 1 --current-leader-epoch 5 -f text",
            exit_code=1),
    ),
    "truncate-plan": (
        _ex("Truncation as current Kafka does it: the follower drops offset 2, a committed record no other replica "
            "holds.", f"{_TRUNCATE} -f text", exit_code=1),
        _ex("The pre-2.0 KIP-101 rule on the same replicas: nothing is truncated, and offset 2 stays different.",
            f"{_TRUNCATE} --protocol kip101 -f text"),
        _ex("Keep what the truncation would discard: the batches as a segment file and the records as ndjson.",
            f"{_TRUNCATE} --output-dir /tmp/salvage -f text", exit_code=1),
        _ex("The consumer groups of the broker's __consumer_offsets partitions against a truncation: audit and "
            "billing consumed records the log no longer has.",
            f"kreplica truncate-plan --leader {_GROUPS}/broker-1/orders-0 --follower {_GROUPS}/broker-2/orders-0 "
            "-f text", exit_code=1),
    ),
    "diverge": (
        _ex("Two replicas that differ in the middle of their logs, under an identical tail.",
            "kreplica diverge fixtures/scenarios/divergent-middle/broker-1/orders-0 "
            "fixtures/scenarios/divergent-middle/broker-2/orders-0 -f text", exit_code=1),
        _ex("Every pair of three brokers' replicas of orders-0, as ndjson.",
            f"kreplica diverge {_THREE}/broker-1 {_THREE}/broker-2 {_THREE}/broker-3 --partition orders-0 -f ndjson",
            exit_code=1),
    ),
    "groups": (
        _ex("Every group broker 1's coordinator would load, checked against the partitions beside it: billing "
            "committed orders-1 beyond its log end (an unclean election truncated it).",
            "kreplica groups fixtures/groups/broker-1 -f text", exit_code=1),
        _ex("One group, from two brokers' replicas of __consumer_offsets-0 compared.",
            "kreplica groups fixtures/groups/broker-1 fixtures/groups/broker-2 --group audit -f text"),
        _ex("The groups as they stood at offset 8 of the partition, as ndjson.",
            "kreplica groups fixtures/groups/broker-1/__consumer_offsets-0 --at-offset 8 -f ndjson"),
    ),
    "zk dump": (
        _ex("The registered brokers at the end of the transaction logs.",
            f"kreplica zk dump {_ZK} --path '/brokers/ids/*' -f text"),
        _ex("The controller znode at zxid 0x17, its data as text.",
            f"kreplica zk dump {_ZK} --at-zxid 0x17 --path /controller --payload utf8 -f text"),
        _ex("One snapshot file exactly as written, as ndjson.",
            f"kreplica zk dump {_ZK}/version-2/snapshot.f -f ndjson"),
    ),
    "zk log": (
        _ex("Every transaction of the logs, in zxid order.", f"kreplica zk log {_ZK} -f text"),
        _ex("The transactions from broker 1's session expiry to the unclean election, as ndjson.",
            f"kreplica zk log {_ZK} --from 0x15 --to 0x18 -f ndjson"),
    ),
    "cluster-state": (
        _ex("The cluster state at the end of the ZooKeeper logs.", f"kreplica cluster-state {_ZK} -f text"),
        _ex("The same at zxid 0x17, when orders-0 had no leader.",
            f"kreplica cluster-state {_ZK} --at-zxid 0x17 -f text", exit_code=1),
        _ex("A KRaft metadata log: orders-0 is under its min.insync.replicas.",
            f"kreplica cluster-state {_KRAFT} -f text", exit_code=1),
    ),
    "plan-elect": (
        _ex("What a controller taking over now would elect: nothing.", f"kreplica plan-elect {_KRAFT} -f text"),
        _ex("Broker 1 fails: orders-0 goes offline, its replicas' data ranks broker 2 as the best unclean choice, "
            "and the election JSON for kafka-leader-election.sh is written.",
            f"kreplica plan-elect {_KRAFT} --fail 1 {_LOG_DIRS} --output-file /tmp/election.json -f text",
            exit_code=1),
        _ex("The blast radius of losing one or both racks.", f"kreplica plan-elect {_KRAFT} --sweep 2 --by-rack -f text",
            exit_code=1),
        _ex("Broker 1 fails and broker 2 is elected uncleanly: group fresh consumed 8 records the new leader never "
            "had.", f"kreplica plan-elect {_GROUPS}/zookeeper --fail 1 --unclean-allowed yes {_GROUP_DIRS} -f text",
            exit_code=1),
    ),
    "timeline": (
        _ex("Every leader, epoch and ISR change from ZooKeeper's logs, time-ordered: an unclean election.",
            f"kreplica timeline {_ZK} -f text", exit_code=1),
        _ex("The same history joined with the three replicas' data: the offsets the unclean election lost.",
            f"kreplica timeline {_ZK} --log-dirs 1=fixtures/timeline/broker-1 --log-dirs 2=fixtures/timeline/broker-2 "
            "--log-dirs 3=fixtures/timeline/broker-3 --partition orders-0 -f text", exit_code=1),
        _ex("A KRaft metadata log's history, as ndjson.", f"kreplica timeline {_KRAFT} -f ndjson"),
        _ex("An unclean election joined with the consumer groups on the brokers: what each group's next fetch does.",
            f"kreplica timeline {_GROUPS}/zookeeper {_GROUP_DIRS} -f text", exit_code=1),
    ),
    "plan-reassign": (
        _ex("Add brokers 5 and 6 with the fewest moves, balancing bytes from kafka-log-dirs.sh output.",
            f"kreplica plan-reassign {_ASSIGNMENT} add-brokers 5,6 --sizes fixtures/reassign/log-dirs.json -f text"),
        _ex("Move everything off broker 4 in two phases, throttled, writing Kafka's reassignment JSON files.",
            f"kreplica plan-reassign {_ASSIGNMENT} decommission 4 --output-dir /tmp/plan --phases 2 --throttle 50 "
            "-f text"),
        _ex("Kafka's own --generate placement, drawn reproducibly.",
            f"kreplica plan-reassign {_ASSIGNMENT} generate --topics orders --seed 7 -f ndjson"),
    ),
    "transactions": (
        _ex("Every transactional id of a broker and the transactions open in its partitions: producer 8003 was "
            "fenced but its abort marker never reached transfers-0, whose last stable offset it pins at 7.",
            f"kreplica transactions {_TXN} -f text", exit_code=1),
        _ex("The same evidence a second after producer 8003's first write: its transaction was still ongoing.",
            f"kreplica transactions {_TXN} --at-time 2023-11-14T22:13:51Z -f text"),
        _ex("One transactional id and the transactions open under its producer id, as ndjson.",
            f"kreplica transactions {_TXN} --transactional-id txn-ongoing -f ndjson"),
    ),
    "fleet scan": (
        _ex("Scan three brokers' replicas into Parquet tables on Spark's local mode.",
            f"kreplica fleet scan {_THREE} --output-dir /tmp/tables"),
    ),
    "fleet analyze": (
        _ex("Scan, then rank the partitions at risk: orders-0's replicas diverge.",
            f"kreplica fleet scan {_THREE} --output-dir /tmp/tables",
            "kreplica fleet analyze /tmp/tables -f text", exit_code=1),
    ),
    "fleet run": (
        _ex("Scan and analyse with one start of Spark: the scan's line, then the partitions at risk.",
            f"kreplica fleet run {_THREE} --output-dir /tmp/run-tables -f text", exit_code=1),
    ),
}


def _roff(text: str) -> str:
    out = text.replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in out.splitlines():
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def _paragraphs(text: str) -> list[str]:
    return [" ".join(p.split()) for p in text.strip().split("\n\n") if p.strip()]


def _summary(cmd) -> str:
    """The one-line summary of a command: its ``short_help``, else its first sentence."""
    text = cmd.short_help or (_paragraphs(cmd.help or "") or [""])[0].split(". ")[0]
    text = text.rstrip(".")
    return text[:1].lower() + text[1:]


def _option_lines(cmd, ctx) -> list[str]:
    lines: list[str] = []
    for param in cmd.get_params(ctx):
        if param.param_type_name == "argument":
            continue
        record = param.get_help_record(ctx)
        if record is None:
            continue
        names, help_text = record
        lines.append(".TP")
        lines.append(f"\\fB{_roff(names)}\\fR")
        lines.append(_roff(" ".join(help_text.split())) if help_text else "")
    return lines


def _argument_lines(cmd) -> list[str]:
    lines: list[str] = []
    for param in cmd.params:
        if param.param_type_name == "argument":
            lines.append(".TP")
            lines.append(f"\\fI{_roff((param.metavar or param.name.upper()))}\\fR")
            lines.append(_roff(" ".join((getattr(param, "help", "") or "").split())))
    return lines


def _example_lines(examples: tuple[Example, ...]) -> list[str]:
    """The roff EXAMPLES section: a description (with the exit status when it is not 0), then the
    command lines unfilled and indented."""
    lines = [".SH EXAMPLES", ".PP",
             "The examples run from the root of a kreplica source tree, on the sample evidence in "
             "\\fI\\%fixtures/\\fR; files they write go under \\fI/tmp\\fR."]
    for example in examples:
        text = example.text + (f" Exit status {example.exit_code}." if example.exit_code else "")
        lines += [".PP", _roff(text), ".RS 4", ".nf", *(_roff(line) for line in example.lines), ".fi", ".RE"]
    return lines


def command_page(name: str, cmd, root) -> str:
    """The roff page of ``kreplica <name>`` (``name`` may be ``"group sub"`` for a nested command)."""
    ctx = cmd.context_class(cmd, info_name=f"kreplica {name}", parent=root.context_class(root, info_name="kreplica"))
    usage = " ".join(cmd.collect_usage_pieces(ctx))
    paras = _paragraphs(cmd.help or "")
    page = name.replace(" ", "-")
    lines = [
        f'.TH "KREPLICA\\-{page.upper()}" 1 "{DATE}" "kreplica {__version__}" "kreplica manual"',
        ".SH NAME",
        f"kreplica\\-{_roff(page)} \\- {_roff(_summary(cmd))}",
        ".SH SYNOPSIS",
        f"\\fBkreplica {_roff(name)}\\fR {_roff(usage)}",
        ".SH DESCRIPTION",
    ]
    for p in paras:
        lines += [".PP", _roff(p)]
    lines += [".SH ARGUMENTS", *_argument_lines(cmd), ".SH OPTIONS", *_option_lines(cmd, ctx)]
    lines += [".SH EXIT STATUS", ".TP", "0", "the run completed and found nothing wrong", ".TP", "1",
              "the run completed and found problems in the evidence", ".TP", "2",
              "bad usage, or unreadable or unrecognised input (one line on stderr names the file and byte position)",
              ".TP", "3", "an internal error (\\fB\\-\\-debug\\fR shows the traceback)"]
    lines += _example_lines(EXAMPLES[name])
    lines += [".SH SEE ALSO", ", ".join(["\\fBkreplica\\fR(1)", *SEE_ALSO_EXTRA])]
    return "\n".join(lines) + "\n"


def _commands(root, ctx) -> list[tuple[str, object]]:
    """``(name, command)`` for every page: a nested group (``kreplica zk``) is descended into and
    each of its commands named ``"zk dump"`` (page ``kreplica-zk-dump.1``)."""
    out = []
    for name in root.list_commands(ctx):
        cmd = root.get_command(ctx, name)
        if isinstance(cmd, typer.core.TyperGroup):
            sub_ctx = cmd.context_class(cmd, info_name=name, parent=ctx)
            out += [(f"{name} {sub}", cmd.get_command(sub_ctx, sub)) for sub in cmd.list_commands(sub_ctx)]
        else:
            out.append((name, cmd))
    return out


def main_page(root) -> str:
    """The roff page of ``kreplica`` itself, listing every command."""
    ctx = root.context_class(root, info_name="kreplica")
    lines = [
        f'.TH "KREPLICA" 1 "{DATE}" "kreplica {__version__}" "kreplica manual"',
        ".SH NAME", "kreplica \\- offline forensics for Apache Kafka replication",
        ".SH SYNOPSIS", "\\fBkreplica\\fR [\\fB\\-\\-version\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR] ...",
        ".SH DESCRIPTION",
    ]
    for p in _paragraphs(root.help or ""):
        lines += [".PP", _roff(p)]
    lines += [".SH COMMANDS"]
    commands = _commands(root, ctx)
    for name, cmd in commands:
        lines += [".TP", f"\\fBkreplica\\-{_roff(name.replace(' ', '-'))}\\fR(1)", _roff(_summary(cmd))]
    lines += [".SH OPTIONS", *_option_lines(root, ctx)]
    lines += [".SH OUTPUT",
              ".PP",
              _roff("Every command writes data only to stdout: text on a terminal, ndjson otherwise (--format "
                    "text|json|ndjson|msgpack). Diagnostics and progress go to stderr."),
              ".SH EXIT STATUS", ".PP", "0 nothing wrong; 1 problems found in the evidence; 2 bad usage or "
              "unreadable input; 3 internal error.",
              *_example_lines(EXAMPLES[""]),
              ".SH SEE ALSO",
              ", ".join(f"\\fBkreplica\\-{_roff(n.replace(' ', '-'))}\\fR(1)" for n, _ in commands)]
    return "\n".join(lines) + "\n"


def render_all() -> dict[str, str]:
    """File name → page text for every page."""
    root = typer.main.get_command(app)
    ctx = root.context_class(root, info_name="kreplica")
    pages = {"kreplica.1": main_page(root)}
    for name, cmd in _commands(root, ctx):
        pages[f"kreplica-{name.replace(' ', '-')}.1"] = command_page(name, cmd, root)
    return pages


def write_all(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for file_name, text in render_all().items():
        (directory / file_name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    write_all(Path(sys.argv[1] if len(sys.argv) > 1 else "man"))
