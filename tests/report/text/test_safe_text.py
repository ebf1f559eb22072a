"""Text output never sends the evidence's control characters to the terminal raw; machine
output keeps the exact bytes."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kreplica.cli.main import app
from kreplica.formats.log.batch import NewRecord
from kreplica.formats.log.default_records import build_batch
from kreplica.report.text.safe_text import escape, printable

HOSTILE_KEY = b"\x1b]0;pwned\x07"
HOSTILE_VALUE = "\x1b[2J\x1b[31mred\u202ereversed\r\n".encode()


@pytest.mark.parametrize("text,shown", [("\x1b[31m", "\\x1b[31m"), ("a\nb\tc", "a\\x0ab\\x09c"), ("\x9b", "\\x9b"),
                                         ("\u202eevil", "\\u202eevil"), ("plain é", "plain é")])
def test_printable_escapes_controls_and_bidi_overrides(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_escape_also_escapes_rich_markup() -> None:
    assert escape("[bold]\x1b") == "\\[bold]\\x1b"


def _segment(tmp_path: Path) -> Path:
    part = tmp_path / "ev\x1bil-0"
    part.mkdir()
    record = NewRecord(0, 1_700_000_000_000, HOSTILE_KEY, HOSTILE_VALUE, (("h\x1b[1m", b"\x1b[5m"),))
    (part / "00000000000000000000.log").write_bytes(build_batch([record], base_offset=0))
    return part


@pytest.mark.parametrize("payload", ["utf8", "hex", "base64"])
def test_text_output_shows_escapes_not_raw_controls(tmp_path: Path, payload: str) -> None:
    part = _segment(tmp_path)
    result = CliRunner().invoke(app, ["inspect-log", str(part), "--records", "--payload", payload, "-f", "text"])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout and "\u202e" not in result.stdout
    assert "\\x1b" in result.stdout   # the directory name, at least, is shown escaped


def test_machine_output_keeps_the_exact_bytes(tmp_path: Path) -> None:
    part = _segment(tmp_path)
    result = CliRunner().invoke(app, ["inspect-log", str(part), "--records", "-f", "ndjson"])
    (record,) = [json.loads(line) for line in result.stdout.splitlines() if '"type":"record"' in line]
    assert base64.b64decode(record["key"]) == HOSTILE_KEY and base64.b64decode(record["value"]) == HOSTILE_VALUE
    assert record["path"].startswith(str(part))


def test_every_text_command_on_hostile_names(tmp_path: Path) -> None:
    part = _segment(tmp_path)
    for args in (["inspect-dir", str(part)], ["epochs", str(part)], ["diverge", str(part), str(part)]):
        result = CliRunner().invoke(app, [*args, "-f", "text"])
        assert result.exit_code in (0, 1), result.output
        assert "\x1b" not in result.stdout, args


def test_an_undecodable_file_names_bytes_are_shown_as_escapes() -> None:
    # os.fsdecode(b"bad-\xff\xfe") is "bad-\udcff\udcfe": each lone surrogate is the byte it stands for
    assert printable("bad-\udcff\udcfe-0") == "bad-\\xff\\xfe-0"
    assert printable("\ud800") == "\\ud800"  # any other lone surrogate: as a code point
    printable("\udc80" + "x" * 3).encode("ascii")  # encodable by any terminal
