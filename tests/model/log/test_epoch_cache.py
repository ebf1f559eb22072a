"""The leader-epoch cache against every case of Kafka's ``LeaderEpochFileCacheTest`` listed in
kafka-algorithms spec §1.7, each as its own test, plus the 0.11–2.0 paired vectors."""

from __future__ import annotations

import pytest

from kreplica.model.log.epoch_cache import EndOffset, EpochEntry, LeaderEpochCache, for_version
from kreplica.model.versions import KafkaVersion, parse_kafka_version


def cache(*assigns: tuple[int, int], newest_wins: bool = True) -> LeaderEpochCache:
    c = LeaderEpochCache(newest_wins=newest_wins)
    for e, o in assigns:
        c.assign(e, o)
    return c


def entries(c: LeaderEpochCache) -> list[tuple[int, int]]:
    return [tuple(e) for e in c.entries]


def test_previous_epoch() -> None:
    c = LeaderEpochCache()
    assert c.previous_epoch() is None
    c.assign(2, 10)
    assert c.previous_epoch() is None
    c.assign(4, 15)
    assert c.previous_epoch() == 2
    c.assign(10, 20)
    assert c.previous_epoch() == 4
    c.truncate_from_end(18)
    assert c.previous_epoch() == 2


def test_add_epoch_and_message_offset() -> None:
    c = cache((2, 10))
    assert c.latest_epoch == 2 and entries(c) == [(2, 10)]
    assert c.end_offset_for(2, 11) == EndOffset(2, 11)


def test_return_log_end_offset_if_latest_epoch_requested() -> None:
    assert cache((2, 11), (2, 12)).end_offset_for(2, 14) == (2, 14)


def test_undefined_epoch_requested() -> None:
    assert cache((2, 11), (3, 12)).end_offset_for(-1, 0) == (-1, -1)


def test_not_overwrite_log_end_offset_for_a_leader_epoch_once_assigned() -> None:
    assert entries(cache((2, 9), (2, 10))) == [(2, 9)]


def test_enforce_monotonically_increasing_start_offsets() -> None:
    assert entries(cache((2, 9), (3, 9))) == [(3, 9)]


def test_not_overwrite_offset_for_a_leader_epoch_once_assigned() -> None:
    assert cache((2, 6), (2, 10)).entries[0].start_offset == 6


def test_unsupported_if_no_epoch_recorded() -> None:
    assert LeaderEpochCache().end_offset_for(0, 0) == (-1, -1)


def test_unsupported_if_no_epoch_recorded_and_undefined_epoch_requested() -> None:
    assert LeaderEpochCache().end_offset_for(-1, 73) == (-1, -1)


def test_first_epoch_if_requested_epoch_less_than_first_epoch() -> None:
    assert cache((5, 11), (6, 12), (7, 13)).end_offset_for(4, 0) == (4, 11)


def test_truncate_if_matching_epoch_but_earlier_starting_offset() -> None:
    c = cache((5, 11), (6, 12), (7, 13), (7, 12))
    assert c.end_offset_for(5, 0) == (5, 12)
    assert c.end_offset_for(6, 0) == (5, 12)


def test_first_offset_of_subsequent_epoch() -> None:
    assert cache((1, 11), (1, 12), (2, 13), (2, 14), (3, 15), (3, 16)).end_offset_for(2, 17) == (2, 15)


def test_next_available_epoch_if_no_exact_epoch() -> None:
    c = cache((0, 10), (2, 13), (4, 17))
    assert c.end_offset_for(1, 0) == (0, 13)
    assert c.end_offset_for(2, 0) == (2, 17)
    assert c.end_offset_for(3, 0) == (2, 17)


def test_not_update_epoch_and_start_offset_if_it_did_not_change() -> None:
    assert entries(cache((2, 6), (2, 7))) == [(2, 6)]


def test_invalid_offset_if_epoch_not_tracked() -> None:
    assert cache((2, 100)).end_offset_for(3, 100) == (-1, -1)


def test_epochs_that_do_not_start_from_zero() -> None:
    c = cache((2, 6))
    assert c.end_offset_for(2, 7) == (2, 7) and entries(c) == [(2, 6)]


def test_enforce_monotonically_increasing_epochs() -> None:
    c = cache((1, 5), (2, 6), (1, 7))
    assert c.latest_epoch == 1
    assert c.end_offset_for(1, 8) == (1, 8)
    assert c.end_offset_for(2, 8) == (-1, -1)
    assert entries(c) == [(1, 7)]


def test_enforce_offsets_increase_monotonically() -> None:
    assert entries(cache((2, 6), (3, 5))) == [(3, 5)]


def test_track_epochs_as_leaders_change_many_times() -> None:
    c = cache((0, 0), (1, 0))
    assert c.latest_epoch == 1
    assert c.end_offset_for(1, 0) == (1, 0)
    assert c.end_offset_for(0, 0) == (0, 0)
    assert c.end_offset_for(1, 5) == (1, 5)
    assert c.end_offset_for(0, 5) == (0, 0)
    c.assign(2, 5)
    assert c.end_offset_for(2, 10) == (2, 10)
    assert c.end_offset_for(1, 10) == (1, 5)
    assert c.end_offset_for(0, 10) == (0, 0)


def test_track_epochs_as_follower_receives_many_messages() -> None:
    c = cache(*[(0, o) for o in range(3)], *[(1, o) for o in range(3, 6)], *[(2, o) for o in range(6, 9)])
    assert c.latest_epoch == 2
    assert c.end_offset_for(2, 9) == (2, 9)
    assert c.end_offset_for(0, 9) == (0, 3)
    assert c.end_offset_for(1, 9) == (1, 6)


def three() -> LeaderEpochCache:
    return cache((2, 6), (3, 8), (4, 11))


@pytest.mark.parametrize("op,arg,expected", [
    pytest.param("end", 8, [(2, 6)], id="drop-entries-on-epoch-boundary-when-removing-latest"),
    pytest.param("start", 8, [(3, 8), (4, 11)], id="preserve-reset-offset-on-clear-earliest"),
    pytest.param("start", 9, [(3, 9), (4, 11)], id="update-saved-offset-when-offset-between-epochs"),
    pytest.param("start", 1, [(2, 6), (3, 8), (4, 11)], id="not-clear-anything-if-offset-too-early"),
    pytest.param("start", 6, [(2, 6), (3, 8), (4, 11)], id="not-clear-anything-if-offset-to-first-offset"),
    pytest.param("start", 11, [(4, 11)], id="retain-latest-epoch-on-clear-all-earliest"),
    pytest.param("start", 15, [(4, 15)], id="retain-latest-epoch-and-update-its-offset"),
    pytest.param("end", 9, [(2, 6), (3, 8)], id="drop-entries-between-epoch-boundary-when-removing-newest"),
    pytest.param("start", -1, [(2, 6), (3, 8), (4, 11)], id="not-reset-head-if-undefined-passed"),
    pytest.param("end", -1, [(2, 6), (3, 8), (4, 11)], id="not-reset-tail-if-undefined-passed"),
])
def test_truncation(op: str, arg: int, expected: list[tuple[int, int]]) -> None:
    c = three()
    (c.truncate_from_end if op == "end" else c.truncate_from_start)(arg)
    assert entries(c) == expected


def test_update_offset_between_epoch_boundaries_on_clear_earliest2() -> None:
    c = cache((0, 0), (1, 7), (2, 10))
    c.truncate_from_start(5)
    assert entries(c) == [(0, 5), (1, 7), (2, 10)]


def test_clear_all_entries() -> None:
    c = three()
    c.clear()
    assert entries(c) == []


def test_empty_cache_operations() -> None:
    c = LeaderEpochCache()
    assert c.latest_epoch is None
    assert c.end_offset_for(7, 0) == (-1, -1)
    c.truncate_from_start(7)
    c.truncate_from_end(7)
    assert entries(c) == []


def test_find_previous_epoch_and_entry() -> None:
    c = cache((2, 10), (4, 15), (10, 20))
    assert c.previous_epoch(2) is None
    assert c.previous_epoch(4) == 2
    assert c.previous_epoch(10) == 4
    c.truncate_from_end(18)
    assert c.previous_epoch(c.latest_epoch) == 2


def test_find_next_epoch() -> None:
    c = cache((0, 0), (1, 100), (2, 200))
    assert [c.next_epoch(e) for e in (-1, 0, 1, 2, 100)] == [0, 1, 2, None, None]


def test_get_epoch_entry() -> None:
    c = cache((2, 100), (3, 500), (5, 1000))
    assert c.epoch_entry(3) == EpochEntry(3, 500) and c.epoch_entry(4) is None


def test_fetch_epoch_for_given_offset() -> None:
    c = cache((0, 10), (1, 20), (5, 30))
    assert [c.epoch_for_offset(o) for o in (25, 20, 30, 50, 5)] == [1, 1, 5, 5, None]


def test_write_checkpoint_on_truncation() -> None:
    c = three()
    c.truncate_from_end(11)
    c.truncate_from_start(8)
    assert entries(c) == [(3, 8)]


def test_negative_assign_is_rejected_in_2_1_plus() -> None:
    with pytest.raises(ValueError):
        LeaderEpochCache().assign(-1, 5)


# 0.11 - 2.0 behaviour (from the 2.0.0 test file, paired with the 2.1+ results)

@pytest.mark.parametrize("calls,old,new", [
    pytest.param([(2, 9), (3, 9)], [(2, 9), (3, 9)], [(3, 9)], id="same-start-offset"),
    pytest.param([(2, 6), (3, 5)], [(2, 6)], [(3, 5)], id="offset-backwards"),
    pytest.param([(1, 5), (2, 6), (1, 7)], [(1, 5), (2, 6)], [(1, 7)], id="older-epoch-reasserted"),
    pytest.param([(2, 6), (2, 10)], [(2, 6)], [(2, 6)], id="same-epoch-later-offset"),
])
def test_assign_rule_by_version(calls, old, new) -> None:
    assert entries(cache(*calls, newest_wins=False)) == old
    assert entries(cache(*calls)) == new
    assert for_version(KafkaVersion(2, 0)).newest_wins is False
    assert for_version(KafkaVersion(2, 1)).newest_wins is True


def test_end_offset_for_below_first_epoch_by_version() -> None:
    c = cache((5, 11), (6, 12), (7, 13))
    assert c.end_offset_for(4, 20, parse_kafka_version("2.0")) == (-1, -1)
    assert c.end_offset_for(4, 20, parse_kafka_version("2.1")) == (4, 11)
    assert c.end_offset_for(4, 20, parse_kafka_version("1.1")) == (-1, -1)


def test_old_cache_answers_in_2_0() -> None:
    c = cache((1, 5), (2, 6), (1, 7), newest_wins=False)
    v = parse_kafka_version("2.0")
    assert c.latest_epoch == 2
    assert c.end_offset_for(1, 8, v) == (1, 6)
    assert c.end_offset_for(2, 8, v) == (2, 8)


def test_kip101_empty_cache_answers_leo_for_undefined_epoch() -> None:
    # 0.11 - 1.1: an empty cache's latest epoch is -1, so a request for -1 returns the LEO (bug)
    assert LeaderEpochCache().end_offset_for(-1, 42, parse_kafka_version("1.1")) == (-1, 42)
    assert cache((0, 0)).end_offset_for(-1, 42, parse_kafka_version("1.1")) == (-1, -1)
    assert cache((0, 0), (2, 10)).end_offset_for(1, 42, parse_kafka_version("0.11")) == (-1, 10)
