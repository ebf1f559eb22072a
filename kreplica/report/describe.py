"""Words for the raw codes the formats layer yields (codec ids, timestamp types, control types).

Decoding keeps raw ints; turning them into the strings of the output schemas happens here, once.
Unknown codes stay ints so nothing is hidden.
"""

from __future__ import annotations

from kreplica.formats.log.batch import CREATE_TIME, LOG_APPEND_TIME, NO_TIMESTAMP_TYPE
from kreplica.formats.codecs import CODEC_NAMES

TIMESTAMP_TYPES = {NO_TIMESTAMP_TYPE: "no_timestamp_type", CREATE_TIME: "create_time", LOG_APPEND_TIME: "log_append_time"}
CONTROL_TYPES = {0: "abort", 1: "commit", 2: "leader_change", 3: "snapshot_header", 4: "snapshot_footer",
                 5: "kraft_version", 6: "kraft_voters"}


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
