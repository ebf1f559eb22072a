"""The version table: parsing ``--kafka-version`` and features gated by release, including a
change backported to bug-fix releases of older lines (a patch-level gate).

KAFKA-6857 (``LeaderEpochFileCache.endOffsetFor`` answers -1 for an undefined requested epoch) is
in the 2.0.0 tag and in 0.11.0.3, 1.0.2 and 1.1.1 (``git describe --contains`` on its commits on
the 0.11.0, 1.0 and 1.1 branches); 0.11.0.2, 1.0.1 and 1.1.0 predate it.
"""

from __future__ import annotations

import pytest

from kreplica.model.versions import Feature, KafkaVersion, parse_kafka_version

BACKPORTED = Feature.UNDEFINED_EPOCH_ANSWERS_UNDEFINED


@pytest.mark.parametrize("text, expected, shown", [
    pytest.param("3.9", KafkaVersion(3, 9), "3.9.0", id="major-minor"),
    pytest.param("1.1.1", KafkaVersion(1, 1, 1), "1.1.1", id="patch"),
    pytest.param("0.11.0.3", KafkaVersion(0, 11, 0, 3), "0.11.0.3", id="pre-1.0-keeps-its-fix-number"),
    pytest.param("0.11.0.0", KafkaVersion(0, 11), "0.11.0", id="pre-1.0-fix-zero"),
    pytest.param("2.8.1.7", KafkaVersion(2, 8, 1), "2.8.1", id="a-fourth-number-after-1.0-is-ignored"),
])
def test_parse(text: str, expected: KafkaVersion, shown: str) -> None:
    assert parse_kafka_version(text) == expected and str(expected) == shown


@pytest.mark.parametrize("version, has", [
    pytest.param(KafkaVersion(0, 11, 0, 2), False, id="0.11.0.2"),
    pytest.param(KafkaVersion(0, 11, 0, 3), True, id="0.11.0.3-backport"),
    pytest.param(KafkaVersion(1, 0), False, id="1.0.0"),
    pytest.param(KafkaVersion(1, 0, 1), False, id="1.0.1"),
    pytest.param(KafkaVersion(1, 0, 2), True, id="1.0.2-backport"),
    pytest.param(KafkaVersion(1, 1), False, id="1.1.0"),
    pytest.param(KafkaVersion(1, 1, 1), True, id="1.1.1-backport"),
    pytest.param(KafkaVersion(1, 1, 2), True, id="later-fix-of-a-backported-line"),
    pytest.param(KafkaVersion(2, 0), True, id="2.0-since"),
    pytest.param(KafkaVersion(4, 0), True, id="current"),
])
def test_a_backport_is_a_gate_per_release_line(version: KafkaVersion, has: bool) -> None:
    assert version.has(BACKPORTED) == has


def test_a_feature_without_backports_is_gated_by_its_first_version_only() -> None:
    assert Feature.KIP_279_EPOCH_COMPARISON.backports == ()
    assert not KafkaVersion(1, 1, 1).has(Feature.KIP_279_EPOCH_COMPARISON)
    assert Feature.RECOVERY_SKIPS_EPOCH_ZERO.value[1] == KafkaVersion(2, 7)
    assert not KafkaVersion(2, 7).has(Feature.RECOVERY_SKIPS_EPOCH_ZERO)
