"""``kreplica inspect-log --records --decode internal`` against ``kafka-dump-log``'s decoders on
the recorded corpus (``fixtures/real-kafka``): every internal partition of every point that
``dump_logs`` dumped (``__consumer_offsets-*`` with ``--offsets-decoder``,
``__transaction_state-*`` with ``--transaction-log-decoder``, each node's
``__cluster_metadata-0`` with ``--cluster-metadata-decoder``), record by record: the same
offsets and timestamps, then the same decoded key and value, field by field, Kafka's camelCase
names mapped to kreplica's snake_case (``tests/builders/real_kafka_dumps.py`` says what each
decoder prints). Tombstones (``<DELETE>``: kreplica's null value), transaction markers
(``endTxnMarker``: ``control_type``, ``coordinator_epoch``) and Raft control records included.
Kafka wins: a field one side prints and the other does not is a failure, except these, which
are what each tool prints, not what it read:

* kreplica only: the ``version`` of a ``consumer`` protocol member's subscription and assignment
  (Kafka prints them expanded without it); on 3.x, a transaction log value's version and
  everything of it but its producer id and epoch, state, partitions, last update and timeout
  (3.x's decoder prints only those, as text: previous and next producer id, start timestamp,
  client transaction version);
  the fields of a 3.x leader change (3.x prints ``controlType: LEADER_CHANGE(2)``).
* Kafka only: nothing. A record's type is compared by id for coordinator records (Kafka prints
  the id), by name for metadata records (Kafka prints the name).
* Values differing in form, compared after mapping: a transaction's state (Kafka's name,
  kreplica's int through ``TRANSACTION_STATES``), 3.x's partitions (``topic-partition`` text, a
  set).

Known disagreements, listed and checked rather than skipped: the metadata record types kreplica
does not know yet, whose records kreplica lists raw with a ``kraft_unknown_record`` finding while
Kafka decodes them (``KNOWN_UNDECODED``; empty since kreplica learnt ``ClearElrRecord`` and
``UnregisterControllerRecord``, the two 4.x record types this corpus showed it lacked). When
kreplica learns one, its record agrees and this test says to take it off the list.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.builders.real_kafka import recordings
from tests.builders.real_kafka_dumps import inspect_records, read_dump, record_differences
from tests.realkafka.recording import DECODERS, dumped_partitions

ALL = recordings()

pytestmark = pytest.mark.skipif(not ALL, reason="no recordings under fixtures/real-kafka")

#: metadata record types Kafka's decoder decodes and kreplica does not know: kreplica lists them
#: raw with a kraft_unknown_record finding
KNOWN_UNDECODED: set[str] = set()


def _cases() -> list[tuple]:
    cases = []
    for recording in ALL:
        for point in recording.description["points"]:
            evidence = recording.evidence(point)
            for partition, segments, decoder in dumped_partitions(evidence, recording.description["topics"]):
                if decoder is not None:
                    dump = recording.root / point / "dump-log" / f"{partition.relative_to(evidence)}.txt"
                    cases.append((recording, point, partition, segments, decoder, dump))
    return cases


CASES = _cases()


def _id(case: tuple) -> str:
    recording, point, partition, _segments, _decoder, _dump = case
    return f"{recording.name}-{point}-{partition.parent.parent.name}-{partition.name}"


def test_every_internal_partition_with_records_is_dumped_with_its_decoder() -> None:
    assert CASES, "the corpus has internal partitions with records"
    assert {decoder for *_rest, decoder, _dump in CASES} == set(DECODERS.values())
    missing = [str(dump) for *_rest, dump in CASES if not dump.is_file()]
    assert missing == [], "remake them with python -m tests.realkafka.record --redump"


@pytest.mark.parametrize(("recording", "point", "partition", "segments", "decoder", "dump"), CASES,
                         ids=[_id(c) for c in CASES])
def test_decoded_records_agree_with_kafka_dump_log(recording, point: str, partition: Path, segments: list[Path],
                                                   decoder: str, dump: Path) -> None:
    theirs = read_dump(dump, decoder)
    ours, findings = inspect_records(segments)
    assert not [n for n in theirs.notes if "Exception" in n or n.startswith("Error")], theirs.notes
    assert [r.offset for r in ours] == [r.offset for r in theirs.records], "the same records, in order"

    major = int(recording.kafka_version.split(".")[0])
    disagreements = {}
    known = Counter()
    for kafka, mine in zip(theirs.records, ours):
        record_type = (kafka.decoded or {}).get("record_type")
        if record_type in KNOWN_UNDECODED:
            assert mine.decoded is None, (f"offset {kafka.offset}: kreplica now decodes {record_type}: take it "
                                          "off KNOWN_UNDECODED")
            assert any(f["kind"] == "kraft_unknown_record" and _offset(f) == kafka.offset
                       for f in findings), f"offset {kafka.offset}: the raw {record_type} has its finding"
            known[record_type] += 1
            continue
        found = record_differences(kafka, mine, decoder, major)
        if found:
            disagreements[kafka.offset] = found + [f"Kafka: {kafka.text}", f"kreplica: {mine.raw}"]
    assert disagreements == {}
    unexpected = [f for f in findings if f["kind"].endswith(("_invalid_record", "_unknown_record"))
                  and _offset(f) not in {r.offset for r in theirs.records
                                         if (r.decoded or {}).get("record_type") in KNOWN_UNDECODED}]
    assert unexpected == []


def _offset(finding: dict) -> int | None:
    """The record offset a finding names (its details are members of the finding's object)."""
    return finding.get("offset", finding.get("details", {}).get("offset"))
