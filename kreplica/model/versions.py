"""Kafka versions as a forensic parameter: behaviour that changed across releases is chosen by
an explicit version, never a hidden global (ARCHITECTURE.md, analysis layer)."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The version kreplica emulates when none is given: current Kafka.
CURRENT = (4, 0)


@dataclass(frozen=True, slots=True, order=True)
class KafkaVersion:
    """``major.minor[.patch]`` of a broker."""

    major: int
    minor: int
    patch: int = 0

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.patch}"

    def at_least(self, major: int, minor: int, patch: int = 0) -> bool:
        return (self.major, self.minor, self.patch) >= (major, minor, patch)


def parse_kafka_version(text: str) -> KafkaVersion:
    """``3.9``, ``2.1.1``, ``0.11.0.3`` (the leading ``0.`` of pre-1.0 versions is kept as major 0)."""
    m = re.fullmatch(r"\s*(\d+)\.(\d+)(?:\.(\d+))?(?:\.\d+)?\s*", text)
    if not m:
        raise ValueError(f"not a Kafka version: {text!r} (expected MAJOR.MINOR[.PATCH], e.g. 3.9)")
    return KafkaVersion(int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))


DEFAULT_VERSION = KafkaVersion(*CURRENT)
