"""``kreplica inspect-index``: dump index files and check them against their segments."""

from __future__ import annotations

from typing import Annotated

import typer

from kreplica.cli.options.common import DebugOption, FormatOption, require_paths
from kreplica.cli.options.usage import command
from kreplica.cli.runner import runs_command, show

app = typer.Typer()


@app.command("inspect-index", cls=command(exclusive=[("--verify-only", "--no-verify")]),
             short_help="Dump offset, time and transaction indexes and check them against their segments.")
@runs_command
def inspect_index_command(
    paths: Annotated[list[str], typer.Argument(
        metavar="PATH", show_default=False,
        help="Index files (*.index, *.timeindex, *.txnindex) or partition directories (all their indexes).")],
    output_format: FormatOption = None,
    verify_only: Annotated[bool, typer.Option(
        "--verify-only", help="Check the entries against the segment without listing them.")] = False,
    no_verify: Annotated[bool, typer.Option(
        "--no-verify", help="List the entries without reading the segment.")] = False,
    debug: DebugOption = False,
) -> int:
    """List index entries and verify them against the segment beside them, as kafka-dump-log.sh
    --verify-index-only and --index-sanity-check do but without their false alarms: every offset entry
    must point at a batch start from which its offset is reached, entries must increase, time-index
    entries must be monotonic and within the batches' timestamps, and the transaction index must agree
    with the ABORT markers in the log. Zero-filled preallocated tails are recognised, and Kafka's own
    sanityCheck verdict is shown for comparison.

    Exit status: 0 nothing wrong, 1 problems found, 2 bad usage or unreadable input, 3 internal error.
    """
    from kreplica.analysis.inspect.inspect_index import inspect_index
    from kreplica.model.logdir.index_files import find_index_files
    from kreplica.report.results.inspect_index import InspectIndexReport

    require_paths(paths)
    files = find_index_files(paths)
    items = ((f.path, item) for f in files for item in inspect_index(f, verify=not no_verify))
    return show(InspectIndexReport(items, entries=not verify_only), output_format)
