"""partition.metadata, meta.properties, .kafka_cleanshutdown, quorum-state and Kafka UUID text
(spec §1.3, §8.4-§8.7): TV14 byte-exact, and each of Kafka's rejection rules as its own case."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kreplica.formats.logdir.clean_shutdown import CleanShutdown, parse_clean_shutdown
from kreplica.formats.logdir.meta_properties import (
    MetaProperties,
    build_meta_properties,
    parse_java_properties,
    parse_meta_properties,
)
from kreplica.formats.logdir.partition_metadata import PartitionMetadata, build_partition_metadata, parse_partition_metadata
from kreplica.formats.kraft.quorum_state import QuorumState, parse_quorum_state
from kreplica.formats.errors import FormatError, Malformed, UnsupportedVersion
from kreplica.formats.uuid import (
    ONE_UUID,
    ZERO_UUID,
    format_uuid,
    is_reserved_directory_id,
    parse_uuid,
)

# TV14 (spec §15), quoted.
TV14_PARTITION_METADATA = b"version: 0\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA"
TV14_TOPIC_ID_BYTES = bytes(range(1, 17))
PM = "/data/kafka/orders-0/partition.metadata"


# --- UUIDs (§1.3) -------------------------------------------------------------------------

def test_uuid_text_forms():
    assert format_uuid(TV14_TOPIC_ID_BYTES) == "AQIDBAUGBwgJCgsMDQ4PEA"
    assert parse_uuid("AQIDBAUGBwgJCgsMDQ4PEA") == TV14_TOPIC_ID_BYTES
    assert format_uuid(ZERO_UUID) == "AAAAAAAAAAAAAAAAAAAAAA"
    assert format_uuid(ONE_UUID) == "AAAAAAAAAAAAAAAAAAAAAQ"


@pytest.mark.parametrize("text, raw", [
    pytest.param("AQIDBAUGBwgJCgsMDQ4PEA==", TV14_TOPIC_ID_BYTES, id="padded-24-chars"),
    pytest.param("AQIDBAUGBwgJCgsMDQ4PEB", TV14_TOPIC_ID_BYTES, id="unused-low-bits-ignored-like-java"),
    pytest.param("_____________________w", b"\xff" * 16, id="url-alphabet"),
])
def test_uuid_java_decoder_accepts(text, raw):
    assert parse_uuid(text) == raw


@pytest.mark.parametrize("text, reason", [
    pytest.param("A" * 25, "Input string with prefix `" + "A" * 24 + "` is too long", id="longer-than-24"),
    pytest.param("A" * 24, "decoded as 18 bytes", id="24-chars-18-bytes"),
    pytest.param("AQIDBAUGBwgJCgsMDQ4P", "decoded as 15 bytes", id="too-short"),
    pytest.param("", "decoded as 0 bytes", id="empty"),
    pytest.param("AQIDBAUGBwgJCgsMDQ4PE", "Last unit does not have enough valid bits", id="dangling-char"),
    pytest.param("AQIDBAUGBwgJCgsMDQ4PEA=", "wrong 4-byte ending unit", id="half-padding"),
    pytest.param("AQIDBAUGBwgJCgsMDQ4P+A", "Illegal base64 character 2b", id="standard-alphabet-plus"),
    pytest.param("AQIDBAUGBwgJCgsMDQ4PE ", "Illegal base64 character 20", id="space"),
    pytest.param("AQIDBAUGBwgJCgsMDQ4PEA==A", "too long", id="data-after-padding"),
])
def test_uuid_java_decoder_refuses(text, reason):
    with pytest.raises(Malformed) as info:
        parse_uuid(text)
    assert reason in info.value.reason


def test_reserved_directory_ids():
    assert is_reserved_directory_id(ZERO_UUID) and is_reserved_directory_id(ONE_UUID)
    assert is_reserved_directory_id(bytes(15) + b"\x63")
    assert not is_reserved_directory_id(bytes(15) + b"\x64")
    assert not is_reserved_directory_id(TV14_TOPIC_ID_BYTES)


@given(st.binary(min_size=16, max_size=16))
def test_uuid_round_trip(raw):
    text = format_uuid(raw)
    assert len(text) == 22 and parse_uuid(text) == raw


@given(st.text(max_size=30))
def test_uuid_any_text(text):
    try:
        assert len(parse_uuid(text)) == 16
    except Malformed:
        pass


# --- partition.metadata (§8.4) ---------------------------------------------------------

def test_tv14_partition_metadata():
    assert parse_partition_metadata(TV14_PARTITION_METADATA, path=PM) == PartitionMetadata(0, "AQIDBAUGBwgJCgsMDQ4PEA")
    assert build_partition_metadata("AQIDBAUGBwgJCgsMDQ4PEA") == TV14_PARTITION_METADATA


@pytest.mark.parametrize("content, expected", [
    pytest.param(TV14_PARTITION_METADATA + b"\n", PartitionMetadata(0, "AQIDBAUGBwgJCgsMDQ4PEA"),
                 id="trailing-newline"),
    pytest.param(b"version: 1\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA", PartitionMetadata(1, "AQIDBAUGBwgJCgsMDQ4PEA"),
                 id="higher-version-accepted-for-downgrades"),
    pytest.param(b"version:\t 0\r\ntopic_id:  AQIDBAUGBwgJCgsMDQ4PEA==\r\n",
                 PartitionMetadata(0, "AQIDBAUGBwgJCgsMDQ4PEA"), id="whitespace-runs-crlf-and-padding"),
    pytest.param(b"foo: 0\nbar: AQIDBAUGBwgJCgsMDQ4PEA", PartitionMetadata(0, "AQIDBAUGBwgJCgsMDQ4PEA"),
                 id="keys-not-checked"),
    pytest.param(TV14_PARTITION_METADATA + b"\nanything else", PartitionMetadata(0, "AQIDBAUGBwgJCgsMDQ4PEA"),
                 id="extra-lines-ignored"),
    pytest.param(b"version: 0: \ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA", PartitionMetadata(0, "AQIDBAUGBwgJCgsMDQ4PEA"),
                 id="java-split-drops-trailing-empty-part"),
])
def test_partition_metadata_accepted(content, expected):
    assert parse_partition_metadata(content, path=PM) == expected


@pytest.mark.parametrize("content, reason", [
    pytest.param(b"", "java.lang.NullPointerException", id="empty-file"),
    pytest.param(b"version: 0\n", "java.lang.NullPointerException", id="missing-topic-id-line"),
    pytest.param(b"version:0\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA",
                 f"Malformed line in checkpoint file [{PM}]: version:0", id="no-space-after-colon"),
    pytest.param(b"version: x\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA",
                 f"Malformed line in checkpoint file [{PM}]: version: x", id="version-not-a-number"),
    pytest.param(b"version: 0 \ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA",
                 f"Malformed line in checkpoint file [{PM}]: version: 0 ", id="version-trailing-space"),
    pytest.param(b"version: 0: 1\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA",
                 f"Malformed line in checkpoint file [{PM}]: version: 0: 1", id="three-parts"),
    pytest.param(b"version: -1\ntopic_id: AQIDBAUGBwgJCgsMDQ4PEA",
                 f"Unrecognized version of partition metadata file + ({PM}): -1", id="negative-version"),
    pytest.param(b"version: 0\ntopic_id AQIDBAUGBwgJCgsMDQ4PEA",
                 f"Malformed line in checkpoint file [{PM}]: topic_id AQIDBAUGBwgJCgsMDQ4PEA", id="no-colon"),
    pytest.param(b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA",
                 f"Invalid topic ID in partition metadata file ({PM})", id="zero-uuid"),
    pytest.param(b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAB",
                 f"Invalid topic ID in partition metadata file ({PM})", id="zero-uuid-with-ignored-bits"),
    pytest.param(b"version: 0\ntopic_id: not-a-uuid",
                 "java.lang.IllegalArgumentException", id="not-base64url-uuid"),
    pytest.param(b"version: 0\ntopic_id: 01234567-89ab-cdef-0123-456789abcdef",
                 "java.lang.IllegalArgumentException: Input string with prefix", id="dashed-uuid"),
    pytest.param(b"version: 0\ntopic_id: \xff", "Input length = 1", id="invalid-utf8"),
])
def test_partition_metadata_rejected(content, reason):
    with pytest.raises(Malformed) as info:
        parse_partition_metadata(content, path=PM)
    assert info.value.reason.startswith(reason)
    assert info.value.path == PM


def test_partition_metadata_error_positions():
    with pytest.raises(Malformed) as info:
        parse_partition_metadata(b"version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", path=PM)
    assert info.value.position == 21          # the id's first byte
    with pytest.raises(Malformed) as info:
        parse_partition_metadata(b"version: 0\ntopic_id AQ", path=PM)
    assert info.value.position == 11          # the second line


@settings(max_examples=300)
@given(st.binary(max_size=80))
def test_partition_metadata_any_bytes(data):
    try:
        got = parse_partition_metadata(data, path=PM)
    except FormatError:
        pass
    else:
        assert got.version >= 0 and len(got.topic_id) == 22


# --- meta.properties (§8.5) ------------------------------------------------------------

MP = "/data/kafka/meta.properties"
V1 = (b"#\n#Tue Mar 05 09:02:09 UTC 2024\nnode.id=1\ndirectory.id=AQIDBAUGBwgJCgsMDQ4PEA\n"
      b"version=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\n")
V0 = b"#\n#Fri Jan 12 10:00:00 UTC 2024\nbroker.id=5\nversion=0\ncluster.id=abc\n"


def test_meta_properties_v1():
    mp = parse_meta_properties(V1, path=MP)
    assert (mp.version, mp.broker_id, mp.node_id, mp.cluster_id, mp.directory_id) == (
        1, None, 1, "MkU3OEVBNTcwNTJENDM2Qg", "AQIDBAUGBwgJCgsMDQ4PEA")
    assert mp.effective_id == 1
    assert mp.properties["version"] == "1"


def test_meta_properties_v0():
    mp = parse_meta_properties(V0, path=MP)
    assert (mp.version, mp.broker_id, mp.node_id, mp.cluster_id, mp.directory_id) == (0, 5, None, "abc", None)
    assert mp.effective_id == 5


@pytest.mark.parametrize("content, expected", [
    pytest.param(b"broker.id=3\n", (0, 3, None, None), id="v0-version-absent"),
    pytest.param(b"version=0\n", (0, None, None, None), id="v0-everything-optional"),
    pytest.param(b"version=0\nnode.id=x\n", (0, None, None, None), id="v0-ignores-node-id"),
    pytest.param(b"version = 1\nnode.id 7\ncluster.id:c\n", (1, None, 7, "c"), id="separators-and-spaces"),
    pytest.param(b"version= 1 \nnode.id=7\ncluster.id=c\n", (1, None, 7, "c"), id="version-is-trimmed"),
    pytest.param(b"version=1\nbroker.id=x\nnode.id=7\ncluster.id=c\n", (1, None, 7, "c"),
                 id="v1-ignores-broker-id"),
    pytest.param(b"version=0\nbroker.id=1\nbroker.id=2\n", (0, 2, None, None), id="later-key-wins"),
])
def test_meta_properties_accepted(content, expected):
    mp = parse_meta_properties(content, path=MP)
    assert (mp.version, mp.broker_id, mp.node_id, mp.cluster_id) == expected


@pytest.mark.parametrize("content, exc, reason", [
    pytest.param(b"version=abc\n", Malformed, "Invalid meta.properties version string 'abc'", id="version-string"),
    pytest.param(b"version=2\nnode.id=1\ncluster.id=c\n", UnsupportedVersion,
                 "Unknown meta.properties version number 2", id="version-2"),
    pytest.param(b"version=-1\n", UnsupportedVersion, "Unknown meta.properties version number -1", id="version-negative"),
    pytest.param(b"version=1\ncluster.id=c\n", Malformed, "Failed to find node.id", id="v1-no-node-id"),
    pytest.param(b"version=1\ncluster.id=c\nnode.id=one\n", Malformed,
                 "Unable to read node.id as a base-10 number.", id="v1-node-id-not-a-number"),
    pytest.param(b"version=1\ncluster.id=c\nnode.id=1 \n", Malformed,
                 "Unable to read node.id as a base-10 number.", id="trailing-space-not-trimmed"),
    pytest.param(b"version=1\nnode.id=1\n", Malformed, "cluster.id was not found.", id="v1-no-cluster-id"),
    pytest.param(b"version=1\n", Malformed, "Failed to find node.id", id="v1-node-id-checked-before-cluster-id"),
    pytest.param(b"broker.id=x\n", Malformed, "Unable to read broker.id as a base-10 number.", id="v0-bad-broker-id"),
    pytest.param(b"broker.id=1\ndirectory.id=xyz\n", Malformed, "Unable to read directory.id as a Uuid: ",
                 id="bad-directory-id"),
    pytest.param(b"broker.id=1\ndirectory.id=\\u00\n", Malformed, "Malformed \\uxxxx encoding.",
                 id="bad-unicode-escape"),
])
def test_meta_properties_rejected(content, exc, reason):
    with pytest.raises(exc) as info:
        parse_meta_properties(content, path=MP)
    assert info.value.reason.startswith(reason)
    assert info.value.path == MP


@pytest.mark.parametrize("content, expected", [
    pytest.param(b"a=b", {"a": "b"}, id="equals"),
    pytest.param(b"a:b", {"a": "b"}, id="colon"),
    pytest.param(b"a b", {"a": "b"}, id="space"),
    pytest.param(b"a = : b", {"a": ": b"}, id="only-one-separator-skipped"),
    pytest.param(b"   a=b  ", {"a": "b  "}, id="leading-ws-skipped-trailing-kept"),
    pytest.param(b"# c\n! c\na=b", {"a": "b"}, id="comments"),
    pytest.param(b"a=b\\\n   c\\\r\n  d", {"a": "bcd"}, id="continuations"),
    pytest.param(b"a=b\\\\\nc=d", {"a": "b\\", "c": "d"}, id="escaped-backslash-ends-line"),
    pytest.param(b"a=b\\", {"a": "b"}, id="backslash-at-eof-dropped"),
    pytest.param(b"a\\=b=c", {"a=b": "c"}, id="escaped-separator-in-key"),
    pytest.param(b"a\\ b=c", {"a b": "c"}, id="escaped-space-in-key"),
    pytest.param(b"a=\\u0041\\t\\q", {"a": "A\tq"}, id="escapes"),
    pytest.param(b"a=\\ud83d\\ude00", {"a": "\U0001F600"}, id="surrogate-pair"),
    pytest.param(b"a=\xe9", {"a": "\u00e9"}, id="iso-8859-1"),
    pytest.param(b"a\n\n\nb=\n", {"a": "", "b": ""}, id="empty-values-and-blank-lines"),
    pytest.param(b"a=1\\\n#not a comment", {"a": "1#not a comment"}, id="continuation-is-not-a-comment"),
])
def test_java_properties_syntax(content, expected):
    assert parse_java_properties(content)[0] == expected


def test_build_meta_properties_is_what_properties_store_writes():
    props = {"version": "1", "node.id": "1", "cluster.id": "abc", "directory.id": "AQIDBAUGBwgJCgsMDQ4PEA"}
    # JDK 18+ Properties.store writes keys sorted.
    assert build_meta_properties(props, key_order="sorted") == (
        b"#\n#Thu Jan 01 00:00:00 UTC 1970\ncluster.id=abc\ndirectory.id=AQIDBAUGBwgJCgsMDQ4PEA\n"
        b"node.id=1\nversion=1\n")
    hashed = build_meta_properties(props)                 # default: the spec's hash order
    assert hashed.splitlines()[:2] == [b"#", b"#Thu Jan 01 00:00:00 UTC 1970"]
    assert sorted(hashed.splitlines()[2:]) == sorted(build_meta_properties(props, key_order="sorted").splitlines()[2:])
    assert parse_meta_properties(hashed, path=MP).node_id == 1
    assert build_meta_properties({"a b": " x=y"}) == b"#\n#Thu Jan 01 00:00:00 UTC 1970\na\\ b=\\ x\\=y\n"
    with pytest.raises(ValueError):
        build_meta_properties(props, key_order="random")


@given(st.dictionaries(st.text(min_size=1, max_size=10), st.text(max_size=10), max_size=6))
def test_properties_round_trip(props):
    # store(Writer) writes non-ASCII as UTF-8 but load(InputStream) reads ISO-8859-1 (a real
    # Kafka quirk), so round trips hold for ISO-8859-1-representable ASCII text.
    props = {k: v for k, v in props.items() if k.isascii() and v.isascii()}
    assert parse_java_properties(build_meta_properties(props))[0] == props


@settings(max_examples=300)
@given(st.binary(max_size=120))
def test_meta_properties_any_bytes(data):
    try:
        mp = parse_meta_properties(data, path=MP)
    except FormatError:
        pass
    else:
        assert isinstance(mp, MetaProperties) and mp.version in (0, 1)


# --- .kafka_cleanshutdown (§8.6) ---------------------------------------------------------

@pytest.mark.parametrize("content, epoch", [
    pytest.param(b"", None, id="empty-pre-3.7"),
    pytest.param(b'{"version":0,"brokerEpoch":42}', 42, id="3.7-format"),
    pytest.param(b'{"brokerEpoch":42,"other":[1,2]}', 42, id="unknown-fields-ignored"),
    pytest.param(b'{"version":0}', None, id="no-epoch"),
    pytest.param(b'{"version":0,"brokerEpoch":null}', None, id="null-epoch"),
    pytest.param(b"not json", None, id="not-json"),
    pytest.param(b"[1]", None, id="not-an-object"),
    pytest.param(b"\xff\xfe", None, id="not-utf8"),
    pytest.param(b'{"version":"x","brokerEpoch":1}', None, id="version-not-a-number"),
])
def test_clean_shutdown(content, epoch):
    got = parse_clean_shutdown(content, path=".kafka_cleanshutdown")
    assert isinstance(got, CleanShutdown)
    assert got.broker_epoch == epoch
    assert got.is_empty == (content == b"")


@settings(max_examples=200)
@given(st.binary(max_size=60))
def test_clean_shutdown_never_raises(data):
    assert isinstance(parse_clean_shutdown(data, path="c"), CleanShutdown)


# --- quorum-state (§8.7) ---------------------------------------------------------------

QS = "/data/kafka/__cluster_metadata-0/quorum-state"
QS_V0 = (b'{"clusterId":"","leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,'
         b'"currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}')
QS_V1 = b'{"leaderId":-1,"leaderEpoch":2,"votedId":1,"votedDirectoryId":"J8aAPcfLQt2bqs1JT_rMgQ","data_version":1}'


def test_quorum_state_v0():
    assert parse_quorum_state(QS_V0, path=QS) == QuorumState(0, 1, 2, -1, 0, (1, 2, 3), "")


def test_quorum_state_v1():
    qs = parse_quorum_state(QS_V1 + b"\n", path=QS)
    assert (qs.data_version, qs.leader_id, qs.leader_epoch, qs.voted_id) == (1, -1, 2, 1)
    assert qs.voted_directory_id == "J8aAPcfLQt2bqs1JT_rMgQ"
    assert qs.cluster_id is None and qs.current_voters == ()


def test_quorum_state_null_voters_and_ignored_trailing_text():
    content = QS_V0.replace(b'[{"voterId":1},{"voterId":2},{"voterId":3}]', b"null") + b" trailing"
    assert parse_quorum_state(content, path=QS).current_voters == ()


@pytest.mark.parametrize("content, exc, reason", [
    pytest.param(b"", Malformed, "File ended prematurely.", id="empty"),
    pytest.param(b"\n", Malformed, "Error while reading the Quorum status from the file", id="blank-line"),
    pytest.param(b"[1,2]", Malformed, "Error while reading the Quorum status from the file", id="not-an-object"),
    pytest.param(b"{nope", Malformed, "Error while reading the Quorum status from the file", id="invalid-json"),
    pytest.param(b'{"leaderId":1}', Malformed, "Error while reading the Quorum status from the file", id="no-data-version"),
    pytest.param(b'{"data_version":2}', UnsupportedVersion,
                 "data_version (2) is not within the min (0) and max (1) supported version", id="data-version-2"),
    pytest.param(b'{"data_version":-1}', UnsupportedVersion,
                 "data_version (-1) is not within the min (0) and max (1) supported version", id="data-version-minus-1"),
    pytest.param(b'{"data_version":0,"clusterId":"","leaderEpoch":1,"votedId":1,"appliedOffset":0,"currentVoters":[]}',
                 Malformed, "QuorumStateData: unable to locate field 'leaderId', which is mandatory in version 0",
                 id="missing-leader-id"),
    pytest.param(b'{"data_version":1,"leaderId":1,"leaderEpoch":1,"votedId":1,"votedDirectoryId":"x"}',
                 Malformed, "java.lang.IllegalArgumentException", id="bad-voted-directory-id"),
    pytest.param(b'{"data_version":0,"clusterId":5,"leaderId":1,"leaderEpoch":1,"votedId":1,"appliedOffset":0,'
                 b'"currentVoters":[]}', Malformed, "QuorumStateData expected a string type", id="cluster-id-not-text"),
])
def test_quorum_state_rejected(content, exc, reason):
    with pytest.raises(exc) as info:
        parse_quorum_state(content, path=QS)
    assert info.value.reason.startswith(reason)


def test_quorum_state_missing_field_names_it():
    with pytest.raises(Malformed) as info:
        parse_quorum_state(b'{"data_version":1,"leaderId":1,"votedId":1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA"}',
                           path=QS)
    assert "unable to locate field 'leaderEpoch', which is mandatory in version 1" in info.value.reason


def test_quorum_state_data_version_uses_short_value():
    # JsonNode.shortValue() of a non-number is 0, so a text data_version reads as version 0.
    content = QS_V0.replace(b'"data_version":0', b'"data_version":"one"')
    assert parse_quorum_state(content, path=QS).data_version == 0
    content = QS_V0.replace(b'"data_version":0', b'"data_version":65536')   # (short) 65536 == 0
    assert parse_quorum_state(content, path=QS).data_version == 0


@pytest.mark.parametrize("literal", [pytest.param(b"1" * 400 + b".5", id="past-double-range"),
                                     pytest.param(b"1e999", id="exponent"), pytest.param(b"-1e999", id="negative")])
def test_quorum_state_data_version_past_doubles_range(literal):
    # regression (bench/fuzz, quorum-state): such a literal parses as an infinite double, which
    # crashed the short narrowing (OverflowError). Java casts it to the int limit, then to short:
    # (short) Integer.MAX_VALUE == -1 and (short) Integer.MIN_VALUE == 0, so -1 is refused and
    # 0 reads as version 0.
    content = QS_V0.replace(b'"data_version":0', b'"data_version":' + literal)
    if literal.startswith(b"-"):
        assert parse_quorum_state(content, path=QS).data_version == 0
    else:
        with pytest.raises(UnsupportedVersion, match=r"data_version \(-1\)"):
            parse_quorum_state(content, path=QS)


@settings(max_examples=300)
@given(st.binary(max_size=120))
def test_quorum_state_any_bytes(data):
    try:
        parse_quorum_state(data, path=QS)
    except FormatError:
        pass


# --- every text reader: mutated real files, bounded memory --------------------------------


TEXT_READERS = [
    pytest.param(parse_partition_metadata, TV14_PARTITION_METADATA, id="partition-metadata"),
    pytest.param(parse_meta_properties, V1, id="meta-properties-v1"),
    pytest.param(parse_meta_properties, V0, id="meta-properties-v0"),
    pytest.param(parse_clean_shutdown, b'{"version":0,"brokerEpoch":42}', id="clean-shutdown"),
    pytest.param(parse_quorum_state, QS_V0, id="quorum-state-v0"),
    pytest.param(parse_quorum_state, QS_V1, id="quorum-state-v1"),
]

_INTERESTING = [0x00, 0x09, 0x0A, 0x0D, 0x20, 0x22, 0x2B, 0x2D, 0x30, 0x39, 0x3A, 0x3D, 0x41, 0x5C,
                0x5B, 0x7B, 0x7D, 0x23, 0x21, 0x75, 0xC3, 0xFF]


@pytest.mark.parametrize("reader, sample", TEXT_READERS)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_mutated_text_files_give_values_or_format_errors_in_bounded_memory(reader, sample, data):
    raw = bytearray(sample)
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.integers(0, 2))
        i = data.draw(st.integers(0, max(0, len(raw) - 1)))
        if op == 0 and raw:
            raw[i] = data.draw(st.sampled_from(_INTERESTING))
        elif op == 1:
            raw.insert(i, data.draw(st.sampled_from(_INTERESTING)))
        elif raw:
            del raw[i]
    tracemalloc.start()
    try:
        try:
            reader(bytes(raw), path="f")
        except FormatError as exc:
            assert exc.path == "f"
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200_000 + 100 * len(raw)
