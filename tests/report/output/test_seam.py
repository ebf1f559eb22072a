"""The one output seam (``kreplica/report/output/seam.py``): a command's result rendered as text on
the console or as machine objects through the emitter, by the format asked for (none: text on a
terminal, ndjson elsewhere), and the exit status from the result, not from what was written."""

from __future__ import annotations

import io
import json

import msgpack
import pytest

from kreplica.cli.exit_codes import ExitCode
from kreplica.cli.runner import show
from kreplica.report.output.formats import OutputFormat
from kreplica.report.output.seam import Report, write


class Found(Report):
    """Two objects, a line of text, and problems as given."""

    def __init__(self, problems: bool) -> None:
        self.problems = problems
        self.rendered = []

    def objects(self):
        yield {"type": "a", "n": 1}
        yield {"type": "b", "s": "é"}

    def render_text(self, console) -> None:
        self.rendered.append(console)
        console.print("two objects")

    def has_problems(self) -> bool:
        return self.problems


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("fmt, parse", [
    pytest.param(OutputFormat.ndjson, lambda b: [json.loads(x) for x in b.decode().splitlines()], id="ndjson"),
    pytest.param(OutputFormat.json, lambda b: json.loads(b), id="json"),
    pytest.param(OutputFormat.msgpack, lambda b: list(msgpack.Unpacker(io.BytesIO(b))), id="msgpack"),
])
def test_machine_formats_write_the_objects(fmt, parse) -> None:
    out = io.BytesIO()
    report = Found(False)
    write(report, fmt, out)
    assert parse(out.getvalue()) == [{"type": "a", "n": 1}, {"type": "b", "s": "é"}]
    assert report.rendered == []


def test_text_is_the_reports_own_rendering() -> None:
    out = io.StringIO()
    write(Found(False), OutputFormat.text, out)
    assert out.getvalue() == "two objects\n"


@pytest.mark.parametrize("make_stream, expected", [
    pytest.param(_Terminal, "two objects\n", id="terminal-text"),
    pytest.param(io.StringIO, '{"type":"a","n":1}\n{"type":"b","s":"é"}\n', id="pipe-ndjson"),
])
def test_no_format_means_text_on_a_terminal_and_ndjson_elsewhere(make_stream, expected) -> None:
    """(A new stream per run: a test run twice in one process, as mutmut's does, starts clean.)"""
    stream = make_stream()
    write(Found(False), None, stream)
    assert stream.getvalue() == expected


@pytest.mark.parametrize("problems, status", [
    pytest.param(True, ExitCode.PROBLEMS, id="problems"),
    pytest.param(False, ExitCode.OK, id="none"),
])
def test_the_exit_status_is_the_results(problems, status, capsysbinary) -> None:
    assert show(Found(problems), OutputFormat.ndjson) is status
    assert capsysbinary.readouterr().out.count(b"\n") == 2
