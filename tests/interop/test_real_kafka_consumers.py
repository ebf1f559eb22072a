"""kreplica's consumer impact against real consumers of each client generation (before 2.3,
2.3 – 2.5, 2.6+) resuming groups after an unclean election, on every ``consumer-after-unclean``
recording of ``fixtures/real-kafka`` (``tests/builders/real_kafka_consumers.py``); the recording's
truncation and election are judged as unclean-election's are."""

from __future__ import annotations

import pytest

from tests.builders.real_kafka import recordings
from tests.builders.real_kafka_checks import election_unclean, truncation_after_unclean
from tests.builders.real_kafka_consumers import (consumers_resume_where_timeline_says,
                                                 consumers_resume_where_truncate_plan_says,
                                                 probes_cover_every_generation_and_policy)

ALL = recordings("consumer-after-unclean")

pytestmark = pytest.mark.skipif(not ALL, reason="no consumer-after-unclean recordings under fixtures/real-kafka")

CHECKS = (probes_cover_every_generation_and_policy, consumers_resume_where_truncate_plan_says,
          consumers_resume_where_timeline_says, election_unclean, truncation_after_unclean)
JUDGED = [(r, check) for r in ALL for check in CHECKS]


@pytest.mark.parametrize(("recording", "check"), JUDGED, ids=[f"{r.name}-{c.__name__}" for r, c in JUDGED])
def test_judgment(recording, check) -> None:
    check(recording)
