"""Control batches: the one record a transaction marker batch holds, decoded once.

Source (apache/kafka 3.9): ``clients/src/main/java/org/apache/kafka/common/record/
ControlRecordType.java`` and ``EndTransactionMarker.java``. A control batch (attribute bit 5) holds
records whose key is ``ControlRecordType`` and, for ABORT (0) and COMMIT (1), whose value is an
``EndTransactionMarker``::

    Key   => Version => Int16, Type => Int16
    Value => Version => Int16, CoordinatorEpoch => Int32

The record's key and value are decoded by :mod:`kreplica.formats.log.default_records`
(``parse_control``); this module is the single place that reads the first record of a control
batch, so log loading, index verification, truncation and the partition model agree on what a
marker says and on why it cannot be read.
"""

from __future__ import annotations

from dataclasses import dataclass

from kreplica.formats.log import default_records
from kreplica.formats.log.batch import RecordBatch
from kreplica.formats.errors import FormatError

#: ``ControlRecordType`` names in snake_case, the words of every output schema (KRaft's control
#: records among them); any other code is Kafka's UNKNOWN
CONTROL_TYPE_NAMES = {0: "abort", 1: "commit", 2: "leader_change", 3: "snapshot_header", 4: "snapshot_footer",
                      5: "kraft_version", 6: "kraft_voters"}


@dataclass(frozen=True, slots=True)
class ControlMarker:
    """The first record of a control batch at ``position`` (``offset`` is the batch's base offset).

    ``control_type`` and ``coordinator_epoch`` are ``None`` where Kafka would throw reading them;
    ``key_is_null`` marks the record Kafka's ``ControlRecordType.parse`` fails on with a
    NullPointerException; ``error`` is why the record itself does not decode (``None`` if it does,
    empty when the batch holds no record after all).
    """

    position: int
    offset: int
    producer_id: int
    producer_epoch: int
    control_type: int | None
    coordinator_epoch: int | None
    key_is_null: bool = False
    error: str | None = None


def read_control_marker(buf, batch: RecordBatch) -> ControlMarker:
    """Decode the first record of the v2 control ``batch`` in ``buf``; never raises for bad bytes."""
    try:
        record = next(default_records.iter_records(buf, batch))
    except (FormatError, StopIteration) as exc:
        return ControlMarker(batch.position, batch.base_offset, batch.producer_id, batch.producer_epoch,
                             None, None, False, str(exc))
    return ControlMarker(batch.position, batch.base_offset, batch.producer_id, batch.producer_epoch,
                         record.control_type, record.coordinator_epoch, record.key is None)


def has_marker(batch: RecordBatch) -> bool:
    """Whether ``batch`` is a v2 control batch with records to read a marker from."""
    return batch.is_control and batch.magic >= 2 and bool(batch.count)
