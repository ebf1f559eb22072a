"""The ``consumer_impact`` object in every machine format, and its text: the groups at risk first,
with what each client generation does, then the groups committed after the event and the
unaffected ones by name, at 80 columns."""

from __future__ import annotations

import io
import json

import msgpack
import pytest

from kreplica.analysis.consumers.impact import LostRange, NewLeader, impacts
from kreplica.model.log.epoch_cache import EpochEntry
from kreplica.model.coordinator.groups import CommittedOffset
from kreplica.model.versions import KafkaVersion
from kreplica.report.schemas.consumer_impact import consumer_impact_object
from kreplica.report.text.consumer_impact import render_consumer_impacts
from kreplica.report.output.emitter import Emitter
from kreplica.report.output.formats import OutputFormat
from tests.builders.text_width import UNWRAPPED, assert_readable, render

# fixtures/scenarios/unclean-shorter-leader, with the new leader's epoch-2 records 100-109 written since
LEADER = NewLeader("broker-1", 0, 100, (EpochEntry(0, 0), EpochEntry(2, 100)), 2, KafkaVersion(4, 0), 110)
LOST = LostRange(100, 120, "broker-2")
EVENT = "the unclean election of broker-1 at epoch 2"


def committed(group: str, offset: int, epoch: int | None, **kw) -> CommittedOffset:
    return CommittedOffset(group, "orders", 0, offset, epoch, "", 1_700_000_000_000, None, 3, 12, "broker-1",
                           3 if epoch is not None else 2, **kw)


OFFSETS = [committed("ledger", 50, 0), committed("billing", 115, 1), committed("audit", 118, None),
           committed("search", 100, 0), committed("fresh", 105, 2)]


def objects() -> list[dict]:
    return [consumer_impact_object(i) for i in impacts(OFFSETS, "orders", 0, LOST, LEADER, event=EVENT)]


def test_object() -> None:
    billing = next(o for o in objects() if o["group"] == "billing")
    assert {k: v for k, v in billing.items() if k != "behaviours"} == {
        "type": "consumer_impact", "event": EVENT, "group": "billing", "topic": "orders", "partition": 0,
        "committed_offset": 115, "committed_leader_epoch": 1, "commit_timestamp": 1_700_000_000_000,
        "expired": False, "coordinator_partition": 12, "source": "broker-1", "new_leader": "broker-1",
        "new_leader_epoch": 2, "log_start_offset": 0, "new_log_end": 100, "later_log_end": 110,
        "lost": {"replica": "broker-2", "first_offset": 100, "last_offset": 119}, "at_risk": True,
        "committed_after_event": False, "read_from": "lost_replica", "consumed_and_lost": 15, "reused_offsets": 15, "reused_seen": 10,
    }
    assert billing["behaviours"][-4] == {
        "clients_from": "2.3.0", "clients_before": "2.6.0", "auto_offset_reset": ["earliest", "latest"], "when": None,
        "action": "seeks_to_divergence", "cause": "log_truncation", "exception": None, "resumes_at": 100,
        "records_re_read": 0, "records_skipped": 0, "records_skipped_up_to": 0,
        "validation": {"leader_epoch": 0, "end_offset": 100},
    }
    assert [b["when"] for b in billing["behaviours"]][:4] == ["fetches_first"] * 3 + ["writes_first"]


@pytest.mark.parametrize("fmt", [pytest.param(f, id=f.value) for f in
                                 (OutputFormat.json, OutputFormat.ndjson, OutputFormat.msgpack)])
def test_every_machine_format(fmt: OutputFormat) -> None:
    objs = objects()
    out = io.BytesIO()
    emitter = Emitter(fmt, out)
    for o in objs:
        emitter.emit(o)
    emitter.close()
    data = out.getvalue()
    if fmt is OutputFormat.msgpack:
        back = list(msgpack.Unpacker(io.BytesIO(data)))
    elif fmt is OutputFormat.json:
        back = json.loads(data)
    else:
        back = [json.loads(line) for line in data.splitlines()]
    assert back == objs


TEXT = """\
consumer groups of orders-0 after the unclean election of broker-1 at epoch 2:
  offsets 100-119 of broker-2 are lost; the new leader broker-1 ends at 100
  AT RISK audit: committed 118 (no leader epoch); 18 consumed records the log no
    longer has
    every client, fetching before producers reach 118: OFFSET_OUT_OF_RANGE;
      earliest: resets to 0 (log start), re-reading 100 records; latest: resets
      to 100 (log end), skipping whatever is written before the reset; none:
      fails with OffsetOutOfRangeException
    every client, if producers write past 118 first: continues at 118, skipping
      up to 18 new records (the evidence shows 10)
  AT RISK billing: committed 115 (leader epoch 1); 15 consumed records the log
    no longer has
    clients before 2.3, fetching before producers reach 115:
      OFFSET_OUT_OF_RANGE; earliest: resets to 0 (log start), re-reading
      100 records; latest: resets to 100 (log end), skipping whatever is written
      before the reset; none: fails with OffsetOutOfRangeException
    clients before 2.3, if producers write past 115 first: continues at 115,
      skipping up to 15 new records (the evidence shows 10)
    clients 2.3-2.5: detects the truncation (epoch 1 ends at 100 on the new
      leader); earliest/latest: resumes at 100; none: stalls: its poll raises
      nothing and returns no records of the partition
    clients 2.6+: detects the truncation (epoch 1 ends at 100 on the new
      leader); earliest/latest: resumes at 100; none: fails with
      LogTruncationException
  committed in the new leader's epoch or later (after the event; what they read
    before is not in this evidence): fresh
  unaffected (nothing they read is lost, no client moves them): ledger, search
"""


def test_text_leads_with_the_groups_at_risk() -> None:
    assert render(lambda c: render_consumer_impacts(objects(), c), 80) == TEXT


@pytest.mark.parametrize("width", [60, 80, 120])
def test_text_fits_any_width(width: int) -> None:
    wide = render(lambda c: render_consumer_impacts(objects(), c), UNWRAPPED)
    assert_readable(render(lambda c: render_consumer_impacts(objects(), c), width), wide, width)


def test_a_diverged_leader_and_a_split_generation_in_words() -> None:
    # the new leader wrote 100-109 in epoch 2 before the event's end (no later copy); a commit at
    # epoch 7 has no end offset there (the leader's epoch is unknown, so nothing is "after")
    diverged = NewLeader("broker-1", 0, 110, (EpochEntry(0, 0), EpochEntry(2, 100)), None, KafkaVersion(4, 0))
    objs = [consumer_impact_object(i) for i in impacts([committed("x", 105, None), committed("y", 115, 7)],
                                                        "orders", 0, LOST, diverged, event="e")]
    text = render(lambda c: render_consumer_impacts(objs, c), UNWRAPPED)
    assert "continues at 105, skipping 5 new records" in text
    assert "x: committed 105 (no leader epoch); up to 5 consumed records the log no longer has, if it read " \
           "broker-2's (no leader epoch or commit time tells)" in text
    assert "clients 2.3-2.5: the new leader has no end offset for epoch 7" in text
    assert "none: stalls: its poll raises nothing and returns no records of the partition" in text
    assert "clients 2.6+: the new leader has no end offset for epoch 7" in text
    assert "latest: resets to 110 (log end), skipping 10 new records and whatever is written before the reset" in text


def test_generations_that_read_alike_are_one_line() -> None:
    # KIP-320 validation of epoch 3 on a leader that never had it answers (1, 120), past 108: the
    # 2.3+ client continues like an old one, so one line says it for every client
    leader = NewLeader("broker-2", 0, 120, (EpochEntry(0, 0), EpochEntry(1, 100), EpochEntry(4, 120)), 4,
                       KafkaVersion(4, 0))
    lost = LostRange(100, 110, "broker-1", (EpochEntry(0, 0), EpochEntry(3, 100)))
    objs = [consumer_impact_object(i) for i in impacts([committed("fresh", 108, 3)], "orders", 0, lost, leader,
                                                        event="the unclean election of broker 2 at epoch 4")]
    assert len(objs[0]["behaviours"]) == 2
    assert render(lambda c: render_consumer_impacts(objs, c), 80) == """\
consumer groups of orders-0 after the unclean election of broker 2 at epoch 4:
  offsets 100-109 of broker-1 are lost; the new leader broker-2 ends at 120
  AT RISK fresh: committed 108 (leader epoch 3); 8 consumed records the log no
    longer has
    every client: continues at 108, skipping 8 new records
"""
