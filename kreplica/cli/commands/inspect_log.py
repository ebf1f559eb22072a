"""``kreplica inspect-log``: read segments exactly as Kafka does, and further."""

from __future__ import annotations

import enum
from collections.abc import Iterator
from typing import Annotated, Optional

import typer

from kreplica.cli.options.common import DebugOption, FormatOption, PayloadOption, require_paths
from kreplica.cli.options.usage import command
from kreplica.cli.runner import runs_command, show
from kreplica.formats.usage import UsageError
from kreplica.report.output.formats import Payload

app = typer.Typer()


class Decode(str, enum.Enum):
    """What ``--records`` decodes beyond the record framing."""

    internal = "internal"
    none = "none"


def _undecodable_note(groups, decode: Decode | None) -> str | None:
    """The note for ``--decode internal`` asked by name when some segments have no topic (stdin,
    a file outside a partition directory): their records cannot be decoded. ``None`` when there
    is nothing to say; by default this stays quiet."""
    if decode is not Decode.internal:
        return None
    unnamed = [g for g in groups if g.topic is None]
    if not unnamed:
        return None
    first = unnamed[0].segments[0].path
    more = f" (and {len(unnamed) - 1} more)" if len(unnamed) > 1 else ""
    return (f"kreplica: note: --decode internal: the records of {first}{more} are listed undecoded: no partition "
            "directory name gives their topic")


def parse_offsets(text: str | None) -> tuple[int | None, int | None] | None:
    """``A:B``, ``A:``, ``:B`` or ``N`` → inclusive bounds (the callback of ``--offsets``, the old
    spelling of ``--from``/``--to``, kept as a hidden alias with a one-line note)."""
    from kreplica.cli.runner import error_line

    if text is None:
        return None
    error_line("kreplica: note: --offsets A:B is deprecated and will be removed: use --from A --to B")
    try:
        if ":" in text:
            low, _, high = text.partition(":")
            first = int(low) if low.strip() else None
            last = int(high) if high.strip() else None
        else:
            first = last = int(text)
    except ValueError:
        raise UsageError(f"expected A:B, A:, :B or N with integer offsets, got {text!r}", option="--offsets") from None
    if first is not None and last is not None and first > last:
        raise UsageError(f"the range {text!r} is empty (first offset above last)", option="--offsets")
    return first, last


def _offset_range(offsets, first: int | None, last: int | None) -> tuple[int | None, int | None, str, str]:
    """The inclusive bounds asked for, and the option each came from (for the messages): ``--from``
    and ``--to``, or the old ``--offsets``."""
    if offsets is not None:
        return (*offsets, "--offsets", "--offsets")
    if first is not None and last is not None and first > last:
        raise UsageError(f"the range {first}..{last} is empty (--from above --to)", option="--from")
    return first, last, "--from", "--to"


def _within_the_log(events: Iterator, first: int | None, last: int | None,
                    names: tuple[str, str] = ("--from", "--to")) -> Iterator:
    """The events unchanged, once a batch is listed; while none is, they are held, so that an
    ``--from``/``--to`` range wholly past the last offset read (or before the first) is exit 2 with
    nothing printed, not an empty "OK" (:func:`~kreplica.cli.options.sources.check_point`). A range
    that falls in a gap (a compacted stretch) or that the other filters empty is answered."""
    from kreplica.analysis.inspect.inspect_log import SegmentSummary
    from kreplica.cli.options.sources import check_point
    from kreplica.formats.log.batch import RecordBatch
    from kreplica.model.evidence_span import EvidenceSpan

    held = []
    for event in events:
        if type(event) is RecordBatch:
            yield from held
            yield event
            yield from events
            return
        held.append(event)
    read = [e for e in held if isinstance(e, SegmentSummary) and e.first_offset is not None]
    if read:
        span = EvidenceSpan("log", min(e.first_offset for e in read), max(e.last_offset for e in read), None, None)
        check_point(span, names[0], position=first)
        check_point(span, names[1], position=last)
    yield from held


@app.command("inspect-log", cls=command(needs={"--decode": "--records"},
                                        exclusive=[("--offsets", "--from"), ("--offsets", "--to")]),
             short_help="Read Kafka log segments exactly as Kafka does, report damage, judge recovery.")
@runs_command
def inspect_log(
    paths: Annotated[list[str], typer.Argument(
        metavar="PATH", show_default=False,
        help="Segment files (*.log), partition directories, log directories, or - for a segment on stdin.")],
    output_format: FormatOption = None,
    records: Annotated[bool, typer.Option("--records", help="List every record after its batch.")] = False,
    payload: PayloadOption = Payload.base64,
    decode: Annotated[Optional[Decode], typer.Option(
        "--decode", case_sensitive=False, show_default=False,
        help="With --records: internal decodes the records of __consumer_offsets, __transaction_state, "
             "__share_group_state, __cluster_metadata (and KRaft .checkpoint snapshots) and "
             "__remote_log_metadata, the topic "
             "taken from the partition directory's name; none lists them raw. Default: internal.")] = None,
    first_offset: Annotated[Optional[int], typer.Option(
        "--from", metavar="OFFSET", show_default=False,
        help="List only batches and records from this offset on (inclusive; a batch that holds it is listed).")] = None,
    last_offset: Annotated[Optional[int], typer.Option(
        "--to", metavar="OFFSET", show_default=False,
        help="List only batches and records up to this offset (inclusive).")] = None,
    offsets: Annotated[Optional[str], typer.Option(
        "--offsets", metavar="A:B", callback=parse_offsets, hidden=True)] = None,
    producer_id: Annotated[Optional[int], typer.Option(
        "--producer-id", help="List only batches of this producer id.")] = None,
    leader_epoch: Annotated[Optional[int], typer.Option(
        "--leader-epoch", help="List only batches with this partition leader epoch.")] = None,
    transactional: Annotated[Optional[bool], typer.Option(
        "--transactional/--not-transactional", show_default=False,
        help="List only transactional (or only non-transactional) batches.")] = None,
    control: Annotated[Optional[bool], typer.Option(
        "--control/--not-control", show_default=False,
        help="List only control batches (transaction markers), or only data batches.")] = None,
    max_bytes: Annotated[Optional[int], typer.Option(
        "--max-bytes", min=1, help="Read only this many bytes of each segment (no recovery verdict then).")] = None,
    verify_crc: Annotated[bool, typer.Option(
        "--verify-crc/--no-verify-crc", help="Check batch and message CRCs (needed for the recovery verdict).")] = True,
    debug: DebugOption = False,
) -> int:
    """Read Kafka log segments batch by batch (and record by record), report damage with file and
    byte position, list the good data past the point where Kafka's reader stops, and say what a
    broker recovering each segment after an unclean shutdown would keep.

    With --records, the records of Kafka's internal topics are decoded, as kafka-dump-log.sh's
    --offsets-decoder, --transaction-log-decoder, --share-group-state-decoder and
    --cluster-metadata-decoder show them, and more: each record of __consumer_offsets,
    __transaction_state and __share_group_state carries its record type, key fields, value
    version and value fields (a tombstone has no value), with the subscriptions and assignments
    of the consumer protocol expanded; each record of __cluster_metadata and of a KRaft snapshot
    (.checkpoint) carries its metadata record (type, version, fields) or Raft control record,
    the decoding cluster-state uses; each record of __remote_log_metadata (tiered storage) carries
    its remote segment metadata, update or partition-delete record (fields, state id; text names
    the state). Machine formats add a "decoded" member to these records
    (record_type, record_type_id, key, value_version, value; bytes inside follow --payload); text
    shows one line per record, wrapped. The topic comes from the partition directory's name: a
    segment on stdin or outside a partition directory is listed raw. A record that does not
    decode, or whose type or version kreplica does not know, is listed raw with a finding
    (coordinator_invalid_record, coordinator_unknown_record, kraft_invalid_record,
    kraft_unknown_record, remote_log_metadata_invalid_record, remote_log_metadata_unknown_record).
    --decode none lists every record raw.

    A *.log file whose name is not a segment's (server.log) and whose first bytes are not a log
    entry's is not a segment: given by name it is exit 2, in a directory it is skipped with a note.

    Exit status: 0 nothing wrong, 1 damage found (error findings), 2 bad usage or unreadable input
    (a --from/--to range wholly before or beyond the offsets read, a file that is not a segment),
    3 internal error.
    """
    from kreplica.analysis.inspect.inspect_log import InspectOptions, inspect_groups
    from kreplica.cli.progress import byte_progress
    from kreplica.cli.runner import error_line
    from kreplica.model.logdir.segments import find_segments
    from kreplica.report.results.inspect_log import InspectLogReport

    first, last, *names = _offset_range(offsets, first_offset, last_offset)
    options = InspectOptions(
        verify_crc=verify_crc, records=records, decode_internal=decode is not Decode.none, max_bytes=max_bytes,
        first_offset=first, last_offset=last,
        producer_id=producer_id, leader_epoch=leader_epoch, transactional=transactional, control=control,
    )
    require_paths(paths, stdin=True)
    search = find_segments(paths)
    for skipped in search.skipped:
        error_line(f"kreplica: note: skipped {skipped.path}: {skipped.reason}")
    groups = search.groups
    note = _undecodable_note(groups, decode) if records else None
    if note is not None:
        error_line(note)
    with byte_progress("inspect-log", sum(g.size for g in groups), records=records) as advance:
        events = inspect_groups(groups, options, progress=advance)
        if first is not None or last is not None:
            events = _within_the_log(events, first, last, tuple(names))
        return show(InspectLogReport(events, payload), output_format)
