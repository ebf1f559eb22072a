"""The transaction coordinator's ``__transaction_state`` records.

Sources (apache/kafka): ``transaction-coordinator/src/main/resources/common/message/
TransactionLog{Key,Value}.json``, ``core/src/main/scala/kafka/coordinator/transaction/
TransactionLog.scala`` (key version 0, value v0 since 0.11, v1 flexible with KIP-890's tagged
previous/next producer ids and client transaction version), ``TransactionState.java`` (the
status ids), the 4.4.0 release's schema (the tagged ``NextProducerEpoch``);
``../shared/specs/kafka-formats.md`` §11.
"""

from __future__ import annotations

from kreplica.formats.generated_messages import F, Message

TransactionLogKey = Message('TransactionLogKey', 0, None, (
    F('transactional_id', 'string'),
))

TransactionLogValue = Message('TransactionLogValue', 1, 1, (
    F('producer_id', 'int64'),
    F('previous_producer_id', 'int64', since=1, tag=0, default=-1),
    F('next_producer_id', 'int64', since=1, tag=1, default=-1),
    F('producer_epoch', 'int16'),
    # the epoch that goes with next_producer_id (tagged, in the 4.4 release's schema)
    F('next_producer_epoch', 'int16', since=1, tag=3, default=-1),
    F('transaction_timeout_ms', 'int32'),
    F('transaction_status', 'int8'),
    F('transaction_partitions', '[]', nullable=True, fields=(
        F('topic', 'string'),
        F('partition_ids', '[]int32'),
    )),
    F('transaction_last_update_timestamp_ms', 'int64'),
    F('transaction_start_timestamp_ms', 'int64'),
    F('client_transaction_version', 'int16', since=1, tag=2, default=0),
))

#: TransactionStatus id -> Kafka's name of the state (``TransactionState.java``).
TRANSACTION_STATES = {
    0: "Empty", 1: "Ongoing", 2: "PrepareCommit", 3: "PrepareAbort", 4: "CompleteCommit",
    5: "CompleteAbort", 6: "Dead", 7: "PrepareEpochFence",
}

#: record type -> (short name used in output, key schema, value schema)
RECORD_TYPES: dict[int, tuple[str, Message, Message]] = {
    0: ("transaction_metadata", TransactionLogKey, TransactionLogValue),
}
