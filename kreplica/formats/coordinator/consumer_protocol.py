"""The ``consumer`` protocol's subscription and assignment bytes inside classic group metadata.

Sources (apache/kafka): ``clients/src/main/resources/common/message/ConsumerProtocol
{Subscription,Assignment}.json``, ``clients/.../consumer/internals/ConsumerProtocol.java``.

A member's ``subscription`` and ``assignment`` in ``GroupMetadataValue`` are opaque to the
coordinator; for protocol type ``consumer`` they are an int16 version and a non-flexible
message. Like ``ConsumerProtocol.deserializeSubscription``, a version above the highest known
is read with the highest known layout (new versions may only append fields).
"""

from __future__ import annotations

import struct

from kreplica.formats.errors import Malformed, Truncated
from kreplica.formats.generated_messages import F, Message, decode

CONSUMER_PROTOCOL_TYPE = "consumer"

_TOPIC_PARTITIONS = (F("topic", "string"), F("partitions", "[]int32"))

ConsumerProtocolSubscription = Message("ConsumerProtocolSubscription", 3, None, (
    F("topics", "[]string"),
    F("user_data", "bytes", nullable=True),
    F("owned_partitions", "[]", since=1, fields=_TOPIC_PARTITIONS),
    F("generation_id", "int32", since=2, default=-1),
    F("rack_id", "string", since=3, nullable=True),
))

ConsumerProtocolAssignment = Message("ConsumerProtocolAssignment", 3, None, (
    F("assigned_partitions", "[]", fields=_TOPIC_PARTITIONS),
    F("user_data", "bytes", nullable=True),
))

_VERSION = struct.Struct(">h")


def _decode(message: Message, raw: bytes) -> dict:
    if len(raw) < _VERSION.size:
        raise Truncated(f"{message.name} needs a 2-byte version, has {len(raw)} bytes", field="version")
    (version,) = _VERSION.unpack_from(raw)
    if version < 0:
        raise Malformed(f"{message.name} version {version} is negative", field="version")
    data, _end = decode(message, min(version, message.max_version), raw, start=_VERSION.size)
    data["version"] = version
    return data


def decode_subscription(raw: bytes) -> dict:
    """A member's subscription bytes (:class:`~kreplica.formats.errors.FormatError` if not one)."""
    return _decode(ConsumerProtocolSubscription, raw)


def subscription_topics(raw: bytes) -> tuple[str, ...]:
    """The topics of a subscription read as the group coordinator reads them
    (``ConsumerProtocol.deserializeVersion`` then ``deserializeSubscription(buffer, 0)``): any
    version from 0 with the version-0 layout, a prefix of every later one; what follows it is
    not read. :class:`~kreplica.formats.errors.FormatError` when that prefix does not read."""
    if len(raw) < _VERSION.size:
        raise Truncated(f"ConsumerProtocolSubscription needs a 2-byte version, has {len(raw)} bytes", field="version")
    (version,) = _VERSION.unpack_from(raw)
    if version < 0:
        raise Malformed(f"Unsupported subscription version: {version}", field="version")
    data, _end = decode(ConsumerProtocolSubscription, 0, raw, start=_VERSION.size)
    return tuple(data["topics"])


def decode_assignment(raw: bytes) -> dict:
    """A member's assignment bytes; empty bytes (a member not yet assigned) is no assignment."""
    if not raw:
        return {"version": None, "assigned_partitions": (), "user_data": None}
    return _decode(ConsumerProtocolAssignment, raw)
