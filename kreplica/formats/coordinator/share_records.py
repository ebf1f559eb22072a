"""The share coordinator's ``__share_group_state`` records (KIP-932, Kafka 4.0+).

Sources (apache/kafka): ``share-coordinator/src/main/resources/common/message/
Share{Snapshot,Update}{Key,Value}.json``, ``share-coordinator/.../ShareCoordinatorRecordSerde.java``
(type 0: a snapshot of a share-partition's state, type 1: an update applied on top of it), as
the 4.4 jars hold them: share groups' records were reshaped at version 0 before KIP-932 became
generally available (an int32 snapshot epoch, the create and write timestamps, the tagged
delivery-complete count), and these are the layouts current Kafka writes, checked against
``kafka-dump-log --share-group-state-decoder`` on a real 4.4 share group.
"""

from __future__ import annotations

from kreplica.formats.generated_messages import F, Message

#: the key of both record types: a share-partition of a group
_SHARE_PARTITION_KEY = (F('group_id', 'string'), F('topic_id', 'uuid'), F('partition', 'int32'))
#: a run of offsets in one delivery state
_STATE_BATCH = (F('first_offset', 'int64', until=0), F('last_offset', 'int64', until=0),
                F('delivery_state', 'int8', until=0), F('delivery_count', 'int16', until=0))

ShareSnapshotKey = Message('ShareSnapshotKey', 0, None, _SHARE_PARTITION_KEY)

ShareSnapshotValue = Message('ShareSnapshotValue', 0, 0, (
    F('snapshot_epoch', 'int32', until=0),
    F('state_epoch', 'int32'),
    F('leader_epoch', 'int32'),
    F('start_offset', 'int64', until=0),
    F('delivery_complete_count', 'int32', tag=0, default=-1),
    F('create_timestamp', 'int64'),
    F('write_timestamp', 'int64'),
    F('state_batches', '[]', until=0, fields=_STATE_BATCH),
))

ShareUpdateKey = Message('ShareUpdateKey', 0, None, _SHARE_PARTITION_KEY)

ShareUpdateValue = Message('ShareUpdateValue', 0, 0, (
    F('snapshot_epoch', 'int32', until=0),
    F('leader_epoch', 'int32'),
    F('start_offset', 'int64', until=0),
    F('delivery_complete_count', 'int32', tag=0, default=-1),
    F('state_batches', '[]', until=0, fields=_STATE_BATCH),
))

#: record type -> (short name used in output, key schema, value schema)
RECORD_TYPES: dict[int, tuple[str, Message, Message]] = {
    0: ("share_snapshot", ShareSnapshotKey, ShareSnapshotValue),
    1: ("share_update", ShareUpdateKey, ShareUpdateValue),
}
