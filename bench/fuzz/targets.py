"""The readers the fuzzer drives: for each, how to call it, what it may raise, and its seeds.

A *reader* here is one entry point of ``kreplica.formats`` (or the walk ``inspect-log`` runs
over a segment), called on one input the way a command calls it. Its contract, from
``ARCHITECTURE.md`` and the reader's docstring:

* ``walker=True``: the reader documents that it never raises; damage is a finding. Any
  exception escaping it, a ``FormatError`` included, is a crash.
* ``walker=False``: the reader may raise a ``FormatError`` subclass ("I cannot go on");
  any other exception is a crash.

Seeds come from ``fixtures/`` and ``../shared/oracle`` (kafka-java segments and checkpoints,
ZooKeeper snapshots and logs), plus small files built with kreplica's own writers for every
format or codec the trees lack (producer snapshots, quorum-state, v0/v1 snappy and lz4
wrappers, KRaft snapshots). Imports of ``kreplica`` happen inside the functions, so the child
process can instrument them for coverage first.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
ORACLE = Path(os.environ.get("KREPLICA_ORACLE", REPO.parent / "shared" / "oracle"))

#: Seeds are cut to this many bytes (whole batches where the format has them).
MAX_SEED = 96 * 1024


@dataclass(frozen=True)
class Reader:
    name: str
    family: str                      # which mutators apply: segment, index, text, json, zk, bytes
    walker: bool                     # True: nothing may escape, not even FormatError
    run: Callable[[bytes], int]      # returns how many items the reader produced
    seeds: Callable[[], list[bytes]]
    weight: float = 1.0              # share of the budget


# -- helpers -----------------------------------------------------------------------------------


def _files(root: Path, pattern: str) -> list[Path]:
    return sorted(p for p in root.rglob(pattern) if p.is_file()) if root.exists() else []


def _read(paths, limit: int = MAX_SEED) -> list[bytes]:
    out, seen = [], set()
    for p in paths:
        data = p.read_bytes()[:limit]
        if data not in seen:
            seen.add(data)
            out.append(data)
    return out


def frames(data: bytes) -> list[tuple[int, int]]:
    """``(position, size)`` of each log entry by the common prefix (offset, length), while the
    lengths are sane; the segment mutators and seed cutter use it."""
    out, pos = [], 0
    while len(data) - pos >= 17:
        (size,) = struct.unpack_from(">i", data, pos + 8)
        if size < 14 or pos + 12 + size > len(data):
            break
        out.append((pos, 12 + size))
        pos += 12 + size
    return out


def _cut_segment(data: bytes, limit: int = MAX_SEED) -> bytes:
    """Whole batches up to ``limit`` bytes (the seed keeps at least one batch)."""
    end = 0
    for pos, size in frames(data):
        if pos + size > limit and end:
            break
        end = pos + size
    return data[:end] if end else data[:limit]


def _segment_magic_codec(data: bytes) -> tuple[int, int] | None:
    if len(data) < 23:
        return None
    magic = data[16]
    if magic == 2:
        return 2, struct.unpack_from(">h", data, 21)[0] & 7
    if magic in (0, 1):
        return magic, data[17] & 7
    return None


# -- segments ----------------------------------------------------------------------------------


def _built_segments() -> list[bytes]:
    """One small segment per magic and codec, with kreplica's writers (the trees lack some)."""
    from kreplica.formats import codecs
    from kreplica.formats.log import default_records, legacy_records
    from kreplica.formats.log.batch import NewRecord

    recs = [NewRecord(i, 1_700_000_000_000 + i, b"key-%d" % i, b"value-%d " % i * (i + 1),
                      (("h", b"v"),) if i % 2 else ()) for i in range(6)]
    out = []
    for codec in (codecs.NONE, codecs.GZIP, codecs.SNAPPY, codecs.LZ4, codecs.ZSTD):
        out.append(default_records.build_batch(recs[:3], base_offset=0, compression=codec)
                   + default_records.build_batch(recs[3:], base_offset=3, compression=codec,
                                                 producer_id=7, producer_epoch=0, base_sequence=0,
                                                 is_transactional=True)
                   + default_records.build_batch([default_records.build_control_record(6, 1, 1, 3)],
                                                 base_offset=6, is_control=True, is_transactional=True,
                                                 producer_id=7, producer_epoch=0))
    for magic in (0, 1):
        plain = b"".join(legacy_records.build_message(r.offset, r.key, r.value, magic=magic,
                                                      timestamp=r.timestamp) for r in recs[:2])
        out.append(plain)
        for codec in (codecs.GZIP, codecs.SNAPPY, codecs.LZ4):
            out.append(plain + legacy_records.build_wrapper(
                [r._replace(offset=r.offset + 2) for r in recs[2:]], magic=magic, compression=codec))
    return out


def segment_seeds(magic: int) -> Callable[[], list[bytes]]:
    def seeds() -> list[bytes]:
        paths = _files(FIXTURES, "*.log") + _files(ORACLE / "kafka-java", "*.log")
        out, seen = [], set()
        for data in [_cut_segment(p.read_bytes()) for p in paths] + _built_segments():
            mc = _segment_magic_codec(data)
            wanted = mc is not None and mc[0] == magic
            # every seed of another magic is kept too, but only mixed files: the family is the magic
            if (wanted or (mc is None and magic == 2)) and data not in seen:
                seen.add(data)
                out.append(data)
        return out
    return seeds


_SEGMENT_DIR: list[str] = []


def _segment_path() -> str:
    if not _SEGMENT_DIR:
        import tempfile
        base = "/dev/shm" if os.path.isdir("/dev/shm") else None
        _SEGMENT_DIR.append(tempfile.mkdtemp(prefix="kreplica-fuzz-", dir=base))
    return os.path.join(_SEGMENT_DIR[0], "00000000000000000000.log")


def run_segment(data: bytes) -> int:
    """What ``inspect-log --records`` does with a file: the walk, the cross-batch checks, record
    decoding of every batch (the record stream turns decoding errors into findings), recovery."""
    from kreplica.analysis.inspect.inspect_log import InspectOptions, inspect_segment
    from kreplica.formats.mapped import open_buffer
    from kreplica.model.logdir.segments import SegmentFile

    path = _segment_path()
    with open(path, "wb") as f:
        f.write(data)
    n = 0
    with open_buffer(path) as buf:
        for _ in inspect_segment(SegmentFile(path, 0), buf, InspectOptions(records=True)):
            n += 1
    return n


def run_segment_no_crc(data: bytes) -> int:
    """The same walk as :func:`run_segment` but with ``--no-verify-crc`` and a byte limit."""
    from kreplica.analysis.inspect.inspect_log import InspectOptions, inspect_segment
    from kreplica.formats.mapped import open_buffer
    from kreplica.model.logdir.segments import SegmentFile

    path = _segment_path()
    with open(path, "wb") as f:
        f.write(data)
    n = 0
    limit = len(data) - (len(data) // 3)
    with open_buffer(path) as buf:
        for _ in inspect_segment(SegmentFile(path, 0), buf, InspectOptions(records=True, verify_crc=False,
                                                                           max_bytes=limit)):
            n += 1
    return n


# -- indexes, producer snapshots ---------------------------------------------------------------


def run_offset_index(data: bytes) -> int:
    from kreplica.formats.log.offset_index import iter_offset_index
    return sum(1 for _ in iter_offset_index(data, path="f.index", base_offset=100))


def run_time_index(data: bytes) -> int:
    from kreplica.formats.log.time_index import iter_time_index
    return sum(1 for _ in iter_time_index(data, path="f.timeindex", base_offset=100))


def run_txn_index(data: bytes) -> int:
    from kreplica.formats.log.txn_index import iter_txn_index
    return sum(1 for _ in iter_txn_index(data, path="f.txnindex", base_offset=0))


def index_seeds(suffix: str) -> Callable[[], list[bytes]]:
    def seeds() -> list[bytes]:
        out = _read(_files(FIXTURES, "*" + suffix) + _files(ORACLE / "kafka-java", "*" + suffix))
        from kreplica.formats.log import offset_index, time_index, txn_index
        if suffix == ".index":
            out.append(offset_index.build_offset_index([(100, 0), (150, 4096), (220, 9000)], base_offset=100))
        elif suffix == ".timeindex":
            out.append(time_index.build_time_index([(1_700_000_000_000, 100), (1_700_000_000_500, 180)],
                                                   base_offset=100))
        else:
            out.append(txn_index.build_txn_index([(7, 0, 10, 10), (8, 3, 12, 12), (9, 20, 40, 40)]))
        return [s for s in out if s]
    return seeds


def run_producer_snapshot(data: bytes) -> int:
    from kreplica.formats.log.producer_snapshot import parse_producer_snapshot
    return len(parse_producer_snapshot(data, path="00000000000000000010.snapshot").entries)


def producer_snapshot_seeds() -> list[bytes]:
    from kreplica.formats.log.producer_snapshot import ProducerSnapshotEntry, build_producer_snapshot
    out = _read(_files(FIXTURES, "*.snapshot") + _files(ORACLE / "kafka-java", "*.snapshot"))
    entries = [ProducerSnapshotEntry(1000 + i, i % 3, 10 * i, 100 + i, i, 1_700_000_000_000 + i, i - 1,
                                     -1 if i % 2 else 50 + i) for i in range(5)]
    out += [build_producer_snapshot(entries), build_producer_snapshot(entries[:1]), build_producer_snapshot([])]
    return out


# -- text files ----------------------------------------------------------------------------------


def _parser(module: str, func: str, name: str) -> Callable[[bytes], int]:
    def run(data: bytes) -> int:
        import importlib
        fn = getattr(importlib.import_module(f"kreplica.formats.{module}"), func)
        fn(data, path=name)
        return 1
    run.__name__ = f"run_{module}"
    return run


def _text_seeds(patterns: list[str], extra: list[bytes]) -> Callable[[], list[bytes]]:
    def seeds() -> list[bytes]:
        paths = []
        for pattern in patterns:
            paths += _files(FIXTURES, pattern) + _files(ORACLE, pattern)
        return _read(paths, 16 * 1024) + extra
    return seeds


QUORUM_STATE = [
    b'{"clusterId":"","leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,'
    b'"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}',
    b'{"leaderId":-1,"leaderEpoch":2,"votedId":1,"votedDirectoryId":"J8aAPcfLQt2bqs1JT_rMgQ","data_version":1}\n',
]
PARTITION_METADATA = [b"version: 0\ntopic_id: J8aAPcfLQt2bqs1JT_rMgQ\n", b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA"]
CLEAN_SHUTDOWN = [b'{"version":0,"brokerEpoch":42}', b"", b'{"version":0,"brokerEpoch":-1}']
META_PROPERTIES = [
    b"#\n#Thu Jan 01 00:00:00 UTC 1970\nversion=1\nnode.id=1\ncluster.id=J8aAPcfLQt2bqs1JT_rMgQ\n"
    b"directory.id=J8aAPcfLQt2bqs1JT_rMgQ\n",
    b"version=0\nbroker.id=3\ncluster.id=abc\\u0041\\\n  continued\n",
]
OFFSET_CHECKPOINT = [b"0\n2\norders 0 100\norders 1 57\n", b"0\n0\n"]
EPOCH_CHECKPOINT = [b"0\n3\n0 0\n1 17\n4 38\n", b"0\n0\n"]


# -- ZooKeeper and KRaft ------------------------------------------------------------------------


def run_zk_snapshot(data: bytes) -> int:
    """A snapshot as the loader reads it: inflated by its magic (gzip, snappy-java), then walked
    (the raw form the loader uses on every other input)."""
    from kreplica.formats.zookeeper import snapshot as zs
    compression = zs.COMPRESSION_NONE
    if data[:2] == b"\x1f\x8b":
        compression = zs.COMPRESSION_GZ
    elif data[:8] == b"\x82SNAPPY\x00":
        compression = zs.COMPRESSION_SNAPPY
    stream, _finding = zs.inflate(data, compression, path="snapshot.1")
    raw = len(data) % 2 == 1
    return sum(1 for _ in zs.iter_snapshot(stream, path="snapshot.1", compression=compression, raw=raw))


def zk_snapshot_seeds() -> list[bytes]:
    from kreplica.formats.zookeeper import snapshot as zs
    paths = [p for p in _files(ORACLE / "zookeeper", "snapshot.*") if not p.name.endswith(".txt")]
    paths += _files(FIXTURES, "snapshot.*")
    out = _read(paths, 256 * 1024)
    plain = [s for s in out if s[:4] == b"ZKSN"]
    for s in plain[:1]:
        out.append(zs.build_gzip_stream(s))
        out.append(zs.build_snappy_stream(s))
    return out


def run_zk_txnlog(data: bytes) -> int:
    from kreplica.formats.zookeeper.txnlog import iter_txnlog
    return sum(1 for _ in iter_txnlog(data, path="log.1"))


def zk_txnlog_seeds() -> list[bytes]:
    paths = [p for p in _files(ORACLE / "zookeeper", "log.*") if not p.name.endswith(".txt")]
    paths += _files(FIXTURES, "log.*")
    out = []
    for data in _read(paths, 1 << 22):
        # cut at the zero preallocated tail, then to the seed limit
        end = len(data.rstrip(b"\x00")) + 1
        out.append(data[:min(end, MAX_SEED)])
    return out


def run_kraft(data: bytes) -> int:
    from kreplica.formats.kraft.records import iter_metadata
    return sum(1 for _ in iter_metadata(data, path="00000000000000000000.log"))


def kraft_seeds() -> list[bytes]:
    from kreplica.formats.kraft import records as kraft
    out = [_cut_segment(d) for d in _read(_files(FIXTURES / "elections", "*.log")
                                          + _files(FIXTURES / "timeline", "*.log"), 1 << 22)]
    topic = "AAAAAAAAAAAAAAAAAAAAAQ"
    records = [
        ("FeatureLevelRecord", 0, {"name": "metadata.version", "feature_level": 14}),
        ("RegisterBrokerRecord", 0, {"broker_id": 1, "incarnation_id": topic, "broker_epoch": 5}),
        ("TopicRecord", 0, {"name": "orders", "topic_id": topic}),
        ("PartitionRecord", 0, {"partition_id": 0, "topic_id": topic, "replicas": [1, 2], "isr": [1, 2],
                                "leader": 1, "leader_epoch": 3, "partition_epoch": 4}),
    ]
    try:
        out.append(kraft.build_snapshot(records, epoch=3, timestamp=1_700_000_000_000))
    except Exception:  # a schema detail the seed guessed wrong: the tree seeds still stand
        pass
    return [s for s in out if s]


# -- the table ------------------------------------------------------------------------------------


def _iter_readers() -> Iterator[Reader]:
    for magic in (0, 1, 2):
        yield Reader(f"segment-v{magic}", "segment", True, run_segment, segment_seeds(magic), 2.0)
    yield Reader("segment-nocrc", "segment", True, run_segment_no_crc, segment_seeds(2), 0.5)
    yield Reader("offset-index", "index", True, run_offset_index, index_seeds(".index"))
    yield Reader("time-index", "index", True, run_time_index, index_seeds(".timeindex"))
    yield Reader("txn-index", "index", True, run_txn_index, index_seeds(".txnindex"))
    yield Reader("producer-snapshot", "bytes", False, run_producer_snapshot, producer_snapshot_seeds)
    yield Reader("offset-checkpoint", "text", False,
                 _parser("offset_checkpoint", "parse_offset_checkpoint", "replication-offset-checkpoint"),
                 _text_seeds(["*offset-checkpoint"], OFFSET_CHECKPOINT), 0.5)
    yield Reader("leader-epoch-checkpoint", "text", False,
                 _parser("leader_epoch_checkpoint", "parse_leader_epoch_checkpoint", "leader-epoch-checkpoint"),
                 _text_seeds(["leader-epoch-checkpoint"], EPOCH_CHECKPOINT), 0.5)
    yield Reader("partition-metadata", "text", False,
                 _parser("partition_metadata", "parse_partition_metadata", "partition.metadata"),
                 _text_seeds(["partition.metadata"], PARTITION_METADATA), 0.5)
    yield Reader("meta-properties", "text", False,
                 _parser("meta_properties", "parse_meta_properties", "meta.properties"),
                 _text_seeds(["meta.properties"], META_PROPERTIES), 0.5)
    yield Reader("clean-shutdown", "json", False,
                 _parser("clean_shutdown", "parse_clean_shutdown", ".kafka_cleanshutdown"),
                 _text_seeds([".kafka_cleanshutdown"], CLEAN_SHUTDOWN), 0.5)
    yield Reader("quorum-state", "json", False,
                 _parser("quorum_state", "parse_quorum_state", "quorum-state"),
                 _text_seeds(["quorum-state"], QUORUM_STATE), 0.5)
    yield Reader("zk-snapshot", "zk", False, run_zk_snapshot, zk_snapshot_seeds, 1.5)
    yield Reader("zk-txnlog", "zk", False, run_zk_txnlog, zk_txnlog_seeds, 1.5)
    yield Reader("kraft", "segment", True, run_kraft, kraft_seeds, 1.5)


READERS: dict[str, Reader] = {r.name: r for r in _iter_readers()}

#: Readers that decode v2 records and so run on both decoders (``name@python`` is the pure one).
DECODER_READERS = ("segment-v2", "kraft")
