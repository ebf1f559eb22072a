"""Where two replicas differ, batch by batch (``diverge``), rule by rule with its counter-case.

Two replicas hold the same batch when base offset, last offset, partition leader epoch and CRC
agree. The epoch must be compared on its own: ``DefaultRecordBatch`` computes the CRC-32C from
``attributes`` onward, so ``partitionLeaderEpoch`` (byte 12) is outside it and the same records
written in two epochs carry the same CRC (kafka-algorithms spec §1.6 point 5). Offsets below one
replica's first batch (retention, ``UnifiedLog.maybeIncrementLogStartOffset``) are "only" ranges,
never divergence; a divergent middle before an identical tail is reported as such (KAFKA-6880).
Replicas are written in the test with kreplica's writers (``tests/builders/replicas.py``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kreplica.analysis.replication.divergence import BATCHES_DIFFER, DIVERGENT, SAME_RECORDS, compare, compare_all
from kreplica.formats import codecs
from kreplica.formats.mapped import EvidenceError
from tests.builders.replicas import replica_log

A, B = "broker-1", "broker-2"
ONLY_A, ONLY_B = f"only_{A}", f"only_{B}"


def diverge(tmp_path: Path, a: list[tuple], b: list[tuple], *, hw_a: int | None = None, hw_b: int | None = None,
            **b_options):
    la = replica_log(tmp_path, 1, a, hw=hw_a, checkpoint=None)
    lb = replica_log(tmp_path, 2, b, hw=hw_b, checkpoint=None, **b_options)
    return compare(la, lb, "orders-0")


def ranges(d) -> list[tuple[int, int, str]]:
    return [(r.first, r.last, r.kind) for r in d.ranges]


BASE = [(0, 3, 0, "a"), (3, 2, 1, "a"), (5, 5, 2, "a")]   # LEO 10


@pytest.mark.parametrize("a, b, expected", [
    pytest.param(BASE, BASE, ([], None, 10), id="identical"),
    # the same offsets and epoch, other records: the CRC differs
    pytest.param(BASE, [(0, 3, 0, "a"), (3, 2, 1, "z"), (5, 5, 2, "a")], ([(3, 4, DIVERGENT)], 3, 3),
                 id="one-batch-other-data"),
    # the same records in another epoch: the CRC is equal, the epoch is not
    pytest.param(BASE, [(0, 3, 0, "a"), (3, 2, 7, "a"), (5, 5, 2, "a")], ([(3, 4, DIVERGENT)], 3, 3),
                 id="same-crc-other-epoch"),
    pytest.param(BASE, [(0, 3, 1, "a"), (3, 2, 1, "a"), (5, 5, 2, "a")], ([(0, 2, DIVERGENT)], 0, 0),
                 id="first-batch-other-epoch"),
    # the last batch differs: divergence, not an "only" range
    pytest.param(BASE, [(0, 3, 0, "a"), (3, 2, 1, "a"), (5, 5, 3, "b")], ([(5, 9, DIVERGENT)], 5, 5),
                 id="last-batch-differs"),
    # one log a prefix of the other: the rest is held by one side only, nothing diverges
    pytest.param(BASE, BASE[:2], ([(5, 9, ONLY_A)], None, 5), id="b-is-a-prefix"),
    pytest.param(BASE[:1], BASE, ([(3, 9, ONLY_B)], None, 3), id="a-is-a-prefix"),
    # a prefix that then diverges: the divergent range, then the longer side's tail
    pytest.param(BASE, [(0, 3, 0, "a"), (3, 2, 1, "z")], ([(3, 4, DIVERGENT), (5, 9, ONLY_A)], 3, 3),
                 id="diverges-then-shorter"),
    # two divergent batches with an identical one between: two ranges, the tail identical
    pytest.param(BASE + [(10, 2, 2, "a")], [(0, 3, 0, "z"), (3, 2, 1, "a"), (5, 5, 2, "z"), (10, 2, 2, "a")],
                 ([(0, 2, DIVERGENT), (5, 9, DIVERGENT)], 0, 0), id="two-divergent-ranges"),
    # adjacent divergent batches are one range
    pytest.param(BASE, [(0, 3, 0, "a"), (3, 2, 1, "z"), (5, 5, 2, "z")], ([(3, 9, DIVERGENT)], 3, 3),
                 id="adjacent-divergent-batches-merge"),
    # other batch boundaries over the same offsets: one range over every overlapping batch
    pytest.param(BASE, [(0, 3, 0, "a"), (3, 1, 1, "a"), (4, 3, 1, "a"), (7, 3, 2, "a")],
                 ([(3, 9, DIVERGENT)], 3, 3), id="other-batch-boundaries"),
    # gaps (compaction or an offset jump): offsets one side lacks are "only" ranges
    pytest.param(BASE, [(0, 3, 0, "a"), (5, 5, 2, "a")], ([(3, 4, ONLY_A)], None, 3), id="gap-in-b"),
    pytest.param([(0, 3, 0, "a"), (5, 5, 2, "a")], BASE, ([(3, 4, ONLY_B)], None, 3), id="gap-in-a"),
    pytest.param([(0, 3, 0, "a"), (5, 5, 2, "a")], [(0, 3, 0, "a"), (5, 5, 2, "a")], ([], None, 10),
                 id="same-gap-in-both"),
    pytest.param([(0, 3, 0, "a"), (6, 4, 2, "a")], [(0, 3, 0, "a"), (3, 2, 1, "a"), (10, 1, 2, "a")],
                 ([(3, 4, ONLY_B), (6, 9, ONLY_A), (10, 10, ONLY_B)], None, 3), id="interleaved-gaps"),
])
def test_compare(tmp_path: Path, a, b, expected) -> None:
    d = diverge(tmp_path, a, b)
    assert (ranges(d), d.first_divergent_offset, d.common_prefix_end) == expected
    assert d.replicas == (A, B) and d.partition == "orders-0"


@pytest.mark.parametrize("b, b_options, expected", [
    # b's log starts at 5 (retention): offsets 0-4 only a holds, and that is not a divergence
    pytest.param([(5, 5, 2, "a")], {"log_start": 5}, ([(0, 4, ONLY_A)], None), id="b-starts-later-identical"),
    pytest.param([(5, 5, 2, "z")], {"log_start": 5}, ([(0, 4, ONLY_A), (5, 9, DIVERGENT)], 5),
                 id="b-starts-later-then-diverges"),
    # a batch of a straddling b's first offset: the divergence is counted from where both hold data
    pytest.param([(6, 4, 2, "a")], {"log_start": 6}, ([(0, 4, ONLY_A), (5, 9, DIVERGENT)], 6),
                 id="divergence-starts-at-the-later-log-start"),
    # b's first batch starts at a's batch 0-2 last offset: they overlap at offset 2
    pytest.param([(2, 3, 1, "a"), (5, 5, 2, "a")], {"log_start": 2}, ([(0, 4, DIVERGENT)], 2),
                 id="batches-sharing-one-offset-overlap"),
])
def test_offsets_below_a_replicas_first_batch_are_not_divergence(tmp_path: Path, b, b_options, expected) -> None:
    d = diverge(tmp_path, BASE, b, **b_options)
    assert (ranges(d), d.first_divergent_offset) == expected


@pytest.mark.parametrize("b, b_options, expected", [
    pytest.param([(5, 5, 2, "a")], {"log_start": 5}, 10, id="identical-after-the-later-start"),
    pytest.param([(5, 5, 2, "z")], {"log_start": 5}, 5, id="diverges-at-the-later-start"),
    # a's batch 5-9 straddles b's start 6: the identical prefix ends at the first divergent offset 6
    pytest.param([(6, 4, 2, "a")], {"log_start": 6}, 6, id="diverges-inside-a-straddling-batch"),
])
def test_common_prefix_after_a_later_log_start(tmp_path: Path, b, b_options, expected) -> None:
    assert diverge(tmp_path, BASE, b, **b_options).common_prefix_end == expected


@pytest.mark.parametrize("hw_a, hw_b, expected", [
    pytest.param(3, 4, {A: False, B: True}, id="hw-at-the-first-offset-is-not-below"),
    pytest.param(4, 3, {A: True, B: False}, id="other-way-round"),
    pytest.param(10, 10, {A: True, B: True}, id="both-committed"),
    pytest.param(None, 0, {A: False, B: False}, id="unknown-or-zero-hw"),
])
def test_below_high_watermark_means_the_range_starts_below_it(tmp_path: Path, hw_a, hw_b, expected) -> None:
    d = diverge(tmp_path, BASE, [(0, 3, 0, "a"), (3, 2, 1, "z"), (5, 5, 2, "a")], hw_a=hw_a, hw_b=hw_b)
    (r,) = d.ranges
    assert (r.first, r.below_high_watermark) == (3, expected)
    assert d.high_watermarks == {A: hw_a, B: hw_b}


def test_compare_all_takes_every_pair_in_the_order_given(tmp_path: Path) -> None:
    logs = [replica_log(tmp_path, n, batches, hw=None, checkpoint=None) for n, batches in
            ((3, BASE), (1, BASE[:2]), (2, [(0, 3, 0, "z")]))]
    got = [(d.replicas, ranges(d)) for d in compare_all(logs)]
    assert got == [(("broker-3", A), [(5, 9, "only_broker-3")]),
                   (("broker-3", B), [(0, 2, DIVERGENT), (3, 9, "only_broker-3")]),
                   ((A, B), [(0, 2, DIVERGENT), (3, 4, ONLY_A)])]


def test_compare_all_refuses_replicas_of_different_partitions(tmp_path: Path) -> None:
    a = replica_log(tmp_path, 1, BASE, hw=None, checkpoint=None)
    b = replica_log(tmp_path, 2, BASE, hw=None, checkpoint=None, partition=1)
    with pytest.raises(EvidenceError):
        compare_all([a, b])


# -- batches that differ, records that do not (issue 20) ----------------------------------------------
# Records whose timestamps follow from their own offsets (the generator's timestamps_by_offset), so the
# same records can be cut into other batches: what a replica holds when its batches were built otherwise.
BY_OFFSET = [(0, 5, 0, "a"), (5, 5, 1, "a")]                         # LEO 10, epochs 0@0, 1@5
RECHUNKED = [(0, 2, 0, "a"), (2, 3, 0, "a"), (5, 1, 1, "a"), (6, 4, 1, "a")]


def diverge_by_offset(tmp_path: Path, a: list[tuple], b: list[tuple], *, b_compression: int = 0, **b_options):
    la = replica_log(tmp_path, 1, a, hw=None, checkpoint=None, timestamps_by_offset=True)
    lb = replica_log(tmp_path, 2, b, hw=None, checkpoint=None, timestamps_by_offset=True, compression=b_compression,
                     **b_options)
    return la, lb


@pytest.mark.parametrize("b, compression, expected", [
    # other boundaries, every record the same: not divergence of data
    pytest.param(RECHUNKED, 0, ([(0, 9, SAME_RECORDS)], None, 10), id="other-boundaries-same-records"),
    # the same boundaries, compressed otherwise: the CRC differs, the records do not
    pytest.param(BY_OFFSET, codecs.GZIP, ([(0, 9, SAME_RECORDS)], None, 10), id="other-compression-same-records"),
    pytest.param(RECHUNKED, codecs.ZSTD, ([(0, 9, SAME_RECORDS)], None, 10), id="both"),
    # one value differs inside the re-cut range: divergent, from the batch group's start
    pytest.param([(0, 2, 0, "a"), (2, 3, 0, "a"), (5, 1, 1, "a"), (6, 2, 1, "a"), (8, 2, 1, "z")], 0,
                 ([(0, 4, SAME_RECORDS), (5, 9, DIVERGENT)], 5, 5), id="a-record-differs"),
    # the same records written in another epoch from 6: what Kafka keeps of the batch differs
    pytest.param([(0, 2, 0, "a"), (2, 3, 0, "a"), (5, 1, 1, "a"), (6, 4, 2, "a")], 0,
                 ([(0, 4, SAME_RECORDS), (5, 9, DIVERGENT)], 5, 5), id="other-epoch-is-divergent"),
    # the same records from a transactional producer: divergent
    pytest.param([(0, 2, 0, "a"), (2, 3, 0, "a"), (5, 5, 1, "txn-a")], 0,
                 ([(0, 4, SAME_RECORDS), (5, 9, DIVERGENT)], 5, 5), id="other-producer-is-divergent"),
    # b's last batch stops a record short: the same records to 8, then 9 is a's only (b is a prefix)
    pytest.param([(0, 2, 0, "a"), (2, 3, 0, "a"), (5, 4, 1, "a")], 0,
                 ([(0, 8, SAME_RECORDS), (9, 9, ONLY_A)], None, 9), id="shorter-is-a-prefix"),
    # b's last batch goes a record further: 10 is b's only
    pytest.param([(0, 2, 0, "a"), (2, 3, 0, "a"), (5, 6, 1, "a")], 0,
                 ([(0, 9, SAME_RECORDS), (10, 10, ONLY_B)], None, 10), id="longer-then-only"),
    # a prefix that then differs is divergent
    pytest.param([(0, 2, 0, "a"), (2, 3, 0, "a"), (5, 3, 1, "a"), (8, 3, 1, "z")], 0,
                 ([(0, 4, SAME_RECORDS), (5, 10, DIVERGENT)], 5, 5), id="longer-and-different"),
])
def test_same_records_in_other_batches(tmp_path: Path, b, compression, expected) -> None:
    d = compare(*diverge_by_offset(tmp_path, BY_OFFSET, b, b_compression=compression), "orders-0")
    assert (ranges(d), d.first_divergent_offset, d.common_prefix_end) == expected
    assert d.differs == any(kind != SAME_RECORDS for _, _, kind in expected[0])
    assert d.records_unread is None


def test_same_records_from_a_later_log_start(tmp_path: Path) -> None:
    # b starts at 6 inside a's batch 5-9 and holds its records 6-9 in one batch: 5 is a's only
    d = compare(*diverge_by_offset(tmp_path, BY_OFFSET, [(6, 4, 1, "a")], log_start=6), "orders-0")
    assert (ranges(d), d.first_divergent_offset, d.common_prefix_end) == ([(0, 4, ONLY_A), (5, 9, SAME_RECORDS)],
                                                                         None, 10)


@pytest.fixture()
def reads(monkeypatch) -> list[tuple[str, list[tuple[int, int]]]]:
    """The batches whose records divergence reads, per call: (replica, [(base, last), ...])."""
    from kreplica.analysis.replication import divergence

    seen: list = []
    original = divergence.iter_batch_records

    def recording(log, batches):
        batches = list(batches)
        seen.append((log.label, [(b.base_offset, b.last_offset) for b in batches]))
        return original(log, batches)

    monkeypatch.setattr(divergence, "iter_batch_records", recording)
    return seen


def test_records_are_read_only_where_the_batches_differ(tmp_path: Path, reads) -> None:
    a = BY_OFFSET + [(10, 5, 1, "a")]
    b = RECHUNKED + [(10, 5, 1, "a")]
    d = compare(*diverge_by_offset(tmp_path, a, b), "orders-0")
    assert ranges(d) == [(0, 9, SAME_RECORDS)]
    assert reads == [(A, [(0, 4)]), (B, [(0, 1), (2, 4)]), (A, [(5, 9)]), (B, [(5, 5), (6, 9)])]


@pytest.mark.parametrize("b", [
    pytest.param([(0, 5, 0, "a"), (5, 5, 2, "a")], id="same-boundaries-other-epoch"),
    pytest.param([(0, 5, 0, "a"), (5, 1, 1, "a"), (6, 4, 2, "a")], id="other-boundaries-other-epoch"),
    pytest.param([(0, 5, 0, "a"), (5, 5, 1, "txn-a")], id="other-producer"),
])
def test_headers_alone_settle_a_difference(tmp_path: Path, reads, b) -> None:
    d = compare(*diverge_by_offset(tmp_path, BY_OFFSET, b), "orders-0")
    assert d.first_divergent_offset == 5 and reads == []


def test_records_that_cannot_be_read_are_not_guessed(tmp_path: Path) -> None:
    la, lb = diverge_by_offset(tmp_path, BY_OFFSET, RECHUNKED)
    segment = lb.segments[0].path
    Path(segment).unlink()
    d = compare(la, lb, "orders-0")
    assert ranges(d) == [(0, 9, BATCHES_DIFFER)] and d.first_divergent_offset is None and d.differs
    assert d.common_prefix_end == 0 and segment in d.records_unread


def test_a_segment_that_changed_since_it_was_read_is_not_read(tmp_path: Path) -> None:
    la, lb = diverge_by_offset(tmp_path, BY_OFFSET, RECHUNKED)
    with open(lb.segments[0].path, "ab") as f:
        f.write(b"\0")
    d = compare(la, lb, "orders-0")
    assert ranges(d) == [(0, 9, BATCHES_DIFFER)] and "not the" in d.records_unread


# -- mutation survivors (issue 27 §7): the walk's edges ---------------------------------------------
def by_offset(tmp_path: Path, broker: int, batches: list[tuple], **options):
    return replica_log(tmp_path, broker, batches, hw=None, checkpoint=None, timestamps_by_offset=True, **options)


def compacted(tmp_path: Path, broker: int, first: int, last: int, kept: range, *, epoch: int = 0, tag: str = "a"):
    """A replica holding one v2 batch ``first``-``last`` of which the cleaner kept the offsets ``kept``
    (records as the generator's ``timestamps_by_offset`` writes them; none kept: the cleaner's empty
    batch), read back as the commands read it."""
    from kreplica.formats.log.batch import NewRecord
    from kreplica.formats.log.default_records import build_batch
    from kreplica.model.log.partition_log import read_partition_log
    from kreplica.model.logdir.log_dir import scan_log_dir
    from tests.builders.replicas import generator
    gen = generator()
    gen.replica(tmp_path, broker, [], hw=None, checkpoint=None, segment_base=first)
    part = tmp_path / f"broker-{broker}" / "orders-0"
    recs = [NewRecord(o, gen.TS + o * 1000, f"k{o}".encode(), f"{tag}-{o}".encode()) for o in kept]
    data = build_batch(recs, base_offset=first, partition_leader_epoch=epoch, last_offset_delta=last - first,
                       max_timestamp=gen.TS + last * 1000)
    (part / f"{first:020d}.log").write_bytes(data)
    gen.write_indexes(part)
    log_dir = scan_log_dir(tmp_path / f"broker-{broker}")
    return read_partition_log(log_dir.partitions[0], log_dir)


def test_compare_all_names_the_partition_and_reads_nothing_for_identical_logs(tmp_path: Path) -> None:
    a = replica_log(tmp_path, 1, BASE, hw=None, checkpoint=None)
    b = replica_log(tmp_path, 2, BASE, hw=None, checkpoint=None)
    (d,) = compare_all([a, b])
    assert (d.partition, d.replicas, d.ranges, d.records_unread) == ("orders-0", (A, B), (), None)


@pytest.mark.parametrize("a, b, expected", [
    # a's log starts at 3 (retention): 0-2 are b's only, below the later start, not where they part
    pytest.param(BASE[1:], BASE, ([(0, 2, ONLY_B)], None, 10), id="a-starts-later"),
    # an empty log: everything is the other's; nothing in common, from offset 0
    pytest.param([], BASE, ([(0, 9, ONLY_B)], None, 0), id="a-empty"),
    pytest.param(BASE, [], ([(0, 9, ONLY_A)], None, 0), id="b-empty"),
])
def test_compare_from_the_later_first_batch(tmp_path: Path, a, b, expected) -> None:
    la = replica_log(tmp_path, 1, a, hw=None, checkpoint=None)
    lb = replica_log(tmp_path, 2, b, hw=None, checkpoint=None)
    d = compare(la, lb, "orders-0")
    assert (ranges(d), d.first_divergent_offset, d.common_prefix_end) == expected


def test_batches_out_of_offset_order_in_a_segment_are_walked_in_offset_order(tmp_path: Path) -> None:
    # a's segment holds 5-9 before 0-4 (offset_regression): compared in offset order, the same batches
    la = replica_log(tmp_path, 1, [(5, 5, 0, "a"), (0, 5, 0, "a")], hw=None, checkpoint=None, segment_base=0)
    lb = replica_log(tmp_path, 2, [(0, 5, 0, "a"), (5, 5, 0, "a")], hw=None, checkpoint=None)
    for d in (compare(la, lb, "orders-0"), compare(lb, la, "orders-0")):
        assert (ranges(d), d.first_divergent_offset, d.common_prefix_end) == ([], None, 10)


def test_records_are_compared_from_the_start_offset_itself(tmp_path: Path) -> None:
    # the batches 3-3 and 4-4 against 3-4: only the record at 3, the first compared, differs
    la = by_offset(tmp_path, 1, [(0, 3, 0, "a"), (3, 1, 1, "z"), (4, 1, 1, "a")])
    lb = by_offset(tmp_path, 2, [(0, 3, 0, "a"), (3, 2, 1, "a")])
    d = compare(la, lb, "orders-0")
    assert (ranges(d), d.first_divergent_offset, d.common_prefix_end) == ([(3, 4, DIVERGENT)], 3, 3)


def test_a_batch_starting_at_the_last_offset_of_the_other_side_joins_its_range(tmp_path: Path) -> None:
    # b's 0-4 and a's 0-3 differ; a's 4-6 starts at 4, which b's batch holds: one range 0-6
    la = replica_log(tmp_path, 1, [(0, 4, 0, "a"), (4, 3, 0, "a")], hw=None, checkpoint=None)
    lb = replica_log(tmp_path, 2, [(0, 5, 1, "b")], hw=None, checkpoint=None)
    d = compare(la, lb, "orders-0")
    assert (ranges(d), d.first_divergent_offset, d.common_prefix_end) == ([(0, 6, DIVERGENT)], 0, 0)


def test_the_range_grows_on_either_side_until_neither_does(tmp_path: Path) -> None:
    # a 0-4 against b 0-2: b's 3-8 starts inside, then a's 7-9 starts inside that: one range 0-9
    la = replica_log(tmp_path, 1, [(0, 5, 0, "a"), (7, 3, 0, "a")], hw=None, checkpoint=None)
    lb = replica_log(tmp_path, 2, [(0, 3, 1, "b"), (3, 6, 1, "b")], hw=None, checkpoint=None)
    d = compare(la, lb, "orders-0")
    assert (ranges(d), d.first_divergent_offset, d.common_prefix_end) == ([(0, 9, DIVERGENT)], 0, 0)


def test_a_divergent_range_ending_at_the_later_start_is_where_the_prefix_ends(tmp_path: Path) -> None:
    # b starts at 5; a's batch 0-5 holds 5 as b's 5-5 does, with another record: divergent from 5
    la = by_offset(tmp_path, 1, [(0, 6, 0, "a")])
    lb = by_offset(tmp_path, 2, [(5, 1, 0, "z"), (6, 4, 0, "z")])
    d = compare(la, lb, "orders-0")
    assert (ranges(d), d.first_divergent_offset, d.common_prefix_end) == ([(0, 5, DIVERGENT), (6, 9, ONLY_B)], 5, 5)


def test_a_compacted_batch_is_not_judged_by_its_headers(tmp_path: Path) -> None:
    # a's one batch 0-9 kept only 0-4 (count 5 < lastOffsetDelta + 1): it has no record at 5-9, so
    # b's epoch-1 batch there says nothing about a's records; read, a's are b's first five
    la = compacted(tmp_path, 1, 0, 9, range(0, 5))
    lb = by_offset(tmp_path, 2, BY_OFFSET)
    d = compare(la, lb, "orders-0")
    assert (ranges(d), d.first_divergent_offset, d.common_prefix_end) == ([(0, 4, SAME_RECORDS), (5, 9, ONLY_B)],
                                                                         None, 5)


def test_an_empty_batch_against_records_is_divergent(tmp_path: Path) -> None:
    # the cleaner emptied a's batch 5-9; b holds records there: nothing in common from 5
    la = compacted(tmp_path, 1, 5, 9, range(0))
    lb = by_offset(tmp_path, 2, [(5, 5, 0, "a")])
    d = compare(la, lb, "orders-0")
    assert (ranges(d), d.first_divergent_offset, d.common_prefix_end) == ([(5, 9, DIVERGENT)], 5, 5)


@pytest.mark.parametrize("a, b, expected", [
    # a's 0-4 (epoch 0) and b's 4-9 (epoch 1) share offset 4 only: other records there, unread
    pytest.param([(0, 5, 0, "a"), (5, 5, 1, "a")], [(4, 6, 1, "a")], ([(0, 9, DIVERGENT)], 4, 4),
                 id="one-offset-in-common"),
    # against b's 0-5 (epoch 0), a's second of three batches is in epoch 1
    pytest.param([(0, 2, 0, "a"), (2, 2, 1, "a"), (4, 2, 0, "a")], [(0, 6, 0, "a")], ([(0, 5, DIVERGENT)], 0, 0),
                 id="second-batch-differs"),
    # ... the third
    pytest.param([(0, 2, 0, "a"), (2, 2, 0, "a"), (4, 2, 1, "a")], [(0, 6, 0, "a")], ([(0, 5, DIVERGENT)], 0, 0),
                 id="third-batch-differs"),
])
def test_headers_settle_it_without_the_records(tmp_path: Path, a, b, expected) -> None:
    # b's segment is gone: only the headers can tell, and they do (no records_unread)
    la = replica_log(tmp_path, 1, a, hw=None, checkpoint=None)
    lb = replica_log(tmp_path, 2, b, hw=None, checkpoint=None)
    Path(lb.segments[0].path).unlink()
    d = compare(la, lb, "orders-0")
    assert (ranges(d), d.first_divergent_offset, d.common_prefix_end) == expected and d.records_unread is None


# -- a log whose own batches overlap (offset_regression): the rules as written ------------------------
@pytest.mark.parametrize("swap", [False, True], ids=["overlap-in-b", "overlap-in-a"])
def test_headers_decide_only_on_offsets_two_batches_share(tmp_path: Path, swap) -> None:
    # one side holds 0-0 and 5-9 (epoch 0); the other 0-6 (epoch 0) then 1-2 (epoch 1) again. The
    # epoch-1 batch shares no offset with the batches of the first side, so the headers do not settle
    # it ("two batches with a record at every offset share one whose per-record attributes differ");
    # the records are unread: batches_differ
    gap = replica_log(tmp_path, 1, [(0, 1, 0, "a"), (5, 5, 0, "a")], hw=None, checkpoint=None)
    twice = replica_log(tmp_path, 2, [(0, 7, 0, "b"), (1, 2, 1, "b")], hw=None, checkpoint=None)
    Path(twice.segments[0].path).unlink()
    d = compare(*((twice, gap) if swap else (gap, twice)), "orders-0")
    assert ranges(d) == [(0, 9, BATCHES_DIFFER)] and d.first_divergent_offset is None
    assert twice.segments[0].path in d.records_unread


def test_a_range_starts_at_the_first_batches_that_differ(tmp_path: Path) -> None:
    # both hold 0-1 and 2-9 alike, then 3-4 again (offsets go backwards), other records there: only 3-4
    la = replica_log(tmp_path, 1, [(0, 2, 0, "a"), (2, 8, 0, "a"), (3, 2, 0, "a")], hw=None, checkpoint=None)
    lb = replica_log(tmp_path, 2, [(0, 2, 0, "a"), (2, 8, 0, "a"), (3, 2, 0, "z")], hw=None, checkpoint=None)
    d = compare(la, lb, "orders-0")
    assert (ranges(d), d.first_divergent_offset, d.common_prefix_end) == ([(3, 4, DIVERGENT)], 3, 3)
