"""The ndjson renderer streams a batch's records in bounded blocks (issue 14): a batch declaring
millions of records must not be held in memory whole before it is written."""

from __future__ import annotations

import io
import json

from kreplica.analysis.inspect.inspect_log import SegmentStart
from kreplica.formats.log.batch import Record
from kreplica.formats.log.default_records import build_batch, parse_header
from kreplica.report.schemas import inspect_log
from kreplica.report.output.emitter import Emitter
from kreplica.report.output.formats import OutputFormat, Payload


class _Counting(Emitter):
    def __init__(self, stream):
        super().__init__(OutputFormat.ndjson, stream)
        self.blocks: list[int] = []

    def write_block(self, data: bytes, count: int = 1) -> None:
        self.blocks.append(count)
        super().write_block(data, count)


def test_a_batch_of_many_records_is_written_in_blocks():
    header = parse_header(build_batch([], base_offset=0), 0, 61, path="p.log", verify_crc=False)
    n = 3 * inspect_log.FLUSH_RECORDS + 5
    events = [SegmentStart("p.log", 0, 61), header] + [Record(0, i, 0, -1, None, b"v", ()) for i in range(n)]
    out = io.BytesIO()
    emitter = _Counting(out)
    inspect_log.emit_events(events, emitter, Payload.none)
    emitter.close()
    assert [c for c in emitter.blocks if c > 1] == [inspect_log.FLUSH_RECORDS] * 3 + [5]
    assert max(emitter.blocks) <= inspect_log.FLUSH_RECORDS
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [line["offset"] for line in lines if line["type"] == "record"] == list(range(n))
