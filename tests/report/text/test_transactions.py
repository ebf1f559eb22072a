"""The ``transactions`` text report: every rule reads as a sentence naming what it rests on, and
durations are written one way."""

from __future__ import annotations

import pytest

from kreplica.analysis.transactions import hanging as rules
from kreplica.report.text.numbers import duration
from kreplica.report.text.transactions import _why

META = {"state": "CompleteAbort", "producer_id": 9, "producer_epoch": 4}


@pytest.mark.parametrize("reason, meta, says", [
    pytest.param(rules.PRODUCER_ID_REPLACED, META, "app moved on from producer 5 to producer 9 (CompleteAbort)",
                 id="producer id replaced"),
    pytest.param(rules.NO_TRANSACTIONAL_ID, None, "no transactional id uses producer 5", id="no transactional id"),
    pytest.param(rules.PRODUCER_FENCED, META, "app is at epoch 4 (CompleteAbort)", id="fenced"),
    pytest.param(rules.TRANSACTION_COMPLETE, META, "transaction of epoch 3 is over (CompleteAbort at epoch 4)",
                 id="complete"),
    pytest.param(rules.PARTITION_NOT_IN_TRANSACTION, META, "app's CompleteAbort transaction does not name",
                 id="partition not named"),
    pytest.param(rules.COORDINATOR_PARTITION_MISSING, None, "the coordinator evidence is missing",
                 id="coordinator partition missing"),
    pytest.param(rules.COORDINATOR_BEHIND, META, "last record is of epoch 4", id="coordinator behind"),
    pytest.param(rules.TIMED_OUT, META, "past transaction.max.timeout.ms (15m), when the coordinator aborts a "
                                        "transaction; app is CompleteAbort at epoch 4", id="timed out, id known"),
    pytest.param(rules.TIMED_OUT, None, "no transactional id in the evidence uses producer 5",
                 id="timed out, id unknown"),
    pytest.param(None, {**META, "state": "Ongoing"}, "app's Ongoing transaction names it", id="ongoing"),
])
def test_every_reason_reads_as_a_sentence(reason, meta, says) -> None:
    o = {"producer_id": 5, "producer_epoch": 3, "transactional_id": "app" if meta else None, "reason": reason}
    text = _why(o, meta, 900_000)
    assert says in text and "{" not in text


@pytest.mark.parametrize("ms, text", [
    pytest.param(0, "0ms", id="zero"),
    pytest.param(999, "999ms", id="under a second"),
    pytest.param(1000, "1s", id="a second"),
    pytest.param(1_769_999, "29m 29s", id="minutes and seconds, rounded down"),
    pytest.param(900_000, "15m", id="whole minutes"),
    pytest.param(93_784_000, "1d 2h", id="the two largest units"),
    pytest.param(86_405_000, "1d", id="a zero second unit is left out"),
    pytest.param(-1500, "-1s", id="negative"),
])
def test_duration(ms, text) -> None:
    assert duration(ms) == text
