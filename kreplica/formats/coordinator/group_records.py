"""The group coordinator's ``__consumer_offsets`` records: key and value schemas of every type.

Sources (apache/kafka): ``group-coordinator/src/main/resources/common/message/*.json`` (trunk
``1eb76443`` and the 4.0 release, which added ``ConsumerGroupRegularExpression``),
``group-coordinator/.../GroupCoordinatorRecordSerde.java`` (record type → schemas), the 4.4.0
release's schemas for the tagged fields 4.x added (``OffsetCommitValue.TopicId``,
``ConsumerGroupMetadataValue.MetadataHash``, ``ConsumerGroupTargetAssignmentMetadataValue.
AssignmentTimestamp``, ``ConsumerGroupCurrentMemberAssignmentValue``'s ``AssignmentEpochs``),
``core/src/main/scala/kafka/coordinator/group/GroupMetadataManager.scala`` (the 0.9–3.x writer:
offset key v0/v1, offset value v0–v3, group key v2, group value v0–v3, the same bytes);
``../shared/specs/kafka-formats.md`` §11.

A key's leading int16 is the *record type* (0 and 1: offset commit, 2: classic group metadata,
3–8 and 16: the KIP-848 consumer group, 9–15: the KIP-932 share group, 17 and 19–23: the
KIP-1071 streams group, as the 4.4 jars hold them: ``CoordinatorRecordType`` has no 18, the
streams group's partition metadata, which was dropped before release); key messages are never
flexible. A value's leading int16 is its schema version. The classic values are flexible from
version 4 (Kafka 3.x, KIP-915); the new protocol's values are flexible from version 0.
"""

from __future__ import annotations

from kreplica.formats.generated_messages import F, Message

#: field lists several schemas repeat, in Kafka's order
_GROUP_KEY = (F('group_id', 'string'),)
_MEMBER_KEY = (F('group_id', 'string'), F('member_id', 'string'))
_TOPIC_PARTITIONS = (F('topic_id', 'uuid'), F('partitions', '[]int32'))
#: a consumer group member's partitions, with the epoch each was assigned in (4.x, tagged)
_ASSIGNED_PARTITIONS = (*_TOPIC_PARTITIONS, F('assignment_epochs', '[]int32', tag=0, nullable=True))
_TOPIC_METADATA = (
    F('topic_id', 'uuid'),
    F('topic_name', 'string'),
    F('num_partitions', 'int32'),
    F('partition_metadata', '[]', fields=(F('partition', 'int32'), F('racks', '[]string'))),
)

OffsetCommitKey = Message('OffsetCommitKey', 0, None, (
    F('group', 'string'),
    F('topic', 'string'),
    F('partition', 'int32'),
))

OffsetCommitValue = Message('OffsetCommitValue', 4, 4, (
    F('offset', 'int64'),
    F('leader_epoch', 'int32', since=3, default=-1),
    F('metadata', 'string'),
    F('commit_timestamp', 'int64'),
    F('expire_timestamp', 'int64', since=1, until=1, default=-1),
    F('topic_id', 'uuid', since=4, tag=0),
))

GroupMetadataKey = Message('GroupMetadataKey', 0, None, (
    F('group', 'string'),
))

GroupMetadataValue = Message('GroupMetadataValue', 4, 4, (
    F('protocol_type', 'string'),
    F('generation', 'int32'),
    F('protocol', 'string', nullable=True),
    F('leader', 'string', nullable=True),
    F('current_state_timestamp', 'int64', since=2, default=-1),
    F('members', '[]', fields=(
        F('member_id', 'string'),
        F('group_instance_id', 'string', since=3, nullable=True),
        F('client_id', 'string'),
        F('client_host', 'string'),
        F('rebalance_timeout', 'int32', since=1, default=-1),
        F('session_timeout', 'int32'),
        F('subscription', 'bytes'),
        F('assignment', 'bytes'),
    )),
))

ConsumerGroupMetadataKey = Message('ConsumerGroupMetadataKey', 0, None, _GROUP_KEY)

ConsumerGroupMetadataValue = Message('ConsumerGroupMetadataValue', 0, 0, (
    F('epoch', 'int32'),
    F('metadata_hash', 'int64', tag=0, default=0),
))

ConsumerGroupPartitionMetadataKey = Message('ConsumerGroupPartitionMetadataKey', 0, None, _GROUP_KEY)

ConsumerGroupPartitionMetadataValue = Message('ConsumerGroupPartitionMetadataValue', 0, 0, (
    F('topics', '[]', fields=_TOPIC_METADATA),
))

ConsumerGroupMemberMetadataKey = Message('ConsumerGroupMemberMetadataKey', 0, None, _MEMBER_KEY)

ConsumerGroupMemberMetadataValue = Message('ConsumerGroupMemberMetadataValue', 0, 0, (
    F('instance_id', 'string', nullable=True),
    F('rack_id', 'string', nullable=True),
    F('client_id', 'string'),
    F('client_host', 'string'),
    F('subscribed_topic_names', '[]string'),
    F('subscribed_topic_regex', 'string', nullable=True),
    F('rebalance_timeout_ms', 'int32', default=-1),
    F('server_assignor', 'string', nullable=True),
    F('classic_member_metadata', 'struct', tag=0, nullable=True, fields=(
        F('session_timeout_ms', 'int32'),
        F('supported_protocols', '[]', fields=(
            F('name', 'string'),
            F('metadata', 'bytes'),
        )),
    )),
))

ConsumerGroupTargetAssignmentMetadataKey = Message('ConsumerGroupTargetAssignmentMetadataKey', 0, None, _GROUP_KEY)

ConsumerGroupTargetAssignmentMetadataValue = Message('ConsumerGroupTargetAssignmentMetadataValue', 0, 0, (
    F('assignment_epoch', 'int32'),
    F('assignment_timestamp', 'int64', tag=0, default=0),
))

ConsumerGroupTargetAssignmentMemberKey = Message('ConsumerGroupTargetAssignmentMemberKey', 0, None, _MEMBER_KEY)

ConsumerGroupTargetAssignmentMemberValue = Message('ConsumerGroupTargetAssignmentMemberValue', 0, 0, (
    F('topic_partitions', '[]', fields=_TOPIC_PARTITIONS),
))

ConsumerGroupCurrentMemberAssignmentKey = Message('ConsumerGroupCurrentMemberAssignmentKey', 0, None, _MEMBER_KEY)

ConsumerGroupCurrentMemberAssignmentValue = Message('ConsumerGroupCurrentMemberAssignmentValue', 0, 0, (
    F('member_epoch', 'int32'),
    F('previous_member_epoch', 'int32'),
    F('state', 'int8'),
    F('assigned_partitions', '[]', fields=_ASSIGNED_PARTITIONS),
    F('partitions_pending_revocation', '[]', fields=_ASSIGNED_PARTITIONS),
))

ShareGroupPartitionMetadataKey = Message('ShareGroupPartitionMetadataKey', 0, None, _GROUP_KEY)

ShareGroupPartitionMetadataValue = Message('ShareGroupPartitionMetadataValue', 0, 0, (
    F('topics', '[]', fields=_TOPIC_METADATA),
))

ShareGroupMemberMetadataKey = Message('ShareGroupMemberMetadataKey', 0, None, _MEMBER_KEY)

ShareGroupMemberMetadataValue = Message('ShareGroupMemberMetadataValue', 0, 0, (
    F('rack_id', 'string', nullable=True),
    F('client_id', 'string'),
    F('client_host', 'string'),
    F('subscribed_topic_names', '[]string'),
))

ShareGroupMetadataKey = Message('ShareGroupMetadataKey', 0, None, _GROUP_KEY)

# share groups' records as the 4.4 jars hold them (reshaped at version 0 before KIP-932 became
# generally available: the metadata hash of KIP-1101, the initializing topics)
ShareGroupMetadataValue = Message('ShareGroupMetadataValue', 0, 0, (
    F('epoch', 'int32'),
    F('metadata_hash', 'int64'),
))

ShareGroupTargetAssignmentMetadataKey = Message('ShareGroupTargetAssignmentMetadataKey', 0, None, _GROUP_KEY)

ShareGroupTargetAssignmentMetadataValue = Message('ShareGroupTargetAssignmentMetadataValue', 0, 0, (
    F('assignment_epoch', 'int32'),
    F('assignment_timestamp', 'int64', tag=0, default=0),
))

ShareGroupTargetAssignmentMemberKey = Message('ShareGroupTargetAssignmentMemberKey', 0, None, _MEMBER_KEY)

ShareGroupTargetAssignmentMemberValue = Message('ShareGroupTargetAssignmentMemberValue', 0, 0, (
    F('topic_partitions', '[]', fields=_TOPIC_PARTITIONS),
))

ShareGroupCurrentMemberAssignmentKey = Message('ShareGroupCurrentMemberAssignmentKey', 0, None, _MEMBER_KEY)

ShareGroupCurrentMemberAssignmentValue = Message('ShareGroupCurrentMemberAssignmentValue', 0, 0, (
    F('member_epoch', 'int32'),
    F('previous_member_epoch', 'int32'),
    F('state', 'int8'),
    F('assigned_partitions', '[]', fields=_TOPIC_PARTITIONS),
))

ShareGroupStatePartitionMetadataKey = Message('ShareGroupStatePartitionMetadataKey', 0, None, _GROUP_KEY)

ShareGroupStatePartitionMetadataValue = Message('ShareGroupStatePartitionMetadataValue', 0, 0, (
    F('initializing_topics', '[]', fields=(
        F('topic_id', 'uuid'),
        F('topic_name', 'string'),
        F('partitions', '[]int32'),
    )),
    F('initialized_topics', '[]', fields=(
        F('topic_id', 'uuid'),
        F('topic_name', 'string'),
        F('partitions', '[]int32'),
    )),
    F('deleting_topics', '[]', fields=(
        F('topic_id', 'uuid'),
        F('topic_name', 'string'),
    )),
))

ConsumerGroupRegularExpressionKey = Message('ConsumerGroupRegularExpressionKey', 0, None, (
    F('group_id', 'string'),
    F('regular_expression', 'string'),
))

ConsumerGroupRegularExpressionValue = Message('ConsumerGroupRegularExpressionValue', 0, 0, (
    F('topics', '[]string'),
    F('version', 'int64'),
    F('timestamp', 'int64'),
))

#: a streams group's tasks of one subtopology: the partitions of its source topics they read
_TASK_IDS = (F('subtopology_id', 'string'), F('partitions', '[]int32'))
#: the same in a member's current assignment, with the epoch each task was assigned in (tagged)
_TASK_IDS_WITH_EPOCHS = (*_TASK_IDS, F('assignment_epochs', '[]int32', tag=0, nullable=True))
_KEY_VALUE = (F('key', 'string'), F('value', 'string'))
#: an internal topic a subtopology needs (changelog or repartition topic)
_TOPIC_INFO = (
    F('name', 'string'),
    F('partitions', 'int32'),
    F('replication_factor', 'int16'),
    F('topic_configs', '[]', fields=_KEY_VALUE),
)

StreamsGroupMetadataKey = Message('StreamsGroupMetadataKey', 0, None, _GROUP_KEY)

StreamsGroupMetadataValue = Message('StreamsGroupMetadataValue', 0, 0, (
    F('epoch', 'int32'),
    F('metadata_hash', 'int64'),
    F('validated_topology_epoch', 'int32', tag=0, default=-1),
    F('last_assignment_configs', '[]', tag=1, nullable=True, fields=_KEY_VALUE),
    F('stored_description_topology_epoch', 'int32', tag=2, default=-1),
    F('failed_description_topology_epoch', 'int32', tag=3, default=-1),
))

StreamsGroupMemberMetadataKey = Message('StreamsGroupMemberMetadataKey', 0, None, _MEMBER_KEY)

StreamsGroupMemberMetadataValue = Message('StreamsGroupMemberMetadataValue', 0, 0, (
    F('instance_id', 'string', nullable=True),
    F('rack_id', 'string', nullable=True),
    F('client_id', 'string'),
    F('client_host', 'string'),
    F('rebalance_timeout_ms', 'int32', default=-1),
    F('topology_epoch', 'int32'),
    F('process_id', 'string'),
    F('user_endpoint', 'struct', nullable=True, fields=(F('host', 'string'), F('port', 'uint16'))),
    F('client_tags', '[]', fields=_KEY_VALUE),
))

StreamsGroupTargetAssignmentMetadataKey = Message('StreamsGroupTargetAssignmentMetadataKey', 0, None, _GROUP_KEY)

StreamsGroupTargetAssignmentMetadataValue = Message('StreamsGroupTargetAssignmentMetadataValue', 0, 0, (
    F('assignment_epoch', 'int32'),
    F('assignment_timestamp', 'int64', tag=0, default=0),
))

StreamsGroupTargetAssignmentMemberKey = Message('StreamsGroupTargetAssignmentMemberKey', 0, None, _MEMBER_KEY)

StreamsGroupTargetAssignmentMemberValue = Message('StreamsGroupTargetAssignmentMemberValue', 0, 0, (
    F('active_tasks', '[]', fields=_TASK_IDS),
    F('standby_tasks', '[]', fields=_TASK_IDS),
    F('warmup_tasks', '[]', fields=_TASK_IDS),
))

StreamsGroupCurrentMemberAssignmentKey = Message('StreamsGroupCurrentMemberAssignmentKey', 0, None, _MEMBER_KEY)

StreamsGroupCurrentMemberAssignmentValue = Message('StreamsGroupCurrentMemberAssignmentValue', 0, 0, (
    F('member_epoch', 'int32'),
    F('previous_member_epoch', 'int32'),
    F('state', 'int8'),
    F('active_tasks', '[]', fields=_TASK_IDS_WITH_EPOCHS),
    F('standby_tasks', '[]', fields=_TASK_IDS_WITH_EPOCHS),
    F('warmup_tasks', '[]', fields=_TASK_IDS_WITH_EPOCHS),
    F('active_tasks_pending_revocation', '[]', fields=_TASK_IDS_WITH_EPOCHS),
    F('standby_tasks_pending_revocation', '[]', fields=_TASK_IDS_WITH_EPOCHS),
    F('warmup_tasks_pending_revocation', '[]', fields=_TASK_IDS_WITH_EPOCHS),
))

StreamsGroupTopologyKey = Message('StreamsGroupTopologyKey', 0, None, _GROUP_KEY)

StreamsGroupTopologyValue = Message('StreamsGroupTopologyValue', 0, 0, (
    F('epoch', 'int32'),
    F('subtopologies', '[]', fields=(
        F('subtopology_id', 'string'),
        F('source_topics', '[]string'),
        F('source_topic_regex', '[]string'),
        F('state_changelog_topics', '[]', fields=_TOPIC_INFO),
        F('repartition_sink_topics', '[]string'),
        F('repartition_source_topics', '[]', fields=_TOPIC_INFO),
        F('copartition_groups', '[]', fields=(
            F('source_topics', '[]int16'),
            F('source_topic_regex', '[]int16'),
            F('repartition_source_topics', '[]int16'),
        )),
    )),
))

OFFSET_COMMIT_TYPES = (0, 1)
GROUP_METADATA = 2

#: record types no current Kafka knows, kept to read the logs of the releases that wrote them
RETIRED_TYPES = {9: "4.0 and 4.1 (KIP-932's early access); 4.2's CoordinatorRecordType dropped it"}

#: record type -> (short name used in output, key schema, value schema)
RECORD_TYPES: dict[int, tuple[str, Message, Message]] = {
    0: ("offset_commit", OffsetCommitKey, OffsetCommitValue),
    1: ("offset_commit", OffsetCommitKey, OffsetCommitValue),
    2: ("group_metadata", GroupMetadataKey, GroupMetadataValue),
    3: ("consumer_group_metadata", ConsumerGroupMetadataKey, ConsumerGroupMetadataValue),
    4: ("consumer_group_partition_metadata", ConsumerGroupPartitionMetadataKey, ConsumerGroupPartitionMetadataValue),
    5: ("consumer_group_member_metadata", ConsumerGroupMemberMetadataKey, ConsumerGroupMemberMetadataValue),
    6: ("consumer_group_target_assignment_metadata", ConsumerGroupTargetAssignmentMetadataKey,
        ConsumerGroupTargetAssignmentMetadataValue),
    7: ("consumer_group_target_assignment_member", ConsumerGroupTargetAssignmentMemberKey,
        ConsumerGroupTargetAssignmentMemberValue),
    8: ("consumer_group_current_member_assignment", ConsumerGroupCurrentMemberAssignmentKey,
        ConsumerGroupCurrentMemberAssignmentValue),
    9: ("share_group_partition_metadata", ShareGroupPartitionMetadataKey, ShareGroupPartitionMetadataValue),
    10: ("share_group_member_metadata", ShareGroupMemberMetadataKey, ShareGroupMemberMetadataValue),
    11: ("share_group_metadata", ShareGroupMetadataKey, ShareGroupMetadataValue),
    12: ("share_group_target_assignment_metadata", ShareGroupTargetAssignmentMetadataKey,
         ShareGroupTargetAssignmentMetadataValue),
    13: ("share_group_target_assignment_member", ShareGroupTargetAssignmentMemberKey,
         ShareGroupTargetAssignmentMemberValue),
    14: ("share_group_current_member_assignment", ShareGroupCurrentMemberAssignmentKey,
         ShareGroupCurrentMemberAssignmentValue),
    15: ("share_group_state_partition_metadata", ShareGroupStatePartitionMetadataKey,
         ShareGroupStatePartitionMetadataValue),
    16: ("consumer_group_regular_expression", ConsumerGroupRegularExpressionKey,
         ConsumerGroupRegularExpressionValue),
    17: ("streams_group_metadata", StreamsGroupMetadataKey, StreamsGroupMetadataValue),
    19: ("streams_group_member_metadata", StreamsGroupMemberMetadataKey, StreamsGroupMemberMetadataValue),
    20: ("streams_group_target_assignment_metadata", StreamsGroupTargetAssignmentMetadataKey,
         StreamsGroupTargetAssignmentMetadataValue),
    21: ("streams_group_target_assignment_member", StreamsGroupTargetAssignmentMemberKey,
         StreamsGroupTargetAssignmentMemberValue),
    22: ("streams_group_current_member_assignment", StreamsGroupCurrentMemberAssignmentKey,
         StreamsGroupCurrentMemberAssignmentValue),
    23: ("streams_group_topology", StreamsGroupTopologyKey, StreamsGroupTopologyValue),
}
