"""Bytes in, typed values out: one module per on-disk format.

The public readers are available from here; they are imported on first use (PEP 562), so that
importing one format module, or the CLI, does not import them all.
"""

from __future__ import annotations

import importlib

_PUBLIC = {
    "Header": "batch", "NewRecord": "batch", "Record": "batch", "RecordBatch": "batch",
    "parse_checkpoint": "checkpoint_file", "parse_clean_shutdown": "clean_shutdown",
    "parse_leader_epoch_checkpoint": "leader_epoch_checkpoint", "parse_meta_properties": "meta_properties",
    "parse_offset_checkpoint": "offset_checkpoint", "parse_partition_metadata": "partition_metadata",
    "parse_quorum_state": "quorum_state",
    "FormatError": "errors", "Malformed": "errors", "Truncated": "errors", "UnsupportedVersion": "errors",
    "KINDS": "findings", "Finding": "findings",
    "iter_offset_index": "offset_index", "parse_producer_snapshot": "producer_snapshot",
    "SegmentEnd": "segment", "iter_segment": "segment",
    "iter_time_index": "time_index", "iter_txn_index": "txn_index",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
