"""The text report, rendered to a fixed-width console and compared whole (rich's practice), and
the fast ndjson lines checked against the objects they stand for.

The expected text was checked by hand against the fixture's generator: batch 2 (byte 519,
offsets 5-7) has one value byte flipped, so its CRC fails and recovery keeps 519 bytes."""

from __future__ import annotations

import re

import pytest

from kreplica.analysis.inspect.inspect_log import InspectOptions, inspect_groups
from kreplica.model.logdir.segments import find_segment_groups
from kreplica.report.text.inspect_log import render_text
from kreplica.report.output.formats import Payload
from tests.conftest import ROOT
from tests.builders.text_width import render

EXPECTED = {120: """\
fixtures/damaged/crc-flip-0/00000000000000000000.log (base offset 0, 1,852 bytes)
     position         offsets        count   epoch  fmt codec  fl crc
            0           0-4          n=5     e=0    v2 none   -  crc ok
      @4 ts=1700000000044 seq=-1 key=null value={"id":4,"amount":148.04,"note":"charlie foxtrot india lima os… headers=3
          519           5-7          n=3     e=0    v2 none   -  CRC BAD
      @5 ts=1700000000185 seq=-1 key=key-5 value={"id":5,"amount":185.05,"note":"juliet mike papa sierra vict… headers=3
      @6 ts=1700000000196 seq=-1 key=null value={"id":6,"amount":222.06,"note":"quebec tango whiskey zulu charlie foxtr…
      @7 ts=1700000000207 seq=-1 key=key-7 value={"id":7,"amount":259.07,"note":"xray alpha delta golf juliet… headers=3
  ERROR crc_mismatch at byte 519: CRC-32C of the batch at byte 519 (offsets 5-7) does not match: stored 3662246888,
    computed 2131288470
          910           8-15         n=8     e=0    v2 none   -  crc ok
      @8 ts=1700000000296 seq=-1 key=key-8 value={"id":8,"amount":296.08,"note":"echo hotel kilo november que… headers=3
DAMAGED fixtures/damaged/crc-flip-0/00000000000000000000.log: 4 batches, 17 records, offsets 0-16, 1,852 bytes;
  1 problem; recovery truncates 1,333 bytes at byte 519
""", 80: """\
fixtures/damaged/crc-flip-0/00000000000000000000.log (base offset 0,
  1,852 bytes)
     position         offsets        count   epoch  fmt codec  fl crc
            0           0-4          n=5     e=0    v2 none   -  crc ok
      @4 ts=1700000000044 seq=-1 key=null value={"id":4,"amount":148.… headers=3
          519           5-7          n=3     e=0    v2 none   -  CRC BAD
      @5 ts=1700000000185 seq=-1 key=key-5 value={"id":5,"amount":185… headers=3
      @6 ts=1700000000196 seq=-1 key=null value={"id":6,"amount":222.06,"note":…
      @7 ts=1700000000207 seq=-1 key=key-7 value={"id":7,"amount":259… headers=3
  ERROR crc_mismatch at byte 519: CRC-32C of the batch at byte 519 (offsets 5-7)
    does not match: stored 3662246888, computed 2131288470
          910           8-15         n=8     e=0    v2 none   -  crc ok
      @8 ts=1700000000296 seq=-1 key=key-8 value={"id":8,"amount":296… headers=3
DAMAGED fixtures/damaged/crc-flip-0/00000000000000000000.log: 4 batches,
  17 records, offsets 0-16, 1,852 bytes; 1 problem; recovery truncates
  1,333 bytes at byte 519
"""}


def _render(paths: list[str], options: InspectOptions, width: int, **console) -> tuple[str, int]:
    def draw(c):
        return render_text(inspect_groups(find_segment_groups(paths), options), c, Payload.utf8)

    errors = []
    text = render(lambda c: errors.append(draw(c)), width, **console)
    return text, errors[0]


@pytest.mark.parametrize("width", [pytest.param(120, id="120"), pytest.param(80, id="80")])
def test_text_report_of_a_damaged_segment(width, monkeypatch) -> None:
    """Records fill the line (their values cut to fit), findings and verdicts wrap at spaces under
    a hanging indent, counts agree with their nouns ("1 problem")."""
    monkeypatch.chdir(ROOT)
    text, errors = _render(["fixtures/damaged/crc-flip-0"], InspectOptions(records=True, first_offset=4, last_offset=8),
                           width)
    assert errors == 1
    assert text == EXPECTED[width]


def test_batch_and_record_lines_skip_rich(monkeypatch) -> None:
    """Batch and record lines are written a block at a time, not printed through rich one by one
    (which made ``--records -f text`` some sixty times slower than ndjson): rich prints only the
    lines of the segment's heading, its column heads and its verdict, not one per batch or record."""
    from rich.console import Console

    printed = []
    real = Console.print
    monkeypatch.setattr(Console, "print", lambda self, *a, **k: (printed.append(a), real(self, *a, **k))[1])
    monkeypatch.chdir(ROOT)
    text, _ = _render(["fixtures/logs/payments-0"], InspectOptions(records=True), 80)
    assert text.count("\n      @") == 21 and text.count("crc ok") == 9
    assert len(printed) == 4   # heading, column heads, the verdict's two lines


def test_colours_reach_a_colour_terminal_only(monkeypatch) -> None:
    monkeypatch.chdir(ROOT)
    plain, _ = _render(["fixtures/damaged/crc-flip-0"], InspectOptions(), 80)
    coloured, _ = _render(["fixtures/damaged/crc-flip-0"], InspectOptions(), 80, color_system="standard",
                          force_terminal=True)
    assert "\x1b[1;31mCRC BAD\x1b[0m" in coloured
    assert re.sub("\x1b\\[[0-9;]*m", "", coloured) == plain


def test_fast_batch_line_is_exactly_the_json_of_the_batch_object() -> None:
    import json

    from kreplica.formats.log.batch import RecordBatch
    from kreplica.report.schemas.inspect_log import batch_line, batch_object
    from kreplica.report.output.encoding import dumps
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
    from kreplica.report.schemas.inspect_log import json_payload_encoder, record_line, record_object
    from kreplica.report.output.encoding import dumps
    from kreplica.report.output.payload import encoder
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
