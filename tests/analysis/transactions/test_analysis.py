"""``analyze_transactions`` on log directories written in the test: which partition directories
it reads (those a broker's ``LogManager`` serves), the evidence time open transactions are
judged at, and what the result carries."""

from __future__ import annotations

from pathlib import Path

from kreplica.analysis.transactions.analysis import analyze_transactions, served_partitions
from kreplica.model.logdir.log_dir import scan_log_dir
from tests.builders.transactions import TS, data, write_partition

DELETE_DIR = "transfers-1.0123456789abcdef0123456789abcdef-delete"
NO_TIMESTAMP = -1   # RecordBatch.NO_TIMESTAMP


def broker(root: Path, *, ts: int = TS) -> Path:
    """transfers-0 with producer 7's transaction open at offset 0; the -delete copy of
    transfers-1 with producer 9's."""
    write_partition(root, "transfers-0", [data(0, pid=7, epoch=0, txn=True, ts=ts)])
    write_partition(root, DELETE_DIR, [data(0, pid=9, epoch=0, txn=True, ts=ts)])
    return root


def test_only_the_partitions_a_broker_serves_are_read(tmp_path) -> None:
    """``LogManager.loadLog``: a ``-delete`` directory is queued for deletion (and a ``-future``
    one is a future replica), not the partition the broker serves (``LocalLog.parseTopicPartitionName``)."""
    log_dir = scan_log_dir(broker(tmp_path))
    assert sorted(p.name for _, p in served_partitions([log_dir])) == ["transfers-0"]
    r = analyze_transactions([log_dir])
    assert [(p.topic, p.partition, [t.producer_id for t in p.open]) for p in r.partitions] == [("transfers", 0, [7])]
    assert [(v.topic, v.partition, v.transaction.producer_id) for v in r.verdicts] == [("transfers", 0, 7)]


def test_evidence_time_is_now_then_at_time_then_the_newest_batch(tmp_path) -> None:
    """Open transactions are judged at the evidence time (``TransactionsCommand``'s
    ``find-hanging`` compares a transaction's age with ``transaction.max.timeout.ms``)."""
    log_dir = scan_log_dir(broker(tmp_path))
    assert analyze_transactions([log_dir]).now == TS
    assert analyze_transactions([log_dir], at_time=TS + 5).now == TS + 5
    r = analyze_transactions([log_dir], now=TS + 60_000, max_timeout_ms=1_000)
    assert (r.now, r.max_timeout_ms) == (TS + 60_000, 1_000)
    assert [v.age_ms for v in r.verdicts] == [60_000]


def test_batches_without_a_time_leave_the_evidence_time_unknown(tmp_path) -> None:
    """A v2 batch may carry ``NO_TIMESTAMP`` (``LogValidator`` only bounds stamped records); the
    result says it has no evidence time, and the open transaction is still judged (not hanging:
    no time has been seen to pass)."""
    r = analyze_transactions([scan_log_dir(broker(tmp_path, ts=NO_TIMESTAMP))])
    assert r.now is None
    assert [(v.transaction.producer_id, v.hanging) for v in r.verdicts] == [(7, False)]


def test_progress_receives_every_segment_byte_read(tmp_path) -> None:
    """``advance`` (a progress bar) is told the bytes of each served partition's segments walked:
    the -delete directory's are not read."""
    root = broker(tmp_path)
    walked: list[int] = []
    analyze_transactions([scan_log_dir(root)], advance=walked.append)
    assert sum(walked) == sum(f.stat().st_size for f in (root / "transfers-0").glob("*.log"))
