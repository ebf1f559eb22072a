"""The fleet tables: one Arrow schema per Parquet table, and the conversions between their rows
and the model's values.

``fleet scan`` writes these tables; ``fleet analyze`` reads them back and rebuilds each replica's
:class:`~kreplica.model.log.partition_log.PartitionLog` from its rows
(:func:`replica_log_from_rows`), so the analyses run on exactly the values a single-partition
command would have read from the files. Every table carries the replica key
(``broker``, ``log_dir``, ``topic``, ``partition``).

Tables: ``replicas`` (one row per replica: checkpoint values, ``leader-epoch-checkpoint``
entries, clean-shutdown marker, what the directory holds), ``segments``, ``batches`` (one row per
batch header, :class:`~kreplica.formats.log.batch.RecordBatch` fields with ``path`` named ``file``
and ``compression`` and ``timestamp_type`` as the words inspect-log's JSON gives), ``markers``
(the decoded marker of each control batch, ``control_type`` a word too), ``findings`` and, with
``--records``, ``records``; ``group_offsets`` and ``transactions`` (the committed offsets and
transactional ids of the ``__consumer_offsets`` and ``__transaction_state`` replicas,
:mod:`~kreplica.pipeline.scan.groups`). Their columns are documented in the README ("The fleet's tables").
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping

from kreplica.formats.codecs import CODEC_NAMES
from kreplica.formats.log.batch import TIMESTAMP_TYPE_NAMES, RecordBatch
from kreplica.formats.log.control_marker import CONTROL_TYPE_NAMES, ControlMarker
from kreplica.formats.findings import Finding
from kreplica.formats.logdir.leader_epoch_checkpoint import EpochEntryLine
from kreplica.formats.logdir.naming import parse_partition_dir
from kreplica.model.logdir.log_dir import LogDir, LogDirCheckpoints, PartitionDir, SegmentFiles
from kreplica.model.log.partition_log import PartitionLog, SmallFile, partition_log_from_rows

#: The replica key every table carries.
KEY_COLUMNS = ("broker", "log_dir", "topic", "partition")
BATCH_FIELDS = RecordBatch._fields
#: The ``batches`` table's columns, named without pyarrow: the key, then the header's fields with
#: ``path`` named ``file``.
BATCH_COLUMNS = KEY_COLUMNS + tuple("file" if f == "path" else f for f in BATCH_FIELDS)


def _arrow_schemas() -> dict:
    """The Arrow schemas, built on first use: the rows' conversions below (and the per-partition
    analysis that rebuilds logs from rows) import without pyarrow, the ``fleet`` extra."""
    import pyarrow as pa

    KEY = [("broker", pa.int32()), ("log_dir", pa.string()), ("topic", pa.string()), ("partition", pa.int32())]

    REPLICAS = pa.schema(KEY + [
        ("dir", pa.string()), ("dir_name", pa.string()), ("suffix", pa.string()), ("broker_source", pa.string()),
        ("high_watermark", pa.int64()), ("recovery_point", pa.int64()), ("log_start_offset", pa.int64()),
        ("clean_shutdown", pa.bool_()),
        ("leader_epoch_checkpoint", pa.list_(pa.struct([("epoch", pa.int32()), ("start_offset", pa.int64()),
                                                        ("line", pa.int32()), ("position", pa.int64())]))),
        ("leader_epoch_checkpoint_file", pa.string()), ("leader_epoch_checkpoint_error", pa.string()),
        ("leader_epoch_checkpoint_error_position", pa.int64()),
        ("partition_metadata_file", pa.string()), ("partition_metadata_error", pa.string()), ("topic_id", pa.string()),
        ("leftovers", pa.list_(pa.struct([("path", pa.string()), ("kind", pa.string())]))),
        ("orphan_indexes", pa.list_(pa.string())),
    ])
    SEGMENTS = pa.schema(KEY + [
        ("file", pa.string()), ("base_offset", pa.int64()), ("size", pa.int64()), ("valid_bytes", pa.int64()),
        ("stopped_by", pa.string()), ("findings", pa.int64()), ("index", pa.string()), ("timeindex", pa.string()),
        ("txnindex", pa.string()), ("txn_index_below_base", pa.bool_()),
    ])
    _BATCH_TYPES = {
        "path": pa.string(), "position": pa.int64(), "size": pa.int64(), "magic": pa.int8(), "base_offset": pa.int64(),
        "last_offset": pa.int64(), "count": pa.int32(), "partition_leader_epoch": pa.int32(), "crc": pa.int64(),
        "crc_valid": pa.bool_(), "attributes": pa.int32(), "compression": pa.string(), "timestamp_type": pa.string(),
        "base_timestamp": pa.int64(), "max_timestamp": pa.int64(), "producer_id": pa.int64(),
        "producer_epoch": pa.int16(), "base_sequence": pa.int32(), "is_transactional": pa.bool_(),
        "is_control": pa.bool_(), "delete_horizon_ms": pa.int64(), "after_break": pa.bool_(),
    }
    BATCHES = pa.schema(KEY + [(c, _BATCH_TYPES["path" if c == "file" else c]) for c in BATCH_COLUMNS[len(KEY):]])
    MARKERS = pa.schema(KEY + [
        ("file", pa.string()), ("position", pa.int64()), ("offset", pa.int64()), ("producer_id", pa.int64()),
        ("producer_epoch", pa.int16()), ("control_type", pa.string()), ("coordinator_epoch", pa.int32()),
        ("key_is_null", pa.bool_()), ("error", pa.string()),
    ])
    FINDINGS = pa.schema(KEY + [
        ("path", pa.string()), ("position", pa.int64()), ("kind", pa.string()), ("severity", pa.string()),
        ("message", pa.string()), ("details", pa.string()),
    ])
    RECORDS = pa.schema(KEY + [
        ("file", pa.string()), ("batch_position", pa.int64()), ("offset", pa.int64()), ("timestamp", pa.int64()),
        ("key_size", pa.int32()), ("value_size", pa.int32()), ("key_xxhash", pa.uint64()),
        ("value_xxhash", pa.uint64()), ("key", pa.binary()), ("value", pa.binary()),
    ])
    GROUP_OFFSETS = pa.schema(KEY + [
        ("group", pa.string()), ("committed_topic", pa.string()), ("committed_partition", pa.int32()),
        ("offset", pa.int64()), ("leader_epoch", pa.int32()), ("metadata", pa.string()),
        ("commit_timestamp", pa.int64()), ("expire_timestamp", pa.int64()), ("expired", pa.bool_()),
        ("pending", pa.bool_()), ("transactional", pa.bool_()), ("producer_id", pa.int64()),
        ("record_offset", pa.int64()), ("value_version", pa.int16()), ("coordinator_partition", pa.int32()),
        ("source", pa.string()), ("path", pa.string()), ("position", pa.int64()),
        ("replica_log_end_offset", pa.int64()),
    ])
    TRANSACTIONS = pa.schema(KEY + [
        ("transactional_id", pa.string()), ("producer_id", pa.int64()), ("producer_epoch", pa.int16()),
        ("previous_producer_id", pa.int64()), ("next_producer_id", pa.int64()),
        ("transaction_timeout_ms", pa.int32()), ("state", pa.string()),
        ("partitions", pa.list_(pa.struct([("topic", pa.string()), ("partition", pa.int32())]))),
        ("transaction_last_update_timestamp_ms", pa.int64()), ("transaction_start_timestamp_ms", pa.int64()),
        ("client_transaction_version", pa.int16()), ("value_version", pa.int16()),
        ("coordinator_partition", pa.int32()), ("record_offset", pa.int64()), ("source", pa.string()),
    ])
    TABLES = {"replicas": REPLICAS, "segments": SEGMENTS, "batches": BATCHES, "markers": MARKERS,
              "findings": FINDINGS, "records": RECORDS, "group_offsets": GROUP_OFFSETS, "transactions": TRANSACTIONS}
    return {name: value for name, value in locals().items() if name.isupper() and not name.startswith("_")}


#: NOTE: the names :func:`_arrow_schemas` defines, read through the module's ``__getattr__`` (PEP 562)
_ARROW_NAMES = frozenset(("KEY", "REPLICAS", "SEGMENTS", "BATCHES", "MARKERS", "FINDINGS", "RECORDS",
                          "GROUP_OFFSETS", "TRANSACTIONS", "TABLES"))
_built: dict = {}


def __getattr__(name: str):
    if name not in _ARROW_NAMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if not _built:
        _built.update(_arrow_schemas())
    return _built[name]


#: The tables every scan writes (``records`` only with ``--records``), and ``fleet analyze`` reads.
SCAN_TABLES = ("replicas", "segments", "batches", "markers", "findings")
#: The tables of Kafka's internal topics every scan writes too (:mod:`.scan_groups`); ``fleet
#: analyze`` reads ``group_offsets`` where it is (a scan before them has none).
COORDINATOR_TABLES = ("group_offsets", "transactions")

#: The file that marks a table complete, written last, as Hadoop's output committer (Spark's
#: writer) does: ``fleet analyze`` reads no table without it.
SUCCESS_MARKER = "_SUCCESS"
#: Where a scan's tasks write the tables until every one is complete (the name Spark's writer
#: uses for the same purpose; Spark and Arrow skip names starting with ``_`` when reading).
STAGING_DIR = "_temporary"


# -- the words of codes, as inspect-log's JSON gives them ----------------------------------------


def compression_word(code: int) -> str:
    """``none``, ``gzip``, ``snappy``, ``lz4``, ``zstd``; a codec id Kafka does not define as its
    number (``"5"``), where inspect-log's JSON gives the number itself."""
    return CODEC_NAMES.get(code) or str(code)


def compression_code(word: str) -> int:
    return _CODEC_IDS[word] if word in _CODEC_IDS else int(word)


def timestamp_type_word(code: int) -> str:
    """``create_time``, ``log_append_time``, ``no_timestamp_type`` (magic 0)."""
    return TIMESTAMP_TYPE_NAMES[code]


def timestamp_type_code(word: str) -> int:
    return _TIMESTAMP_TYPE_CODES[word]


def control_type_word(code: int | None) -> str | None:
    """``commit``, ``abort``, ``leader_change``...; a type Kafka does not define as its number
    (inspect-log's JSON says ``unknown``); ``None`` where the marker cannot be read."""
    return None if code is None else CONTROL_TYPE_NAMES.get(code) or str(code)


def control_type_code(word: str | None) -> int | None:
    return None if word is None else _CONTROL_TYPE_CODES[word] if word in _CONTROL_TYPE_CODES else int(word)


_CODEC_IDS = {word: code for code, word in CODEC_NAMES.items()}
_TIMESTAMP_TYPE_CODES = {word: code for code, word in TIMESTAMP_TYPE_NAMES.items()}
_CONTROL_TYPE_CODES = {word: code for code, word in CONTROL_TYPE_NAMES.items()}

#: The ``batches`` columns that hold a word where the header holds a code: (code → word, word → code).
WORD_COLUMNS = {"compression": (compression_word, compression_code),
                "timestamp_type": (timestamp_type_word, timestamp_type_code)}


# -- model values to rows ------------------------------------------------------------------------


def batch_row(key: tuple, b: RecordBatch) -> tuple:
    """A ``batches`` row: the key, then the header's fields in :data:`BATCH_FIELDS` order, codes as
    words (:data:`WORD_COLUMNS`)."""
    return (*key, *b._replace(**{c: word(getattr(b, c)) for c, (word, _) in WORD_COLUMNS.items()}))


def batch_fields(row: Mapping) -> dict:
    """A ``batches`` row as the header's fields (:data:`BATCH_FIELDS`): ``file`` as ``path``, the
    words back to codes."""
    fields = {f: row["file" if f == "path" else f] for f in BATCH_FIELDS}
    for column, (_, code) in WORD_COLUMNS.items():
        fields[column] = code(fields[column])
    return fields


def marker_row(key: tuple, path: str, m: ControlMarker) -> dict:
    return {**dict(zip(KEY_COLUMNS, key)), "file": path, "position": m.position, "offset": m.offset,
            "producer_id": m.producer_id, "producer_epoch": m.producer_epoch,
            "control_type": control_type_word(m.control_type),
            "coordinator_epoch": m.coordinator_epoch, "key_is_null": m.key_is_null, "error": m.error}


def finding_row(key: tuple, f: Finding) -> dict:
    return {**dict(zip(KEY_COLUMNS, key)), "path": f.path, "position": f.position, "kind": f.kind,
            "severity": f.severity, "message": f.message,
            "details": json.dumps(f.details, sort_keys=True, default=str) if f.details else None}


def finding_from_row(row: Mapping) -> Finding:
    details = json.loads(row["details"]) if row.get("details") else {}
    return Finding(row["kind"], row["path"], row["position"], row["message"], severity=row["severity"],
                   details=details)


def replica_row(key: tuple, broker_source: str, log: PartitionLog) -> dict:
    """The ``replicas`` row of a replica read from files (everything analysis needs besides batches)."""
    partition, cps = log.partition, log.checkpoints
    cp = log.epoch_checkpoint
    lines = [{"epoch": x.epoch, "start_offset": x.start_offset, "line": x.line, "position": x.position}
             for x in (log.epoch_checkpoint_lines or ())] if cp is not None and cp.error is None else None
    meta = log.partition_metadata
    lso = (cps.log_start_offsets or {}).get(log.key) if log.key and cps.log_start_offsets is not None else None
    return {
        **dict(zip(KEY_COLUMNS, key)), "dir": partition.path, "dir_name": partition.name,
        "suffix": partition.parsed.suffix if partition.parsed else None, "broker_source": broker_source,
        "high_watermark": log.high_watermark, "recovery_point": log.recovery_point, "log_start_offset": lso,
        "clean_shutdown": cps.clean_shutdown is not None, "leader_epoch_checkpoint": lines,
        "leader_epoch_checkpoint_file": cp.path if cp else None,
        "leader_epoch_checkpoint_error": cp.error if cp else None,
        "leader_epoch_checkpoint_error_position": cp.position if cp else None,
        "partition_metadata_file": meta.path if meta else None,
        "partition_metadata_error": meta.error if meta else None,
        "topic_id": str(meta.value.topic_id) if meta is not None and meta.error is None else None,
        "leftovers": [{"path": p, "kind": k} for p, k in partition.leftovers],
        "orphan_indexes": list(partition.orphan_indexes),
    }


def segment_row(key: tuple, files: SegmentFiles, file_size: int, valid_bytes: int, stopped_by: str,
                findings: int, txn_index_below_base: bool) -> dict:
    return {**dict(zip(KEY_COLUMNS, key)), "file": files.log, "base_offset": files.base_offset, "size": file_size,
            "valid_bytes": valid_bytes, "stopped_by": stopped_by, "findings": findings, "index": files.index,
            "timeindex": files.timeindex, "txnindex": files.txnindex, "txn_index_below_base": txn_index_below_base}


# -- rows back to the model ----------------------------------------------------------------------


class _Present:
    """Stands for a parsed ``.kafka_cleanshutdown``: analysis only asks whether it is there."""


def replica_log_from_rows(replica: Mapping, segments: Iterable[Mapping], batches: Iterable[Mapping],
                          markers: Iterable[Mapping], findings: Iterable[Mapping] = ()) -> PartitionLog:
    """The :class:`PartitionLog` of one replica from its table rows (its segments' findings
    among ``findings``)."""
    seg_rows = sorted(segments, key=lambda r: r["base_offset"])
    seg_files = tuple(SegmentFiles(r["base_offset"], r["file"], r["index"], r["timeindex"], r["txnindex"])
                      for r in seg_rows)
    name = replica["dir_name"]
    lines = replica["leader_epoch_checkpoint"]
    epoch_file = replica["leader_epoch_checkpoint_file"]
    partition = PartitionDir(replica["dir"], name, parse_partition_dir(name), seg_files, (), epoch_file,
                             replica["partition_metadata_file"],
                             tuple((x["path"], x["kind"]) for x in replica["leftovers"] or ()),
                             tuple(replica["orphan_indexes"] or ()))
    key = partition.key

    def one(value):
        return None if value is None or key is None else {key: value}

    cps = LogDirCheckpoints(one(replica["high_watermark"]), one(replica["recovery_point"]),
                            one(replica["log_start_offset"]), None, None,
                            _Present() if replica["clean_shutdown"] else None, (), ())
    log_dir = LogDir(replica["log_dir"], (partition,), {}, (), is_whole=False)
    epoch_checkpoint = None
    if epoch_file is not None:
        if replica["leader_epoch_checkpoint_error"] is not None:
            epoch_checkpoint = SmallFile(epoch_file, None, replica["leader_epoch_checkpoint_error"],
                                         replica["leader_epoch_checkpoint_error_position"] or 0)
        else:
            epoch_checkpoint = SmallFile(epoch_file, tuple(EpochEntryLine(x["epoch"], x["start_offset"], x["line"],
                                                                          x["position"]) for x in lines or ()))
    metadata = None
    if replica["partition_metadata_file"] is not None:
        metadata = SmallFile(replica["partition_metadata_file"], replica["topic_id"],
                             replica["partition_metadata_error"])
    segment_rows = [{"path": r["file"], "file_size": r["size"], "valid_bytes": r["valid_bytes"],
                     "stopped_by": r["stopped_by"], "txn_index_below_base": r["txn_index_below_base"]}
                    for r in seg_rows]
    batch_rows = map(batch_fields, batches)
    marker_rows = ({"path": r["file"], **{c: r[c] for c in ControlMarker.__dataclass_fields__},
                    "control_type": control_type_code(r["control_type"])} for r in markers)
    return partition_log_from_rows(partition, log_dir, cps, segment_rows, batch_rows, marker_rows=marker_rows,
                                   label=f"broker-{replica['broker']}", epoch_checkpoint=epoch_checkpoint,
                                   partition_metadata=metadata, broker_id=replica["broker"],
                                   findings=map(finding_from_row, findings))
