"""The fold (:mod:`kreplica.model.coordinator.fold`) gives the plain replay's state, findings included.

Every case of tests/model/coordinator/test_replay.py is loaded both ways already (group_builder.load);
here random logs of commits, tombstones, group records, transactions and markers, cut at random
points, are loaded by the plain replay, the compiled fold and the pure-Python fold, and must agree.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreplica.formats.log import key_fold
from kreplica.formats.log.batch import CONTROL_ABORT, CONTROL_COMMIT
from kreplica.model.coordinator.replay import NEW_COORDINATOR, OLD_COORDINATOR, ReplayPoint
from tests.builders.groups import commit, group_record, load, member

GROUPS = ("a", "b")
PRODUCERS = (7000, 7001)


def _record(draw) -> tuple:
    kind = draw(st.sampled_from(("commit", "commit", "commit", "tombstone", "group", "group-tombstone", "bad")))
    group = draw(st.sampled_from(GROUPS))
    partition = draw(st.integers(0, 1))
    if kind == "commit":
        return commit(group, "t", partition, draw(st.integers(0, 99)), version=draw(st.sampled_from((1, 3, 4))),
                      key_version=draw(st.sampled_from((0, 1))))
    if kind == "tombstone":
        return commit(group, "t", partition)
    if kind == "group":
        return group_record(group, draw(st.sampled_from(([], [member("m", ["t"], {"t": [0]})]))))
    if kind == "group-tombstone":
        return group_record(group, None)
    return commit(group, "t", partition, 1)[0], b"\x00\x03\x01"          # a value that does not decode


@st.composite
def logs(draw) -> list:
    entries = []
    for _ in range(draw(st.integers(1, 14))):
        shape = draw(st.sampled_from(("plain", "plain", "txn", "marker")))
        if shape == "marker":
            entries.append({"marker": draw(st.sampled_from((CONTROL_COMMIT, CONTROL_ABORT, 4))),
                            "producer_id": draw(st.sampled_from(PRODUCERS))})
            continue
        records = [draw(st.composite(lambda d: _record(d))()) for _ in range(draw(st.integers(1, 4)))]
        entries.append(records if shape == "plain" else {"records": records,
                                                         "producer_id": draw(st.sampled_from(PRODUCERS))})
    return entries


@pytest.mark.parametrize("coordinator", [OLD_COORDINATOR, NEW_COORDINATOR])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(entries=logs(), cut=st.one_of(st.none(), st.integers(0, 40)))
def test_the_fold_agrees_with_the_plain_replay(tmp_path: Path, coordinator: str, entries: list, cut) -> None:
    load(tmp_path, entries, coordinator, ReplayPoint(at_offset=cut))     # asserts the three agree


def test_both_fold_implementations_are_reachable() -> None:
    assert key_fold.FOLD_IMPLEMENTATION in ("compiled", "python")
    if key_fold.FOLD_IMPLEMENTATION == "compiled":
        assert type(key_fold.new_table()).__name__ == "KeyTable"
