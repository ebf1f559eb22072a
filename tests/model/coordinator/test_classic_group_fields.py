"""A classic group's fields as the loaders read them from its ``GroupMetadataValue``.

The old coordinator: ``GroupMetadataManager.readGroupMessageValue`` (core, 0.11-3.x); the new:
``GroupMetadataManager.replay(GroupMetadataKey, GroupMetadataValue)`` → ``ClassicGroup.fromRecord``
(group-coordinator, 4.x). Loaded by the plain replay and by the fold (compiled and pure), which
must agree (tests/builders/groups.py).
"""

from __future__ import annotations

import pytest

from kreplica.model.coordinator.replay import NEW_COORDINATOR, OLD_COORDINATOR
from tests.builders.groups import TS, by_name, group_record, load, member

BOTH = pytest.mark.parametrize("coordinator", [OLD_COORDINATOR, NEW_COORDINATOR])


@BOTH
def test_a_static_members_instance_id_is_kept(tmp_path, coordinator) -> None:
    """readGroupMessageValue: ``groupInstanceId = Option(memberMetadata.groupInstanceId)`` (value
    v3+, KIP-345); a dynamic member has none."""
    members = [member("m1", ["t"], {"t": [0]}, instance_id="i-1"), member("m2", ["t"], {"t": [1]})]
    g = by_name(load(tmp_path, [[group_record("g", members)]], coordinator))["g"]
    assert [(m.member_id, m.group_instance_id) for m in g.members] == [("m1", "i-1"), ("m2", None)]


@BOTH
@pytest.mark.parametrize(("stamp", "expected"), [
    pytest.param(-1, None, id="minus-one-is-none"),
    pytest.param(TS + 5, TS + 5, id="a-stamp-is-kept"),
])
def test_the_current_state_timestamp(tmp_path, coordinator, stamp, expected) -> None:
    """readGroupMessageValue: ``currentStateTimestamp = if (value.currentStateTimestamp == -1)
    None else Some(value.currentStateTimestamp)`` (ClassicGroup.fromRecord alike)."""
    g = by_name(load(tmp_path, [[group_record("g", [], current_state_timestamp=stamp)]], coordinator))["g"]
    assert g.current_state_timestamp == expected


@BOTH
def test_a_groups_subscribed_topics_are_every_members(tmp_path, coordinator) -> None:
    """ClassicGroup.computeSubscribedTopics: ``members.values().forEach`` adds each member's
    subscription topics (read with the v0 layout) to one set: the union of all members'."""
    members = [member("m1", ["a", "b"], {"a": [0]}), member("m2", ["c"], {"c": [0]}), member("m3", ["b", "d"], {})]
    g = by_name(load(tmp_path, [[group_record("g", members)]], coordinator))["g"]
    assert g.subscribed_topics == ("a", "b", "c", "d")
    assert [m.subscribed_topics for m in g.members] == [("a", "b"), ("c",), ("b", "d")]
