"""``Emitter.emit_plain`` (orjson for objects without floats) writes exactly what ``Emitter.emit``
(the standard library's encoder) writes, in every format, and falls back where orjson refuses."""

from __future__ import annotations

import io

import pytest

from kreplica.report.output import emitter as emitter_module
from kreplica.report.output.emitter import Emitter
from kreplica.report.output.formats import OutputFormat

OBJECTS = [
    {"type": "partition_event", "partition": "t-0", "position": "0x1b2", "time": 1700000000000,
     "before": None, "after": {"leader": -1, "isr": (1, 2, 3)}, "unclean": True, "offline": False,
     "replicas": [], "evidence": "say \"why\"\\ \n\t\x00\x1f\x7f é ✓ 注文 \u2028 \U0001f600"},
    {"type": "x", "ints": [0, -1, 2**63 - 1, -2**63, 2**64 - 1], "nested": {"a": [{"b": None}]}, "s": ""},
    pytest.param({"type": "big", "n": 2**64}, id="int-beyond-64-bits"),
    pytest.param({"type": "surrogate", "s": "bad\udcff"}, id="lone-surrogate"),
    pytest.param({"type": "keys", 1: "int key"}, id="non-str-key"),
]


def _written(fmt: OutputFormat, objs, plain: bool) -> bytes:
    """What the emitter writes to a UTF-8 text stream with ``surrogateescape`` (the bytes of
    undecodable file names go out as they came in); msgpack needs a binary stream."""
    raw = io.BytesIO()
    stream = raw if fmt is OutputFormat.msgpack else io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape",
                                                                      newline="\n", write_through=True)
    emitter = Emitter(fmt, stream)
    for obj in objs:
        (emitter.emit_plain if plain else emitter.emit)(obj)
    emitter.close()
    return raw.getvalue()


@pytest.mark.parametrize("fmt", [OutputFormat.ndjson, OutputFormat.json, OutputFormat.msgpack])
@pytest.mark.parametrize("obj", OBJECTS)
def test_emit_plain_writes_what_emit_writes(fmt, obj):
    objs = [obj, OBJECTS[0]]
    try:
        expected = _written(fmt, objs, plain=False)
    except (ValueError, OverflowError, TypeError) as exc:   # msgpack: no 2**64, no lone surrogate
        with pytest.raises(type(exc)):
            _written(fmt, objs, plain=True)
        return
    assert _written(fmt, objs, plain=True) == expected


def test_without_orjson_it_is_emit(monkeypatch):
    monkeypatch.setattr(emitter_module, "ORJSON", None)
    assert _written(OutputFormat.ndjson, OBJECTS[:2], plain=True) == _written(OutputFormat.ndjson, OBJECTS[:2],
                                                                              plain=False)
