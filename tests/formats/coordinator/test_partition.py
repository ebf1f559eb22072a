"""Which ``__consumer_offsets`` (or ``__transaction_state``) partition holds a group's (or
transactional id's) records: ``Utils.abs(key.hashCode) % partitionCount``
(``GroupMetadataManager.partitionFor``, ``TransactionStateManager.partitionFor``).

Vectors: ``String.hashCode`` of ``"Aa"`` and ``"BB"`` is 2112 (the JDK's classic collision);
``"polygenelubricants"`` hashes to ``Integer.MIN_VALUE``, which ``Utils.abs`` maps to 0 (``Math.abs``
would leave it negative); a character outside the BMP counts as its two UTF-16 code units. The wild
corpus checks the rule on every record real brokers wrote (``tests/interop``).
"""

from __future__ import annotations

import pytest

from kreplica.formats._java import INT32_MIN, java_string_hash
from kreplica.formats.coordinator.records import partition_for


@pytest.mark.parametrize("text, expected", [
    pytest.param("", 0, id="empty"),
    pytest.param("Aa", 2112, id="Aa"),
    pytest.param("BB", 2112, id="BB-collides"),
    pytest.param("polygenelubricants", INT32_MIN, id="min-value"),
    pytest.param("\U0001F600", 0xD83D * 31 + 0xDE00, id="surrogate-pair"),
    pytest.param("test-consumer-group", -1793216381, id="negative"),
])
def test_java_string_hash(text: str, expected: int) -> None:
    assert java_string_hash(text) == expected


@pytest.mark.parametrize("key, count, expected", [
    pytest.param("Aa", 50, 2112 % 50, id="positive"),
    # the quickstart's group: a real broker wrote it to __consumer_offsets-31 (oracle/wild,
    # Dung1109__kafka-spring/1087df1/kafka1/data/__consumer_offsets-31)
    pytest.param("test-consumer-group", 50, 31, id="negative-hash-made-positive"),
    pytest.param("polygenelubricants", 50, 0, id="min-value-is-0"),
    pytest.param("Aa", 7, 2112 % 7, id="another-partition-count"),
])
def test_partition_for(key: str, count: int, expected: int) -> None:
    assert partition_for(key, count) == expected
