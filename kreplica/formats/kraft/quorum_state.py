"""``quorum-state`` (kafka-formats spec §8.7): a KRaft voter's election state.

One file inside ``__cluster_metadata-0``: the leader and epoch this node last knew, whom it
voted for and (v0) the voter set. Kafka's class: ``FileQuorumStateStore`` in ``raft/src/main/
java/org/apache/kafka/raft/FileQuorumStateStore.java`` with the generated converter of
``raft/src/main/resources/common/message/QuorumStateData.json`` (apache/kafka trunk 2024-10
baseline).

Layout (one line of UTF-8 JSON)::

    QuorumState => {"data_version": 0|1, <QuorumStateData fields in camelCase>}
    v0 fields   => clusterId, leaderId, leaderEpoch, votedId, appliedOffset,
                   currentVoters: [{"voterId": N}, ...]
    v1 fields   => leaderId, leaderEpoch, votedId, votedDirectoryId

No checksum; written via ``quorum-state.tmp`` and an atomic rename.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from kreplica.formats._java import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    check_utf8,
    jackson_read_value,
    java_lines,
    java_parse,
)
from kreplica.formats.errors import Malformed, UnsupportedVersion
from kreplica.formats.uuid import format_uuid, parse_uuid

QUORUM_STATE_VERSIONS = (0, 1)       # FileQuorumStateStore LOWEST/HIGHEST_SUPPORTED_VERSION
QUORUM_STATE_FILE = "quorum-state"


@dataclass(frozen=True, slots=True)
class QuorumState:
    """KRaft ``quorum-state`` (§8.7). v0 carries ``cluster_id``, ``applied_offset`` and
    ``current_voters``; v1 drops them (``None``, 0 and ``()`` here) and adds
    ``voted_directory_id`` (canonical text). Ids and epochs default to -1 in Kafka."""

    data_version: int
    leader_id: int
    leader_epoch: int
    voted_id: int
    applied_offset: int
    current_voters: tuple[int, ...]
    cluster_id: str | None
    voted_directory_id: str | None = None


def _quorum_error(path: str, reason: str, field_name: str | None = None) -> Malformed:
    # IOExceptions (JSON syntax, shape) are wrapped in UncheckedIOException with this text.
    return Malformed(f"Error while reading the Quorum status from the file {path}: {reason}",
                     path=path, position=0, field=field_name)


def _converter_error(path: str, reason: str, field_name: str | None = None) -> Malformed:
    # The generated QuorumStateDataJsonConverter throws RuntimeExceptions, which are not wrapped.
    return Malformed(reason, path=path, position=0, field=field_name)


def _json_short_value(node: object) -> int:
    # JsonNode.shortValue(): numbers narrowed as Java casts them; any other node gives 0.
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        return 0
    if isinstance(node, float):
        if math.isnan(node):
            as_int = 0
        elif math.isinf(node):  # a literal past double's range parses as infinity, which Java casts to the int limit
            as_int = INT32_MAX if node > 0 else INT32_MIN
        else:
            as_int = max(INT32_MIN, min(INT32_MAX, int(node)))
    else:
        as_int = node
    return ((as_int + 2**15) % 2**16) - 2**15


def _json_int(obj: dict, key: str, lo: int, hi: int, path: str, version: int) -> int:
    if key not in obj:
        raise _converter_error(path, f"QuorumStateData: unable to locate field '{key}', which is "
                                  f"mandatory in version {version}", key)
    node = obj[key]
    if isinstance(node, int) and not isinstance(node, bool) and lo <= node <= hi:
        return node
    if isinstance(node, str):
        try:
            return java_parse(node, lo, hi)
        except ValueError:
            raise _converter_error(path, f"QuorumStateData: failed to convert string to integer "
                                      f"for field '{key}'", key) from None
    raise _converter_error(path, f"QuorumStateData expected an integer for field '{key}'", key)


def _json_text(obj: dict, key: str, path: str, version: int) -> str:
    if key not in obj:
        raise _converter_error(path, f"QuorumStateData: unable to locate field '{key}', which is "
                                  f"mandatory in version {version}", key)
    node = obj[key]
    if not isinstance(node, str):
        raise _converter_error(path, f"QuorumStateData expected a string type for field '{key}'", key)
    return node


def parse_quorum_state(content: bytes, *, path: str) -> QuorumState:
    """Read ``quorum-state`` as ``FileQuorumStateStore.readStateFromFile`` does.

    Only the first line is read (UTF-8, strictly). Errors raise :class:`Malformed` with
    Kafka's messages: "File ended prematurely." (empty file), "Deserialized node … is not an
    object node", "… does not have data_version field", "data_version (N) is not within the
    min (0) and max (1) supported version" (``data_version`` is read with ``shortValue()``, so
    a non-number counts as 0), then the generated ``QuorumStateDataJsonConverter``'s
    mandatory-field and type errors ("QuorumStateData: unable to locate field 'leaderId', which
    is mandatory in version 0"), which Kafka does not wrap.
    """
    check_utf8(content, path)
    first = next(java_lines(content), None)
    if first is None:
        raise Malformed("File ended prematurely. (java.io.EOFException)", path=path, position=0)
    try:
        node = jackson_read_value(first.text)
    except ValueError as exc:
        if first.text.strip(" \t\r\n") == "":
            node = None   # readTree("") gives a MissingNode
        else:
            raise _quorum_error(path, f"invalid JSON ({exc})") from None
    if not isinstance(node, dict):
        shown = "" if node is None else json.dumps(node)
        raise _quorum_error(path, f"Deserialized node {shown} is not an object node")
    if "data_version" not in node:
        raise _quorum_error(path, f"Deserialized node {json.dumps(node)} does not have data_version field",
                            "data_version")
    version = _json_short_value(node["data_version"])
    if version not in QUORUM_STATE_VERSIONS:
        raise UnsupportedVersion(f"data_version ({version}) is not within the min ({QUORUM_STATE_VERSIONS[0]}) "
                                 f"and max ({QUORUM_STATE_VERSIONS[-1]}) supported version",
                                 path=path, position=0, field="data_version")
    cluster_id = None
    applied_offset = 0
    voters: tuple[int, ...] = ()
    voted_directory_id = None
    if version == 0:
        cluster_id = _json_text(node, "clusterId", path, version)
    leader_id = _json_int(node, "leaderId", INT32_MIN, INT32_MAX, path, version)
    leader_epoch = _json_int(node, "leaderEpoch", INT32_MIN, INT32_MAX, path, version)
    voted_id = _json_int(node, "votedId", INT32_MIN, INT32_MAX, path, version)
    if version == 0:
        applied_offset = _json_int(node, "appliedOffset", INT64_MIN, INT64_MAX, path, version)
        if "currentVoters" not in node:
            raise _converter_error(path, "QuorumStateData: unable to locate field 'currentVoters', "
                                      "which is mandatory in version 0", "currentVoters")
        raw_voters = node["currentVoters"]
        if raw_voters is not None:
            if not isinstance(raw_voters, list):
                raise _converter_error(path, "QuorumStateData expected a JSON array for field 'currentVoters'",
                                    "currentVoters")
            collected = []
            for voter in raw_voters:
                if not isinstance(voter, dict):
                    raise _converter_error(path, "Voter expected a JSON object", "currentVoters")
                collected.append(_json_int(voter, "voterId", INT32_MIN, INT32_MAX, path, version))
            voters = tuple(collected)
    else:
        text = _json_text(node, "votedDirectoryId", path, version)
        try:
            voted_directory_id = format_uuid(parse_uuid(text))
        except Malformed as exc:
            raise _converter_error(path, f"java.lang.IllegalArgumentException: {exc.reason}",
                                   "votedDirectoryId") from exc
    return QuorumState(version, leader_id, leader_epoch, voted_id, applied_offset, voters,
                       cluster_id, voted_directory_id)
