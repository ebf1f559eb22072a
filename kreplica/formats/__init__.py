"""Bytes in, typed values out: one module per on-disk format, in a package per file family.

* ``log``: segments (record batches of every magic and codec), indexes, producer snapshots;
* ``logdir``: a log directory's small files (checkpoints, ``meta.properties``, ...) and names;
* ``kraft``: the KRaft metadata log's records and ``quorum-state``;
* ``coordinator``: the records of the coordinators' topics (consumer offsets, transactions, share state);
* ``remote_storage``: tiered storage's ``__remote_log_metadata`` records and ``remote_log_snapshot``;
* ``zookeeper``: jute, ZooKeeper snapshots and transaction logs;
* ``tools``: the JSON documents of Kafka's command-line tools.

Shared by all of them, at the top: ``errors`` (the ``FormatError`` family: damaged input),
``usage`` (``UsageError``: what was typed cannot be run, raised by the model too), ``findings`` (the
``Finding`` value and its ``KINDS`` table), ``mapped`` (the one place a file is mapped),
``codecs`` (Kafka's compression codecs with their framing, also ZooKeeper's snapshot
compression), ``generated_messages`` (the one reader and writer of the message format Kafka's
``*.json`` schemas generate, not to be confused with the legacy message sets of ``log``),
``varint``, ``checksums`` (CRC-32C and CRC-32, fast and reference), ``uuid``, ``_java`` (the
JDK's text rules) and ``_compiled`` (loading a compiled twin).

The public readers are available from here; they are imported on first use (PEP 562), so that
importing one format module, or the CLI, does not import them all.
"""

from __future__ import annotations

import importlib

_PUBLIC = {
    "Header": "log.batch", "NewRecord": "log.batch", "Record": "log.batch", "RecordBatch": "log.batch",
    "parse_checkpoint": "logdir.checkpoint_file", "parse_clean_shutdown": "logdir.clean_shutdown",
    "parse_leader_epoch_checkpoint": "logdir.leader_epoch_checkpoint", "parse_meta_properties": "logdir.meta_properties",
    "parse_offset_checkpoint": "logdir.offset_checkpoint", "parse_partition_metadata": "logdir.partition_metadata",
    "parse_quorum_state": "kraft.quorum_state",
    "DecompressionError": "errors", "FormatError": "errors", "Malformed": "errors", "Truncated": "errors", "UnsupportedVersion": "errors",
    "UsageError": "usage",
    "KINDS": "findings", "Finding": "findings",
    "iter_offset_index": "log.offset_index", "parse_producer_snapshot": "log.producer_snapshot",
    "SegmentEnd": "log.segment", "iter_segment": "log.segment",
    "iter_time_index": "log.time_index", "iter_txn_index": "log.txn_index",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
