"""The ``groups`` report at 80 columns, compared whole (``fixtures/groups``: both brokers' replicas),
and at 1,000 columns, where nothing wraps; partitions holding no group share one line."""

from __future__ import annotations

from dataclasses import replace

from kreplica.analysis.groups.state import partition_groups
from kreplica.model.coordinator.expiry import default_retention_minutes
from kreplica.model.coordinator.fold import load_group_partition
from kreplica.model.coordinator.replay import NEW_COORDINATOR, ReplayPoint
from kreplica.model.coordinator.sources import LogDirFiles, find_group_sources
from kreplica.model.versions import DEFAULT_VERSION
from kreplica.report.text.groups import render_text
from tests.conftest import FIXTURES
from tests.builders.text_width import UNWRAPPED, assert_readable, render

EXPECTED = """\
PROBLEMS 5 groups in 1 partition of __consumer_offsets: 1 error

__consumer_offsets-0 on broker-1: 5 groups, 6 committed offsets; replayed to
    offset 12, new coordinator; log end 13
  expiry evaluated at 2023-11-14 22:13:32 UTC, offsets.retention.minutes 10080
  replicas: broker-1 (log end 13, answers), broker-2 (log end 11);
    2 disagreements
  ERROR group_offset_beyond_log_end group 'billing' committed orders-1 at
    15 (record offset 12), beyond the log end of every replica read (broker-1
    12, broker-2 12): the records it had read up to there are gone
  replicas differ on offset billing orders-0: broker-1 25 epoch 3; broker-2
    10 epoch 2
  replicas differ on offset billing orders-1: broker-1 15 epoch 3; broker-2
    5 epoch 2

audit  standalone, Empty
partition  offset  epoch  committed            note
orders-0       30      2  2023-11-14 22:13:24

billing  classic (consumer), Stable, generation 4, range, 2 members
partition  offset  epoch  committed            note
orders-0       25      3  2023-11-14 22:13:32
orders-1       15      3  2023-11-14 22:13:32  beyond log end
  members: billing-1-5d8a (billing-1, /10.0.0.1: orders-0); billing-2-77c1
    (billing-2, /10.0.0.2: orders-1)

old-app  no group: its record was deleted, its offsets stay (new coordinator)
partition  offset  epoch  committed            note
orders-1        2      1  2023-11-14 22:13:29

payments-tx  standalone, Empty
partition  offset  epoch  committed            note
orders-0       20      2  2023-11-14 22:13:26  txn 7000
orders-1        6      2  2023-11-14 22:13:31  pending txn 7001

reports  standalone, Empty
partition  offset  epoch  committed            note
orders-0        3      -  2023-11-14 22:13:25  expired
"""


def _results(*names: str, empty: int = 0) -> list:
    found = find_group_sources([str(FIXTURES / "groups" / n) for n in names])
    files = LogDirFiles()
    replicas = [load_group_partition(p, d, NEW_COORDINATOR) for p, d in found.replicas[0]]
    results = [partition_groups(replicas, DEFAULT_VERSION, retention_minutes=default_retention_minutes(DEFAULT_VERSION),
                                data=lambda t, p: files.data_replicas(found.data.get((t, p), ())))]
    quiet = [partition_groups([replace(replicas[0], coordinator_partition=n, groups=())], DEFAULT_VERSION,
                              retention_minutes=1) for n in (1, 2, 4)[:empty]]
    return results + quiet


def test_the_report_at_80_columns() -> None:
    narrow = render(lambda c: render_text(_results("broker-1", "broker-2"), ReplayPoint(), c), 80)
    assert "\n".join(line.rstrip() for line in narrow.splitlines()) == EXPECTED.rstrip("\n")
    wide = render(lambda c: render_text(_results("broker-1", "broker-2"), ReplayPoint(), c), UNWRAPPED)
    assert_readable(narrow, wide, 80)


def test_partitions_without_groups_share_a_line() -> None:
    text = render(lambda c: render_text(_results("broker-1", empty=3), ReplayPoint(), c), 80)
    assert text.rstrip().endswith("no group in 3 partitions of __consumer_offsets: 1-2, 4")
