"""The JSON document a Kafka command-line tool prints, found among its prose (private).

``kafka-reassign-partitions.sh`` and ``kafka-log-dirs.sh`` print a line or two of prose, then one
JSON document per line; users save the whole printout. The first ``{`` starts the document and
parsing stops after the first complete value, as Jackson's reader does.
"""

from __future__ import annotations

import json

from kreplica.formats.errors import Malformed


def first_json_document(content: bytes | str, *, path: str | None, expected: str) -> tuple[object, int]:
    """``(document, byte position of its first byte)``; :class:`Malformed` for text that is not
    UTF-8, holds no ``{`` (``expected`` says what should be there) or is not JSON from it on."""
    if isinstance(content, (bytes, bytearray, memoryview)):
        try:
            text = bytes(content).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise Malformed("the file is not valid UTF-8", path=path, position=exc.start, field="encoding") from None
    else:
        text = content
    start = text.find("{")
    if start < 0:
        raise Malformed(f"no JSON object in the file (expected {expected})", path=path, position=0)
    try:
        doc, _end = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise Malformed(f"not JSON: {exc.msg}", path=path, position=len(text[:exc.pos].encode("utf-8"))) from None
    except RecursionError:
        raise Malformed("JSON nested too deeply", path=path, position=len(text[:start].encode("utf-8"))) from None
    return doc, len(text[:start].encode("utf-8"))
