"""One rule for the values of every machine format, and the JSON text they are written as.

A file name that is not valid UTF-8 reaches kreplica as a string with lone surrogates (Python's
``surrogateescape``: byte 0xff becomes U+DCFF). Machine formats write such a name as the exact
bytes it has on disk, whatever the locale: json and ndjson encode with ``surrogateescape`` (a
stream whose handler is ``strict`` included), and msgpack packs it as a str holding those bytes.
Decode with ``surrogateescape`` to get the name back (``line.decode("utf-8",
"surrogateescape")``; ``msgpack.Unpacker(unicode_errors="surrogateescape")``). Text output
shows the bytes as ``\\xNN`` escapes (:mod:`kreplica.report.text.safe_text`).

Never write what JSON cannot carry. A NaN or an infinity has no JSON form, and none comes from
evidence (decoders yield ints, strings and finite floats), so one in output is kreplica's bug:
json, ndjson and msgpack alike refuse the object with the JSON encoder's ``ValueError`` ("Out of
range float values are not JSON compliant"), which the command runner reports as an internal
error (exit 3).
"""

from __future__ import annotations

import json
import math
from typing import Any

encode_compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode
encode_indented = json.JSONEncoder(ensure_ascii=False, indent=2, allow_nan=False).encode
#: The msgpack type byte of a float64, the only float msgpack.Packer writes by default.
MSGPACK_FLOAT64 = b"\xcb"


def refuse_non_finite(obj: Any) -> None:
    """Raise the JSON encoder's ``ValueError`` if a NaN or an infinity lies anywhere in ``obj``
    (keys included), as json and ndjson output would (module docstring)."""
    stack = [obj]
    while stack:
        value = stack.pop()
        if isinstance(value, float):
            if not math.isfinite(value):
                encode_compact(value)  # raises, in the JSON encoder's words
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)


def dumps(obj: Any) -> str:
    """Compact JSON, as every machine format writes it.

    The standard library's encoder, not orjson: result objects may carry floats (znode
    ``data_json``, KRaft quotas) and orjson writes them differently (``1e16`` for ``1e+16``).
    Hot paths whose values can hold no float use :func:`dumps_str` instead.
    """
    return encode_compact(obj)


def _orjson():
    try:
        import orjson
    except ImportError:  # a source checkout without it: same bytes, slower
        return None
    return orjson


ORJSON = _orjson()
ORJSON_APPEND_NEWLINE = ORJSON.OPT_APPEND_NEWLINE if ORJSON is not None else 0


def dumps_str(text: str, errors: str = "strict") -> bytes:
    """A JSON string literal as UTF-8 bytes, exactly what :func:`dumps` writes for it encoded
    with ``errors`` (a stream's error handler)."""
    if ORJSON is not None:
        try:
            return ORJSON.dumps(text)
        except TypeError:  # lone surrogates (undecodable file names): as the stream would write them
            pass
    return encode_compact(text).encode("utf-8", errors)
