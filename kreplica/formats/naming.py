"""File and directory names in a Kafka log directory (kafka-formats spec §9).

Sources (apache/kafka 3.9): ``storage/src/main/java/org/apache/kafka/storage/internals/log/
LogFileUtils.java`` (``filenamePrefixFromOffset``: 20-digit zero-padded base offsets) and
``UnifiedLog.parseTopicPartitionName`` (``<topic>-<partition>``, split at the *last* dash, so
topics may contain dots and dashes; ``-delete``, ``-future`` and ``-stray`` directories carry a
``.<uuid>`` before the suffix).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LOG_SUFFIX = ".log"
_SEGMENT = re.compile(r"^(\d{20})\.log$")
_PARTITION = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)(?:\.(?P<uuid>[0-9a-f]{32})-(?P<suffix>delete|future|stray))?$")


@dataclass(frozen=True, slots=True)
class PartitionDirName:
    """A parsed partition directory name; ``suffix`` is ``delete``, ``future``, ``stray`` or ``None``."""

    topic: str
    partition: int
    suffix: str | None = None

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"


def segment_base_offset(file_name: str) -> int | None:
    """The base offset a segment file name declares (``00000000000000000262.log`` → 262), else ``None``."""
    m = _SEGMENT.match(file_name)
    return int(m.group(1)) if m else None


def segment_file_name(base_offset: int) -> str:
    """The name Kafka gives the segment starting at ``base_offset``."""
    return f"{base_offset:020d}{LOG_SUFFIX}"


def parse_partition_dir(name: str) -> PartitionDirName | None:
    """``orders-0`` → (orders, 0); ``my.topic-with-dash-12`` → (my.topic-with-dash, 12); else ``None``."""
    m = _PARTITION.match(name)
    if not m:
        return None
    return PartitionDirName(m.group("topic"), int(m.group("partition")), m.group("suffix"))
