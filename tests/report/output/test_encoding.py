"""One serialiser rule for json, ndjson and msgpack (kreplica/report/output/encoding.py): a NaN or an
infinity, which JSON cannot carry, is refused the same way in every format, never written."""

from __future__ import annotations

import io
import json
import math

import msgpack
import pytest
import typer
from typer.testing import CliRunner

from kreplica.cli.runner import runs_command
from kreplica.report.output.emitter import Emitter
from kreplica.report.output.encoding import refuse_non_finite
from kreplica.report.output.formats import OutputFormat

NAN, INF = float("nan"), float("inf")
GOOD = {"type": "ok", "n": 1}

FORMATS = [
    pytest.param(OutputFormat.ndjson, False, id="ndjson"),
    pytest.param(OutputFormat.json, False, id="json-array"),
    pytest.param(OutputFormat.json, True, id="json-single"),
    pytest.param(OutputFormat.msgpack, False, id="msgpack"),
]
BAD = [
    pytest.param({"type": "x", "v": NAN}, id="nan"),
    pytest.param({"type": "x", "v": INF}, id="inf"),
    pytest.param({"type": "x", "v": -INF}, id="minus-inf"),
    pytest.param({"type": "x", "deep": [{"a": (1, [2.5, NAN])}]}, id="nested"),
    pytest.param({"type": "x", INF: "key"}, id="key"),
]


def _json_refusal(value: float) -> str:
    """The standard library encoder's words for ``value`` with ``allow_nan=False``."""
    with pytest.raises(ValueError) as raised:
        json.dumps(value, allow_nan=False)
    return str(raised.value)


def _emitter(fmt: OutputFormat, single: bool) -> tuple[Emitter, io.BytesIO]:
    raw = io.BytesIO()
    return Emitter(fmt, raw, single=single), raw


@pytest.mark.parametrize(("fmt", "single"), FORMATS)
@pytest.mark.parametrize("obj", BAD)
def test_a_non_finite_float_is_refused_in_every_format_in_the_same_words(fmt, single, obj):
    emitter, raw = _emitter(fmt, single)
    if not single:
        emitter.emit(GOOD)
    before = raw.getvalue() + bytes(emitter._buffer[:emitter._pending_size])
    with pytest.raises(ValueError) as raised:
        emitter.emit(obj)
    assert str(raised.value) == _json_refusal(NAN)
    # nothing of the refused object was written or gathered
    assert raw.getvalue() + bytes(emitter._buffer[:emitter._pending_size]) == before


@pytest.mark.parametrize(("fmt", "single"), FORMATS)
def test_finite_floats_are_written(fmt, single):
    obj = {"type": "x", "v": [0.5, -1e16, 1e-300, 0.0], "n": 203}
    emitter, raw = _emitter(fmt, single)
    emitter.emit(obj)
    emitter.close()
    data = raw.getvalue()
    if fmt is OutputFormat.msgpack:
        assert msgpack.unpackb(data) == obj
    elif single:
        assert json.loads(data) == obj
    elif fmt is OutputFormat.json:
        assert json.loads(data) == [obj]
    else:
        assert [json.loads(line) for line in data.splitlines()] == [obj]


def test_msgpack_float_byte_inside_other_values_is_no_float():
    # 0xcb also occurs inside ints and strings: only a real non-finite float is refused
    obj = {"type": "x", "n": 0xCBCB, "s": "\u02cb", "b": [203, -53]}
    emitter, raw = _emitter(OutputFormat.msgpack, False)
    emitter.emit(obj)
    emitter.close()
    assert b"\xcb" in raw.getvalue() and msgpack.unpackb(raw.getvalue()) == obj


def test_refuse_non_finite_passes_finite_values():
    refuse_non_finite({"a": [1, 2.5, "x", None, True, {"b": (3, -0.0)}], 1.5: 2})
    with pytest.raises(ValueError):
        refuse_non_finite([[[[-math.inf]]]])


@pytest.mark.parametrize("fmt", ["json", "ndjson", "msgpack"])
def test_a_command_emitting_nan_exits_3_in_one_line_in_every_format(fmt):
    app = typer.Typer()

    @app.command()
    @runs_command
    def emits(output_format: str = typer.Option("json", "-f"), debug: bool = False) -> int:
        emitter = Emitter(OutputFormat(output_format), single=True) if output_format == "json" \
            else Emitter(OutputFormat(output_format))
        emitter.emit({"type": "x", "v": NAN})
        emitter.close()
        return 0

    result = CliRunner().invoke(app, ["-f", fmt])
    assert result.exit_code == 3
    assert result.stderr.splitlines() == [f"kreplica: internal error: ValueError: {_json_refusal(NAN)} "
                                          "(run with --debug for the traceback)"]
    assert result.stdout_bytes == b""
