"""``.kafka_cleanshutdown`` (kafka-formats spec §8.6): the marker of a clean broker shutdown.

Its presence in a log directory root means the broker shut down cleanly and has not started
since (a broker deletes it first thing when loading the directory); from Kafka 3.7 its content
also records the broker epoch. Kafka's class: ``CleanShutdownFileHandler`` in ``storage/src/
main/java/org/apache/kafka/storage/internals/checkpoint/CleanShutdownFileHandler.java`` (apache/
kafka trunk 2024-10 baseline); up to 3.6 ``core/src/main/scala/kafka/log/LogManager.scala``.

Layout::

    CleanShutdown => ""                                        (up to 3.6)
                   | {"version": 0, "brokerEpoch": N}          (3.7+, one line of JSON via Jackson)

No checksum; unknown fields are ignored and an unreadable file just means "no broker epoch".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kreplica.formats._java import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, jackson_read_value, java_parse_int, java_parse_long

CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"


@dataclass(frozen=True, slots=True)
class CleanShutdown:
    """``.kafka_cleanshutdown``: its presence means a clean shutdown (the caller knows that);
    its content, from 3.7, records the broker epoch. ``broker_epoch`` is ``None`` when the file
    is empty (written by 3.6 or earlier) or unreadable — Kafka then just has no epoch.
    ``version`` is the ``version`` field when readable; ``problem`` says why no epoch was read
    (``None`` when it was, or when the file is empty)."""

    broker_epoch: int | None
    version: int | None = None
    problem: str | None = None

    @property
    def is_empty(self) -> bool:
        return self.broker_epoch is None and self.problem is None


class _NotCoercible(Exception):
    pass


def _jackson_coerce_integral(value: object, lo: int, hi: int) -> int | None:
    # Jackson's default coercions into an int/Long field: integers in range, floats truncated
    # (ACCEPT_FLOAT_AS_INT), numeric strings parsed; "" and null map to null.
    if value is None:
        return None
    if isinstance(value, bool):
        raise _NotCoercible("boolean")
    if isinstance(value, int):
        if lo <= value <= hi:
            return value
        raise _NotCoercible("out of range")
    if isinstance(value, float):
        if math.isfinite(value) and lo <= int(value) <= hi:
            return int(value)
        raise _NotCoercible("out of range")
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        try:
            return java_parse_long(text) if hi > INT32_MAX else java_parse_int(text)
        except ValueError:
            raise _NotCoercible("not a number") from None
    raise _NotCoercible(type(value).__name__)



def parse_clean_shutdown(content: bytes, *, path: str) -> CleanShutdown:
    """Read ``.kafka_cleanshutdown`` as ``CleanShutdownFileHandler.read`` does (§8.6). Never raises.

    Empty (up to 3.6) → no epoch. Otherwise the text (UTF-8, bad bytes replaced) must hold a
    JSON object whose ``brokerEpoch`` maps to a Java ``Long`` (unknown fields ignored, the
    version not checked); anything else — not JSON, not an object, a missing or null epoch — is
    what Kafka logs at debug level and treats as "no broker epoch".
    """
    if len(content) == 0:
        return CleanShutdown(None)
    text = bytes(content).decode("utf-8", "replace")
    try:
        value = jackson_read_value(text)
    except ValueError as exc:
        return CleanShutdown(None, problem=f"not JSON: {exc}")
    if not isinstance(value, dict):
        return CleanShutdown(None, problem="not a JSON object")
    try:
        version = _jackson_coerce_integral(value.get("version"), INT32_MIN, INT32_MAX)
        epoch = _jackson_coerce_integral(value.get("brokerEpoch"), INT64_MIN, INT64_MAX)
    except _NotCoercible as exc:
        return CleanShutdown(None, problem=f"a field does not map to a number ({exc})")
    if epoch is None:
        return CleanShutdown(None, version=version if version is not None else 0,
                             problem="no brokerEpoch")
    return CleanShutdown(epoch, version=version if version is not None else 0)
