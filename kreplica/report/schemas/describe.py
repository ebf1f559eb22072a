"""Words for the raw codes the formats layer yields (codec ids, timestamp types, control types,
the ACL and SCRAM enums of KRaft's metadata).

Decoding keeps raw ints; turning them into the strings of the output schemas happens here, once
(the fleet's Parquet tables take the same words from the same name tables, in
:mod:`kreplica.pipeline.tables.schemas`). Unknown codes stay ints so nothing is hidden.
"""

from __future__ import annotations

from kreplica.formats.codecs import CODEC_NAMES
from kreplica.formats.log.batch import TIMESTAMP_TYPE_NAMES
from kreplica.formats.log.control_marker import CONTROL_TYPE_NAMES

TIMESTAMP_TYPES = TIMESTAMP_TYPE_NAMES
CONTROL_TYPES = CONTROL_TYPE_NAMES


def compression(codec: int) -> str | int:
    """``none``, ``gzip``, ``snappy``, ``lz4``, ``zstd``, or the raw id of an undefined codec."""
    return CODEC_NAMES.get(codec, codec)


def timestamp_type(code: int) -> str:
    return TIMESTAMP_TYPES.get(code, "create_time")


def control_type(code: int | None) -> str | None:
    """``commit``/``abort`` for transaction markers, other known names, ``unknown`` otherwise."""
    if code is None:
        return None
    return CONTROL_TYPES.get(code, "unknown")


#: Kafka's ``ResourceType``, ``PatternType``, ``AclOperation`` and ``AclPermissionType`` codes
#: (``clients/src/main/java/org/apache/kafka/common/{resource,acl}/``) and their enum names.
ACL_RESOURCE_TYPES = {0: "UNKNOWN", 1: "ANY", 2: "TOPIC", 3: "GROUP", 4: "CLUSTER", 5: "TRANSACTIONAL_ID",
                      6: "DELEGATION_TOKEN", 7: "USER"}
ACL_PATTERN_TYPES = {0: "UNKNOWN", 1: "ANY", 2: "MATCH", 3: "LITERAL", 4: "PREFIXED"}
ACL_OPERATIONS = {0: "UNKNOWN", 1: "ANY", 2: "ALL", 3: "READ", 4: "WRITE", 5: "CREATE", 6: "DELETE", 7: "ALTER",
                  8: "DESCRIBE", 9: "CLUSTER_ACTION", 10: "DESCRIBE_CONFIGS", 11: "ALTER_CONFIGS",
                  12: "IDEMPOTENT_WRITE", 13: "CREATE_TOKENS", 14: "DESCRIBE_TOKENS"}
ACL_PERMISSION_TYPES = {0: "UNKNOWN", 1: "ANY", 2: "DENY", 3: "ALLOW"}
#: ``ScramMechanism`` type codes and their ``mechanismName``s (as ``kafka-configs`` shows them).
SCRAM_MECHANISMS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}


def acl_field(table: dict[int, str], code: int) -> str | int:
    """The enum name of an ACL code from ``table``; a code Kafka does not define stays the int."""
    return table.get(code, code)


def scram_mechanism(code: int) -> str | int:
    """``SCRAM-SHA-256``, ``SCRAM-SHA-512``, or the raw code of another mechanism."""
    return SCRAM_MECHANISMS.get(code, code)
