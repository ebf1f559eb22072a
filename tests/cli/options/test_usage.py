"""The one usage contract (issue 27 §4), across every command:

* every usage error is one line on stderr, ``kreplica: error: OPTION: ...`` naming the option, the
  value and what is allowed, exit 2, nothing on stdout: the commands' own checks and click's parse
  errors (a word outside a choice, a missing argument, an unknown option) alike;
* a usage error is a :class:`UsageError`, not the "damaged or truncated copy" of a FormatError;
* options that exclude each other are refused, never resolved silently (to the last given, or to
  whichever point a replay meets first), and so is an option without what it needs;
* one spelling per idea; an old spelling still works as a hidden alias with a one-line note.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer

from kreplica.cli.main import app
from kreplica.cli.options.usage import RENAMED, UsageCommand, usage_line
from kreplica.formats.errors import FormatError
from kreplica.formats.usage import UsageError
from kreplica.model.cluster.zk_chroot import normalize_chroot
from tests.builders.usage import FLEET, run
from tests.builders.usage import usage_error as one_line
from tests.conftest import FIXTURES

ZK = str(FIXTURES / "timeline" / "zookeeper")            # snapshot.f, then zxids 0x10..0x1b
KRAFT = str(FIXTURES / "elections" / "kraft")            # offsets 0..9
ORDERS = str(FIXTURES / "logs" / "orders-0")
LOGS = str(FIXTURES / "logs")
SCENARIO = FIXTURES / "scenarios" / "kip101-scenario-1"
LEADER, FOLLOWER = str(SCENARIO / "broker-1" / "orders-0"), str(SCENARIO / "broker-2" / "orders-0")
THREE = FIXTURES / "scenarios" / "three-replicas"
LOG_DIRS = [x for b in (1, 2, 3) for x in ("--log-dirs", f"{b}={THREE / f'broker-{b}'}")]
ASSIGNMENT = str(FIXTURES / "reassign" / "assignment.json")


def answered(result) -> None:
    """The run was not refused: it answered (exit 0 or 1) with nothing but notes on stderr."""
    assert result.exit_code in (0, 1), (result.exit_code, result.stderr)
    assert "error" not in result.stderr, result.stderr


# -- click's own parse errors are one line --------------------------------------------------------

@pytest.mark.parametrize(("args", "needles", "valid"), [
    pytest.param(["inspect-log", "--format", "yaml", ORDERS], ("--format: 'yaml' is not one of", "'json'"),
                 ["inspect-log", "--format", "json", ORDERS], id="bad-choice"),
    pytest.param(["inspect-log"], ("PATH: required",), ["inspect-log", ORDERS], id="missing-argument"),
    pytest.param(["truncate-plan", "--follower", FOLLOWER], ("--leader: required",),
                 ["truncate-plan", "--leader", LEADER, "--follower", FOLLOWER], id="missing-option"),
    pytest.param(["inspect-log", "--frob", ORDERS], ("--frob: no such option", "kreplica inspect-log --help"),
                 ["inspect-log", ORDERS], id="unknown-option"),
    pytest.param(["inspect-log", "--max-bytes", "0", ORDERS], ("--max-bytes: 0 is not in the range x>=1",),
                 ["inspect-log", "--max-bytes", "1", ORDERS], id="out-of-range"),
    pytest.param(["inspect-log", "--producer-id", "x", ORDERS], ("--producer-id: 'x' is not a valid",),
                 ["inspect-log", "--producer-id", "1", ORDERS], id="not-a-number"),
    pytest.param(["cluster-state", ZK, "--at-zxid"], ("'--at-zxid' requires an argument",),
                 ["cluster-state", ZK, "--at-zxid", "0x12"], id="no-value"),
    pytest.param(["inspct-log", ORDERS], ("no such command 'inspct-log'", "inspect-log"),
                 ["inspect-log", ORDERS], id="unknown-command"),
    pytest.param(["offset-for-epoch", ORDERS, ORDERS, "--epoch", "0"], ("unexpected extra argument",),
                 ["offset-for-epoch", ORDERS, "--epoch", "0"], id="extra-argument"),
])
def test_clicks_parse_errors_are_one_line_and_exit_2(args, needles, valid) -> None:
    line = one_line(run(*args), *needles)
    assert "Usage:" not in line and "Try " not in line
    answered(run(*valid))


def test_a_command_asked_for_nothing_still_shows_its_help() -> None:
    """``kreplica zk`` with no subcommand is the group's help (click's no_args_is_help), not an error line."""
    result = run("zk")
    assert "dump" in result.output and "kreplica: error" not in result.output


# -- the usage exception ----------------------------------------------------------------------------

def test_a_usage_error_is_not_a_damaged_file() -> None:
    error = UsageError("expected a znode path, got 'kafka'", option="--chroot")
    assert not isinstance(error, FormatError) and not issubclass(FormatError, UsageError)
    assert usage_line(error) == "kreplica: error: --chroot: expected a znode path, got 'kafka'"
    assert UsageError("is not empty", option="--output-dir", path="/tmp/x").one_line() == \
        "/tmp/x: --output-dir: is not empty"


def test_the_model_raises_the_usage_error_for_chroot() -> None:
    with pytest.raises(UsageError) as caught:
        normalize_chroot("kafka")
    assert not isinstance(caught.value, FormatError)
    one_line(run("cluster-state", ZK, "--chroot", "kafka"), "--chroot: expected a znode path")
    answered(run("cluster-state", ZK, "--chroot", "/"))


@pytest.mark.parametrize(("args", "needle"), [
    pytest.param(["truncate-plan", "--leader", LEADER, "--follower", FOLLOWER, "--protocol", "kip1"],
                 "--protocol: expected one of hw, kip101", id="protocol"),
    pytest.param(["epochs", ORDERS, "--kafka-version", "x"], "--kafka-version: ", id="kafka-version"),
    pytest.param(["epochs", ORDERS, "--hw", "nolabel"], "--hw: ", id="hw"),
    pytest.param(["diverge", ORDERS], "REPLICA: expected two or more replicas, got 1", id="one-replica"),
    pytest.param(["inspect-log", "--from", "9", "--to", "1", ORDERS], "--from: the range 9..1 is empty", id="from-to"),
    pytest.param(["offset-for-epoch", ORDERS], "--epoch: missing: give one of --epoch and --epochs-from",
                 id="no-epoch"),
])
def test_the_checks_that_printed_clicks_usage_block_are_one_line(args, needle) -> None:
    one_line(run(*args), needle)


# -- a single-valued option given twice ----------------------------------------------------------

@pytest.mark.parametrize(("args", "needle"), [
    pytest.param(["cluster-state", ZK, "--at-zxid", "0x12", "--at-zxid", "0x13"],
                 "--at-zxid: given 2 times ('0x12', then '0x13'): give it once", id="value"),
    pytest.param(["inspect-log", ORDERS, "--transactional", "--not-transactional"],
                 "--transactional: given both ways (--transactional/--not-transactional)", id="transactional"),
    pytest.param(["inspect-log", ORDERS, "--control", "--not-control"], "--control: given both ways", id="control"),
    pytest.param(["inspect-log", ORDERS, "--no-verify-crc", "--verify-crc"], "--verify-crc: given both ways",
                 id="verify-crc"),
    pytest.param(["inspect-log", ORDERS, "-f", "json", "--format", "text"], "--format: given 2 times",
                 id="short-and-long"),
])
def test_an_option_given_twice_differently_is_refused_not_resolved_to_the_last(args, needle) -> None:
    one_line(run(*args), needle)


@pytest.mark.parametrize("args", [
    pytest.param(["cluster-state", ZK, "--at-zxid", "0x12", "--at-zxid", "0x12"], id="same-value"),
    pytest.param(["inspect-log", ORDERS, "--not-transactional"], id="one-way"),
    pytest.param(["inspect-log", ORDERS, "--records", "--records"], id="same-flag"),
    pytest.param(["timeline", ZK, "--broker", "1", "--broker", "2"], id="repeatable"),
])
def test_the_same_value_twice_or_a_repeatable_option_is_answered(args) -> None:
    answered(run(*args))


# -- options that exclude each other ----------------------------------------------------------------

TIME = "2023-11-14T22:13:20Z"


@pytest.mark.parametrize(("args", "needle", "alone"), [
    pytest.param(["cluster-state", ZK, "--at-zxid", "0x12", "--at-time", TIME], "--at-zxid: excludes --at-time",
                 ["cluster-state", ZK, "--at-zxid", "0x12"], id="cluster-state-zxid-time"),
    pytest.param(["cluster-state", KRAFT, "--at-offset", "3", "--at-time", TIME], "--at-time: excludes --at-offset",
                 ["cluster-state", KRAFT, "--at-offset", "3"], id="cluster-state-offset-time"),
    pytest.param(["cluster-state", KRAFT, "--at-zxid", "3", "--at-offset", "3"], "--at-zxid: excludes --at-offset",
                 ["cluster-state", KRAFT, "--at-offset", "3"], id="cluster-state-zxid-offset"),
    pytest.param(["zk", "dump", ZK, "--at-zxid", "0x12", "--at-time", TIME], "--at-zxid: excludes --at-time",
                 ["zk", "dump", ZK, "--at-zxid", "0x12"], id="zk-dump"),
    pytest.param(["plan-elect", KRAFT, "--at-offset", "3", "--at-time", TIME], "excludes --at-offset",
                 ["plan-elect", KRAFT, "--at-offset", "3"], id="plan-elect-points"),
    pytest.param(["plan-elect", KRAFT, "--sweep", "1", "--fail", "1"], "--sweep: excludes --fail",
                 ["plan-elect", KRAFT, "--sweep", "1"], id="sweep-fail"),
    pytest.param(["plan-elect", KRAFT, "--sweep", "1", "--controlled-shutdown", "1"],
                 "--sweep: excludes --controlled-shutdown", ["plan-elect", KRAFT, "--controlled-shutdown", "1"],
                 id="sweep-shutdown"),
    pytest.param(["plan-elect", KRAFT, "--sweep", "1", *LOG_DIRS], "--sweep: excludes --log-dirs",
                 ["plan-elect", KRAFT, "--fail", "1", *LOG_DIRS], id="sweep-log-dirs"),
    pytest.param(["inspect-index", ORDERS, "--verify-only", "--no-verify"], "--verify-only: excludes --no-verify",
                 ["inspect-index", ORDERS, "--verify-only"], id="index-verify"),
    pytest.param(["offset-for-epoch", ORDERS, "--epoch", "0", "--epochs-from", "-"],
                 "--epoch: excludes --epochs-from", ["offset-for-epoch", ORDERS, "--epoch", "0"], id="epoch-stream"),
    pytest.param(["offset-for-epoch", ORDERS, "--current-leader-epoch", "0", "--epochs-from", "-"],
                 "--current-leader-epoch: excludes --epochs-from",
                 ["offset-for-epoch", ORDERS, "--current-leader-epoch", "0", "--epoch", "0"], id="fencing-stream"),
    pytest.param(["plan-reassign", "--assignment", ASSIGNMENT, "--brokers", "1-6", "generate", "--at-zxid", "5"],
                 "--assignment: excludes --at-zxid", ["plan-reassign", "--assignment", ASSIGNMENT, "--brokers", "1-6",
                                                      "generate"], id="assignment-point"),
    pytest.param(["plan-reassign", "--assignment", ASSIGNMENT, "--brokers", "1-6", "rebalance", "--sizes", ASSIGNMENT,
                  "--sizes-from", LOGS], "--sizes: excludes --sizes-from", None, id="sizes"),
])
def test_exclusive_options_are_refused_and_each_alone_answered(args, needle, alone) -> None:
    """Kafka's own tools refuse options that do not fit together rather than pick one
    (``org.apache.kafka.server.util.CommandLineUtils.checkInvalidArgs``: "Option ... can't be used
    with option ..."); here a point is one of --at-zxid, --at-time, --at-offset (a replay that
    stops at whichever it meets first answers a question nobody asked), a sweep runs on its own."""
    one_line(run(*args), needle, "(given ")
    if alone is not None:
        answered(run(*alone))


def test_a_seed_with_a_fixed_start_index_is_refused() -> None:
    """Kafka's ``AdminUtils.assignReplicasToBrokersRackUnaware`` draws the start index and the
    replica shift from its random source only when ``fixedStartIndex`` is negative: with
    --start-index the --seed would be ignored, so the pair is refused; either alone is a plan."""
    base = ["plan-reassign", "--assignment", ASSIGNMENT, "--brokers", "1-6", "generate"]
    one_line(run(*base, "--seed", "7", "--start-index", "1"), "--seed: excludes --start-index")
    answered(run(*base, "--start-index", "1"))
    answered(run(*base, "--seed", "7"))


def test_the_default_of_an_exclusive_option_is_not_given() -> None:
    """``--seed`` has a default (0): only a --seed typed on the command line excludes --start-index."""
    answered(run("plan-reassign", "--assignment", ASSIGNMENT, "--brokers", "1-6", "generate", "--start-index", "0"))


@FLEET
def test_fleet_analyze_takes_a_source_or_leaders_not_both(tmp_path: Path) -> None:
    leaders = tmp_path / "leaders.json"
    leaders.write_text(json.dumps({"partitions": []}))
    one_line(run("fleet", "analyze", tmp_path, KRAFT, "--leaders", leaders), "SOURCE: excludes --leaders")
    one_line(run("fleet", "analyze", tmp_path, KRAFT, "--at-zxid", "1", "--at-offset", "1"),
             "--at-zxid: excludes --at-offset")


# -- an option without what it needs -----------------------------------------------------------------

@pytest.mark.parametrize(("args", "needle", "with_it"), [
    pytest.param(["plan-elect", KRAFT, "--by-rack"], "--by-rack: needs --sweep",
                 ["plan-elect", KRAFT, "--by-rack", "--sweep", "1"], id="by-rack"),
    pytest.param(["plan-elect", KRAFT, "--output-file", "{tmp}/e.json"], "--output-file: needs --log-dirs",
                 ["plan-elect", KRAFT, "--fail", "1", *LOG_DIRS, "--output-file", "{tmp}/e.json"], id="output-file"),
    pytest.param(["timeline", ZK, "--groups", LOGS], "--groups: needs --log-dirs", None, id="timeline-groups"),
    pytest.param(["inspect-log", ORDERS, "--decode", "none"], "--decode: needs --records",
                 ["inspect-log", ORDERS, "--decode", "none", "--records"], id="decode"),
    pytest.param(["truncate-plan", "--leader", LEADER, "--follower", FOLLOWER, "--overwrite"],
                 "--overwrite: needs --output-dir",
                 ["truncate-plan", "--leader", LEADER, "--follower", FOLLOWER, "--overwrite", "--output-dir",
                  "{tmp}/out"], id="truncate-overwrite"),
    pytest.param(["plan-reassign", "--assignment", ASSIGNMENT, "--brokers", "1-6", "generate", "--overwrite"],
                 "--overwrite: needs --output-dir", None, id="reassign-overwrite"),
    pytest.param(["plan-reassign", "--assignment", ASSIGNMENT, "--brokers", "1-6", "rebalance", "--max-bytes", "10"],
                 "--max-bytes: needs --sizes or --sizes-from", None, id="max-bytes"),
])
def test_an_option_without_what_it_needs_is_refused(tmp_path: Path, args, needle, with_it) -> None:
    one_line(run(*(str(a).replace("{tmp}", str(tmp_path)) for a in args)), needle)
    if with_it is not None:
        answered(run(*(str(a).replace("{tmp}", str(tmp_path)) for a in with_it)))


@FLEET
def test_fleet_options_without_what_they_need_are_refused(tmp_path: Path) -> None:
    one_line(run("fleet", "scan", LOGS, "--output-dir", tmp_path / "t", "--record-bytes"),
             "--record-bytes: needs --records")
    one_line(run("fleet", "analyze", tmp_path, "--at-offset", "3"), "--at-offset: needs SOURCE")


@pytest.mark.parametrize(("action", "option", "needle", "fits"), [
    pytest.param(["verify"], ["--output-dir", "{tmp}/plan"], "--output-dir: applies to every action but verify",
                 ["rebalance"], id="output-dir"),
    pytest.param(["verify"], ["--throttle", "5"], "--throttle: applies to every action but verify, not verify",
                 ["rebalance"], id="throttle"),
    pytest.param(["rebalance"], ["--reassignment-json-file", ASSIGNMENT],
                 "--reassignment-json-file: applies to verify, not rebalance", ["verify"], id="executed"),
    pytest.param(["decommission", "1"], ["--seed", "3"], "--seed: applies to generate, not decommission",
                 ["generate"], id="seed"),
    pytest.param(["rebalance"], ["--start-index", "0"], "--start-index: applies to generate", ["generate"],
                 id="start-index"),
])
def test_an_option_the_action_does_not_act_on_is_refused(tmp_path: Path, action, option, needle, fits) -> None:
    """verify reads only the reassignment executed, and only generate draws Kafka's start index
    (``AdminUtils.assignReplicasToBrokers``): elsewhere the option would be ignored."""
    base = ["plan-reassign", "--assignment", ASSIGNMENT, "--brokers", "1-6"]
    given = [str(a).replace("{tmp}", str(tmp_path)) for a in option]
    one_line(run(*base, *action, *given), needle)
    answered(run(*base, *fits, *given))


def test_a_text_only_option_with_machine_output_is_refused() -> None:
    """timeline --per-partition shapes the text tables; with ndjson (also the default off a terminal)
    it would be ignored."""
    one_line(run("timeline", ZK, "--per-partition", "-f", "ndjson"),
             "--per-partition: applies to text output, not --format ndjson")
    one_line(run("timeline", ZK, "--per-partition"), "not --format ndjson (give -f text)")
    answered(run("timeline", ZK, "--per-partition", "-f", "text"))


# -- every command, one mechanism ------------------------------------------------------------------

def _commands():
    """Every command and subcommand as click builds it."""
    top = typer.main.get_command(app)
    for name in top.commands:
        cmd = top.commands[name]
        subcommands = getattr(cmd, "commands", None)
        if subcommands:
            yield from ((f"{name} {sub}", c) for sub, c in subcommands.items())
        else:
            yield name, cmd


@pytest.mark.parametrize(("name", "cmd"), [pytest.param(n, c, id=n) for n, c in _commands()])
def test_every_command_holds_to_the_contract_and_its_rules_name_its_options(name, cmd) -> None:
    assert isinstance(cmd, UsageCommand), name
    assert cmd.undeclared() == [], name
    taken = {o for p in cmd.params for o in (*p.opts, *getattr(p, "secondary_opts", ()))}
    assert not set(cmd.rules.renamed) & taken, "an old spelling is still a visible option"


# -- one vocabulary: the old spellings are hidden aliases ---------------------------------------------

@pytest.mark.parametrize(("old", "new"), [
    pytest.param(["zk", "log", ZK, "--from-zxid", "0x15", "-f", "ndjson"],
                 ["zk", "log", ZK, "--from", "0x15", "-f", "ndjson"], id="zk-log-from"),
    pytest.param(["zk", "log", ZK, "--to-zxid", "0x18", "-f", "ndjson"],
                 ["zk", "log", ZK, "--to", "0x18", "-f", "ndjson"], id="zk-log-to"),
    pytest.param(["zk", "log", ZK, "--from-zxid=0x15", "--to-zxid", "0x18", "-f", "ndjson"],
                 ["zk", "log", ZK, "--from=0x15", "--to", "0x18", "-f", "ndjson"], id="zk-log-both-and-equals"),
    pytest.param(["plan-elect", KRAFT, "--shutdown", "1", "-f", "ndjson"],
                 ["plan-elect", KRAFT, "--controlled-shutdown", "1", "-f", "ndjson"], id="plan-elect-shutdown"),
    pytest.param(["plan-elect", KRAFT, "--fail", "1", *LOG_DIRS, "--emit-election-json", "{tmp}/e.json", "-f",
                  "ndjson"],
                 ["plan-elect", KRAFT, "--fail", "1", *LOG_DIRS, "--output-file", "{tmp}/e.json", "-f", "ndjson"],
                 id="plan-elect-json"),
    pytest.param(["truncate-plan", "--leader", LEADER, "--follower", FOLLOWER, "--export", "{tmp}/x", "-f", "ndjson"],
                 ["truncate-plan", "--leader", LEADER, "--follower", FOLLOWER, "--output-dir", "{tmp}/x", "-f",
                  "ndjson"], id="truncate-export"),
])
def test_an_old_spelling_still_works_and_says_so_in_one_line(tmp_path: Path, old, new) -> None:
    def invoke(args, where):
        where.mkdir()
        result = run(*(str(a).replace("{tmp}", str(where)) for a in args))
        return result, result.stdout.replace(str(where), "TMP")

    (was, was_out), (now, now_out) = invoke(old, tmp_path / "old"), invoke(new, tmp_path / "new")
    assert was.exit_code == now.exit_code and was_out == now_out
    notes = was.stderr.strip().splitlines()
    spelled = [a.partition("=")[0] for a in old if a.partition("=")[0] in RENAMED]
    assert notes == [f"kreplica: note: {a} is deprecated and will be removed: use {RENAMED[a]}" for a in spelled]
    assert now.stderr == ""
    if (tmp_path / "old" / "e.json").exists():
        assert (tmp_path / "old" / "e.json").read_bytes() == (tmp_path / "new" / "e.json").read_bytes()


@FLEET
@pytest.mark.parametrize(("old", "new", "args"), [
    pytest.param("--out", "--output-dir", ["--out", "{tmp}/t"], id="out"),
    pytest.param("--payloads", "--record-bytes", ["--output-dir", "{tmp}/t", "--records", "--payloads"],
                 id="payloads"),
])
def test_a_fleet_old_spelling_still_works(tmp_path: Path, old, new, args) -> None:
    """The alias is accepted (the run gets as far as the missing ROOT) with its one-line note."""
    result = run("fleet", "scan", "/no/such/root", *(a.replace("{tmp}", str(tmp_path)) for a in args))
    lines = result.stderr.strip().splitlines()
    assert lines[0] == f"kreplica: note: {old} is deprecated and will be removed: use {new}"
    assert result.exit_code == 2 and len(lines) == 2 and "no such file or directory" in lines[1]


@pytest.mark.parametrize(("command", "old", "new"), [
    pytest.param(["zk", "log"], "--from-zxid", "--from", id="zk-log"),
    pytest.param(["truncate-plan"], "--export", "--output-dir", id="truncate-plan"),
    pytest.param(["plan-elect"], "--emit-election-json", "--output-file", id="plan-elect-json"),
    pytest.param(["plan-elect"], "--shutdown", "--controlled-shutdown", id="plan-elect-shutdown"),
])
def test_the_help_shows_only_the_new_spelling(command, old, new) -> None:
    shown = run(*command, "--help").stdout
    assert new in shown and f"{old} " not in shown and f"{old}\n" not in shown


@pytest.mark.parametrize(("old", "new"), [
    pytest.param(["--offsets", "5:9"], ["--from", "5", "--to", "9"], id="both"),
    pytest.param(["--offsets", "40:"], ["--from", "40"], id="open-end"),
    pytest.param(["--offsets", ":3"], ["--to", "3"], id="open-start"),
    pytest.param(["--offsets", "7"], ["--from", "7", "--to", "7"], id="one"),
])
def test_inspect_log_offsets_is_the_old_spelling_of_from_to(old, new) -> None:
    """``--offsets A:B`` (one option for a range) lists what ``--from A --to B`` lists, with its
    one-line note; the range vocabulary is ``--from``/``--to``, as in ``timeline`` and ``zk log``."""
    was, now = run("inspect-log", ORDERS, "--records", *old, "-f", "ndjson"), run(
        "inspect-log", ORDERS, "--records", *new, "-f", "ndjson")
    assert was.exit_code == now.exit_code == 0 and was.stdout == now.stdout and now.stderr == ""
    assert was.stderr.strip().splitlines() == [
        "kreplica: note: --offsets A:B is deprecated and will be removed: use --from A --to B"]
    assert "--offsets A:B" not in run("inspect-log", "--help").stdout


def test_a_bad_old_offsets_range_is_its_note_and_one_error_line() -> None:
    result = run("inspect-log", ORDERS, "--offsets", "9:1")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines() == [
        "kreplica: note: --offsets A:B is deprecated and will be removed: use --from A --to B",
        "kreplica: error: --offsets: the range '9:1' is empty (first offset above last)"]


def test_inspect_log_offsets_and_from_are_refused_together() -> None:
    result = run("inspect-log", ORDERS, "--offsets", "1:4", "--to", "3")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines()[1:] == [
        "kreplica: error: --offsets: excludes --to (given --offsets 1 4 and --to 3): give one of --offsets, --to"]


def test_inspect_dir_keeps_its_own_shutdown() -> None:
    """``--shutdown clean|unclean`` of inspect-dir is not plan-elect's renamed broker option."""
    result = run("inspect-dir", ORDERS, "--shutdown", "unclean")
    answered(result)
    assert "deprecated" not in result.stderr
