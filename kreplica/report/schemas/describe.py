"""Words for the raw codes the formats layer yields (codec ids, timestamp types, control types).

Decoding keeps raw ints; turning them into the strings of the output schemas happens here, once
(the fleet's Parquet tables take the same words from the same name tables, in
:mod:`kreplica.pipeline.tables.schemas`). Unknown codes stay ints so nothing is hidden.
"""

from __future__ import annotations

from kreplica.formats.codecs import CODEC_NAMES
from kreplica.formats.log.batch import TIMESTAMP_TYPE_NAMES
from kreplica.formats.log.control_marker import CONTROL_TYPE_NAMES

TIMESTAMP_TYPES = TIMESTAMP_TYPE_NAMES
CONTROL_TYPES = CONTROL_TYPE_NAMES


def compression(codec: int) -> str | int:
    """``none``, ``gzip``, ``snappy``, ``lz4``, ``zstd``, or the raw id of an undefined codec."""
    return CODEC_NAMES.get(codec, codec)


def timestamp_type(code: int) -> str:
    return TIMESTAMP_TYPES.get(code, "create_time")


def control_type(code: int | None) -> str | None:
    """``commit``/``abort`` for transaction markers, other known names, ``unknown`` otherwise."""
    if code is None:
        return None
    return CONTROL_TYPES.get(code, "unknown")
