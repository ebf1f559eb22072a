"""A finding's details never collide with the envelope of its ``finding`` object: the
:class:`~kreplica.formats.findings.Finding` refuses details named like an envelope field, so
machine output never loses one of two values under one name (before, ``setdefault`` kept the
envelope's and dropped the detail: an index finding's ``position`` detail, a ZooKeeper txn
finding's ``type``); every other detail follows the envelope unchanged, in its own order."""

from __future__ import annotations

import pytest

from kreplica.formats.findings import ENVELOPE_FIELDS, Finding
from kreplica.report.output.findings import finding_object


def test_the_envelope_fields_are_the_objects_own_keys() -> None:
    bare = finding_object(Finding("crc_mismatch", "a.log", 12, "bad"))
    assert set(bare) == ENVELOPE_FIELDS
    assert bare == {"type": "finding", "path": "a.log", "position": 12, "kind": "crc_mismatch",
                    "severity": "error", "message": "bad"}


@pytest.mark.parametrize("key", [pytest.param(k, id=k) for k in sorted(ENVELOPE_FIELDS)])
def test_a_detail_named_like_the_envelope_is_refused(key: str) -> None:
    with pytest.raises(ValueError, match=key):
        Finding("crc_mismatch", "a.log", 12, "bad", details={"stored": 1, key: "x"})


def test_other_details_follow_the_envelope_in_their_order() -> None:
    # the counter-case: names near the envelope's (segment_position, txn_type) are details like any other
    f = Finding("index_negative_entry", "0.index", 8, "slot 1: negative",
                details={"slot": 1, "relative_offset": -5, "segment_position": 4133, "txn_type": 5})
    obj = finding_object(f)
    assert list(obj)[6:] == ["slot", "relative_offset", "segment_position", "txn_type"]
    assert (obj["position"], obj["segment_position"], obj["type"], obj["txn_type"]) == (8, 4133, "finding", 5)
