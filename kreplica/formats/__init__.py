"""Bytes in, typed values out: one module per on-disk format.

The public readers are re-exported here; everything else (structs, helpers) stays in its module.
"""

from kreplica.formats.batch import Header, NewRecord, Record, RecordBatch
from kreplica.formats.checkpoints import (
    parse_checkpoint,
    parse_clean_shutdown,
    parse_leader_epoch_checkpoint,
    parse_meta_properties,
    parse_offset_checkpoint,
    parse_partition_metadata,
    parse_quorum_state,
)
from kreplica.formats.errors import FormatError, Malformed, Truncated, UnsupportedVersion
from kreplica.formats.findings import KINDS, Finding
from kreplica.formats.offset_index import iter_offset_index
from kreplica.formats.producer_snapshot import parse_producer_snapshot
from kreplica.formats.segment import SegmentEnd, iter_segment
from kreplica.formats.time_index import iter_time_index
from kreplica.formats.txn_index import iter_txn_index

__all__ = [
    "Finding", "FormatError", "Header", "KINDS", "Malformed", "NewRecord", "Record", "RecordBatch", "SegmentEnd",
    "Truncated", "UnsupportedVersion", "iter_offset_index", "iter_segment", "iter_time_index", "iter_txn_index",
    "parse_checkpoint", "parse_clean_shutdown", "parse_leader_epoch_checkpoint", "parse_meta_properties",
    "parse_offset_checkpoint", "parse_partition_metadata", "parse_producer_snapshot", "parse_quorum_state",
]
