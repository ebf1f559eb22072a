"""An internal topic's record for people, in one line (``inspect-log --records -f text``): its
``decoded`` member (:mod:`kreplica.report.schemas.internal_records`) as the dump tool prints it."""

from __future__ import annotations

import json
from collections.abc import Callable

from kreplica.formats.coordinator.records import CoordinatorRecord
from kreplica.formats.coordinator.transaction_records import TRANSACTION_STATES
from kreplica.formats.kraft.records import ControlRecord, MetadataRecord
from kreplica.formats.remote_storage.metadata_records import (PARTITION_DELETE_STATES, SEGMENT_STATES,
                                                              RemoteLogMetadataRecord)
from kreplica.report.schemas.internal_records import decoded_object

#: ``{"a": 1, "b": [2, 3]}`` for people: breaks only between members.
_TEXT_JSON = json.JSONEncoder(ensure_ascii=False, separators=(", ", ":")).encode


#: state fields of tiered storage's records -> Kafka's names of their ids
_STATE_NAMES = {"remote_log_segment_state": SEGMENT_STATES, "remote_partition_delete_state": PARTITION_DELETE_STATES}


def decoded_text(decoded: CoordinatorRecord | MetadataRecord | ControlRecord | RemoteLogMetadataRecord,
                 enc: Callable[[bytes], object]) -> str:
    """One line for people: ``offset_commit key={...} value(v3)={...}``, ``... value=tombstone``,
    ``topic_record value(v0)={...}``, as the dump tool's ``key: {...} payload: {...}``; a
    transaction's status is given by Kafka's name of it (``CompleteCommit``), as the dump tool
    prints it; so is a remote segment's or partition's state (``COPY_SEGMENT_FINISHED``)."""
    obj = decoded_object(decoded, enc)
    value = obj["value"]
    if obj["record_type"] == "transaction_metadata" and value is not None:
        status = value.get("transaction_status")
        value = {**value, "transaction_status": TRANSACTION_STATES.get(status, status)}
    if isinstance(decoded, RemoteLogMetadataRecord):
        value = {k: (_STATE_NAMES[k].get(v, v) if k in _STATE_NAMES else v) for k, v in value.items()}
    parts = [obj["record_type"]]
    if obj["key"] is not None:
        parts.append("key=" + _TEXT_JSON(obj["key"]))
    if value is None:
        parts.append("value=tombstone")
    else:
        parts.append(f"value(v{obj['value_version']})=" + _TEXT_JSON(value))
    return " ".join(parts)
