"""``kreplica zk dump`` and ``kreplica zk log``: a ZooKeeper data directory, replayed or listed.

They replace ZooKeeper's SnapshotFormatter and TxnLogToolkit for scripting, with the data
included (``../shared/specs/zookeeper-formats.md`` §6).
"""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from kreplica.cli.options.common import DebugOption, FormatOption, require_paths
from kreplica.cli.options.names import unknown_name
from kreplica.cli.options.sources import AtTimeOption, AtZxidOption, check_point, time_option, unreadable, zxid_option
from kreplica.cli.options.usage import command
from kreplica.cli.runner import runs_command, show
from kreplica.formats.errors import FormatError
from kreplica.report.output.formats import Payload


def _tree():
    """The ZooKeeper model, imported on use so other commands start fast."""
    from kreplica.model import zookeeper as zk_tree

    return zk_tree


app = typer.Typer(name="zk", no_args_is_help=True, short_help="Read ZooKeeper snapshots and transaction logs.",
                  help="Read a ZooKeeper data directory offline: the tree replayed to any point (dump), "
                       "or every logged transaction (log).")

SourceArgument = Annotated[list[str], typer.Argument(
    metavar="SOURCE", show_default=False,
    help="A ZooKeeper data directory (version-2/ is looked into), any directory holding snapshot.* and "
         "log.* files (other files are ignored), or explicit snapshot and log files.")]
PayloadOption = Annotated[Payload, typer.Option(
    "--payload", case_sensitive=False,
    help="How znode data is written: base64 (standard, padded), hex, utf8 (invalid bytes replaced) or none; "
         "data that is JSON is also given decoded, as data_json (not with none).")]


def _files(sources: list[str]):
    """The snapshot and log files of SOURCE (a missing path is exit 2, "no such file or directory")."""
    require_paths(sources)
    return _tree().find_zk_files(sources)


def _span(files):
    from kreplica.model.cluster.span import zookeeper_span

    return zookeeper_span(files)


@app.command("dump", cls=command(exclusive=[("--at-zxid", "--at-time")]), short_help="The ZooKeeper tree at a zxid or time, with stat and data.")
@runs_command
def dump(
    sources: SourceArgument,
    at_zxid: AtZxidOption = None,
    at_time: AtTimeOption = None,
    path: Annotated[Optional[list[str]], typer.Option(
        "--path", metavar="GLOB",
        help="List only nodes whose path matches this glob ('*' also crosses '/': /brokers/* is the whole "
             "subtree). Repeatable: a node matching any is listed.")] = None,
    payload: PayloadOption = Payload.base64,
    output_format: FormatOption = None,
    debug: DebugOption = False,
) -> int:
    """Replay a ZooKeeper snapshot with its transaction logs as ZooKeeper restores them (the snapshot
    ZooKeeper would pick, fuzzy snapshots tolerated, failed multis skipped, ephemerals of closed
    sessions removed) and write every node with its full stat, ACL and data, the data decoded as JSON
    when it is JSON. The last object says which zxid was reached and which files were used.

    Exit status: 0 nothing wrong, 1 damage found (error findings, such as a digest mismatch), 2 bad
    usage or unreadable input (a point before or beyond the evidence, a --path matching no node), 3
    internal error.
    """
    from kreplica.analysis.inspect.zookeeper import select_nodes, unmatched_glob
    from kreplica.report.results.zk import ZkDumpReport

    zxid = zxid_option(at_zxid, "--at-zxid")
    when = time_option(at_time)
    try:
        files = _files(sources)
        if zxid is not None or when is not None:
            span = _span(files)
            check_point(span, "--at-zxid", position=zxid)
            check_point(span, "--at-time", time=when)
        state = _tree().replay(files, at_zxid=zxid, at_time=when)
    except OSError as exc:
        raise unreadable(exc) from exc
    missing = unmatched_glob(state.nodes, path or ())
    if missing is not None:
        raise unknown_name("--path", "znode matching", missing, sorted(state.nodes),
                           where=f"the tree at zxid {state.zxid:#x}")
    return show(ZkDumpReport(state, select_nodes(state.nodes, path or ()), payload), output_format)


@app.command("log", cls=command(renamed=("--from-zxid", "--to-zxid")), short_help="Every ZooKeeper transaction, decoded, in zxid order.")
@runs_command
def log(
    sources: SourceArgument,
    from_zxid: Annotated[Optional[str], typer.Option(
        "--from", metavar="ZXID", help="List only transactions from this zxid on (hex or decimal).")] = None,
    to_zxid: Annotated[Optional[str], typer.Option(
        "--to", metavar="ZXID", help="List only transactions up to this zxid (inclusive).")] = None,
    payload: PayloadOption = Payload.base64,
    output_format: FormatOption = None,
    debug: DebugOption = False,
) -> int:
    """List every transaction of every log file in SOURCE, in zxid order: header fields, type, the
    paths it touches, the decoded body with its data (multi sub-transactions included) and the tree
    digest ZooKeeper logged with it; damage (bad checksums, a torn last entry, a non-zero tail) as
    findings, and how each file ends.

    Exit status: 0 nothing wrong, 1 damage found (error findings), 2 bad usage or unreadable input
    (a zxid before or beyond the evidence), 3 internal error.
    """
    from kreplica.analysis.inspect.zookeeper import select_txns
    from kreplica.report.results.zk import ZkLogReport

    low = zxid_option(from_zxid, "--from")
    high = zxid_option(to_zxid, "--to")
    try:
        files = _files(sources)
        if not files.logs:
            raise FormatError("no ZooKeeper transaction log (log.<zxid>) in SOURCE", path=", ".join(sources))
        if low is not None or high is not None:
            from kreplica.model.cluster.span import transactions_span
            from kreplica.model.evidence_span import merge_spans

            # the snapshots' states and the logged transactions, older than the snapshots or not
            span = merge_spans(_span(files), transactions_span(files))
            check_point(span, "--from", position=low)
            check_point(span, "--to", position=high)
    except OSError as exc:
        raise unreadable(exc) from exc
    report = ZkLogReport(select_txns(_tree().iter_zk_log(sources), low, high), payload)
    try:
        return show(report, output_format)
    except OSError as exc:
        if isinstance(exc, BrokenPipeError):
            raise
        raise unreadable(exc) from exc
