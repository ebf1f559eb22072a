"""A topic's effective config value, resolved as the controller resolves it, and the two values
the replication rules read from it.

Kafka's controller looks a topic config up in the topic's own overrides, then the dynamic config
of the controller's own node, then the cluster-wide dynamic default (``<default>``), then its
static ``server.properties`` (KRaft: ``ConfigurationControlManager.getTopicConfig`` over
``KafkaConfigSchema.resolveEffectiveTopicConfig``; ZooKeeper: the controller's current
``KafkaConfig.originals`` under the topic's overrides). Static files are not evidence here, so
an unset value is Kafka's default. Every reader of ``min.insync.replicas`` and
``unclean.leader.election.enable`` (the health lists, the election rules) comes here.
"""

from __future__ import annotations

from collections.abc import Mapping

#: The entity name of cluster-wide broker defaults (ZooKeeper ``/config/brokers/<default>``;
#: KRaft writes an empty ResourceName, normalised to this).
DEFAULT_BROKER_ENTITY = "<default>"
MIN_INSYNC_REPLICAS = "min.insync.replicas"
UNCLEAN_ENABLE = "unclean.leader.election.enable"
#: ``TopicConfig.MIN_IN_SYNC_REPLICAS`` default (``ServerLogConfigs.MIN_IN_SYNC_REPLICAS_DEFAULT``).
DEFAULT_MIN_INSYNC_REPLICAS = 1


def effective_topic_config(name: str, topic_config: Mapping[str, str],
                           broker_configs: Mapping[str, Mapping[str, str]], controller: int | None) -> str | None:
    """``name`` for a topic: its override, the controller node's dynamic value, the cluster default."""
    if name in topic_config:
        return topic_config[name]
    if controller is not None:
        own = broker_configs.get(str(controller), {})
        if name in own:
            return own[name]
    return broker_configs.get(DEFAULT_BROKER_ENTITY, {}).get(name)


def min_insync_replicas(topic_config: Mapping[str, str], broker_configs: Mapping[str, Mapping[str, str]],
                        controller: int | None) -> int:
    """The topic's ``min.insync.replicas`` (Kafka's default 1 when unset or not an int: the
    controller never stores a value its ConfigDef refuses)."""
    raw = effective_topic_config(MIN_INSYNC_REPLICAS, topic_config, broker_configs, controller)
    try:
        return int(raw) if raw is not None else DEFAULT_MIN_INSYNC_REPLICAS
    except ValueError:
        return DEFAULT_MIN_INSYNC_REPLICAS
