"""The text report, rendered to a fixed-width console and compared whole (rich's practice).

The expected text was checked by hand against the fixture's generator: batch 2 (byte 519,
offsets 5-7) has one value byte flipped, so its CRC fails and recovery keeps 519 bytes."""

from __future__ import annotations

import io

from rich.console import Console

from kreplica.analysis.inspect.inspect_log import InspectOptions, inspect_groups
from kreplica.model.segments import find_segment_groups
from kreplica.report.inspect_log import render_text
from kreplica.report.output import Payload

EXPECTED = """\
fixtures/damaged/crc-flip-0/00000000000000000000.log (base offset 0, 1,852 bytes)
     position         offsets        count   epoch  fmt codec  fl crc
            0           0-4          n=5     e=0    v2 none   -  crc ok
      @4 ts=1700000000044 seq=-1 key=null value={"id":4,"amount":148.04,"note":"charlie foxtrot… headers=3
          519           5-7          n=3     e=0    v2 none   -  CRC BAD
      @5 ts=1700000000185 seq=-1 key=key-5 value={"id":5,"amount":185.05,"note":"juliet mike pap… headers=3
      @6 ts=1700000000196 seq=-1 key=null value={"id":6,"amount":222.06,"note":"quebec tango wh…
      @7 ts=1700000000207 seq=-1 key=key-7 value={"id":7,"amount":259.07,"note":"xray alpha delt… headers=3
  ERROR crc_mismatch at byte 519: CRC-32C of the batch at byte 519 (offsets 5-7) does not match: stored 3662246888, computed 2131288470
          910           8-15         n=8     e=0    v2 none   -  crc ok
      @8 ts=1700000000296 seq=-1 key=key-8 value={"id":8,"amount":296.08,"note":"echo hotel kilo… headers=3
DAMAGED fixtures/damaged/crc-flip-0/00000000000000000000.log: 4 batches, 17 records, offsets 0-16, 1,852 bytes; 1 problem(s); recovery truncates 1,333 bytes at byte 519
"""


def test_text_report_of_a_damaged_segment(monkeypatch) -> None:
    from tests.conftest import ROOT

    monkeypatch.chdir(ROOT)
    out = io.StringIO()
    console = Console(file=out, width=120, color_system=None, highlight=False, soft_wrap=True)
    events = inspect_groups(find_segment_groups(["fixtures/damaged/crc-flip-0"]),
                            InspectOptions(records=True, first_offset=4, last_offset=8))
    errors = render_text(events, console, Payload.utf8)
    assert errors == 1
    assert out.getvalue() == EXPECTED


def test_fast_batch_line_is_exactly_the_json_of_the_batch_object() -> None:
    import json

    from kreplica.formats.log.batch import RecordBatch
    from kreplica.report.inspect_log import batch_line, batch_object
    from kreplica.report.output import dumps
    from tests.conftest import FIXTURES

    paths = [str(FIXTURES / "logs"), str(FIXTURES / "damaged")]
    batches = [e for e in inspect_groups(find_segment_groups(paths), InspectOptions()) if isinstance(e, RecordBatch)]
    unverified = [e for e in inspect_groups(find_segment_groups(paths), InspectOptions(verify_crc=False))
                  if isinstance(e, RecordBatch)]
    assert len(batches) > 50 and any(b.after_break for b in batches) and any(b.magic == 0 for b in batches)
    for b in batches + unverified + [batches[0]._replace(compression=7, delete_horizon_ms=5, path='a"\\b')]:
        line = batch_line(b, dumps(b.path))
        assert line == dumps(batch_object(b)) + "\n"
        assert json.loads(line) == batch_object(b)


def test_fast_record_line_is_exactly_the_json_of_the_record_object() -> None:
    import json

    from kreplica.formats.log.batch import Header, Record
    from kreplica.report.inspect_log import json_payload_encoder, record_line, record_object
    from kreplica.report.output import dumps
    from kreplica.report.payload import encoder
    from tests.conftest import FIXTURES

    paths = [str(FIXTURES / "logs"), str(FIXTURES / "damaged")]
    records = [e for e in inspect_groups(find_segment_groups(paths), InspectOptions(records=True))
               if isinstance(e, Record)]
    assert any(r.control_type is not None for r in records) and any(r.key is None for r in records)
    odd = Record(7, 8, -1, 5, b"\x00\xff\"\\", b"", (Header('k"\u00e9\\', b"\x80"), Header("", None)), 0, 3)
    for mode in Payload:
        for r in records + [odd]:
            line = record_line(r, dumps("p\\\""), json_payload_encoder(mode))
            assert line == dumps(record_object(r, "p\\\"", encoder(mode))) + "\n"
            assert json.loads(line) == record_object(r, "p\\\"", encoder(mode))
