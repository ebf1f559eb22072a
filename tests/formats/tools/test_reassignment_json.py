"""The version-1 reassignment JSON and the ``kafka-log-dirs.sh --describe`` JSON: round trips,
what ``kafka-reassign-partitions.sh --execute`` refuses, the tools' prose around the document, and
"any bytes give entries or a FormatError"."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kreplica.formats.errors import FormatError, Malformed
from kreplica.formats.tools.log_dirs_describe import ReplicaLogDirInfo, build_log_dirs_describe, parse_log_dirs_describe
from kreplica.formats.tools.reassignment_json import PartitionReassignment, build_reassignment_json, parse_reassignment_json

# the spec's example document (kafka-algorithms §5.4), quoted
SPEC_EXAMPLE = b'{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[4,5,6],"log_dirs":["any","/d2","any"]}]}'


def test_spec_example() -> None:
    (e,) = parse_reassignment_json(SPEC_EXAMPLE)
    assert e == PartitionReassignment("foo", 0, (4, 5, 6), ("any", "/d2", "any"))


def test_writer_is_the_tools_output_sorted_with_any_log_dirs() -> None:
    entries = [PartitionReassignment("b", 1, (3, 1)), PartitionReassignment("a", 10, (2,)),
               PartitionReassignment("a", 2, (1, 2))]
    text = build_reassignment_json(entries)
    assert text == (b'{"version":1,"partitions":[{"topic":"a","partition":2,"replicas":[1,2],"log_dirs":["any","any"]},'
                    b'{"topic":"a","partition":10,"replicas":[2],"log_dirs":["any"]},'
                    b'{"topic":"b","partition":1,"replicas":[3,1],"log_dirs":["any","any"]}]}\n')
    back = parse_reassignment_json(text)
    assert [(e.topic, e.partition, e.replicas) for e in back] == [("a", 2, (1, 2)), ("a", 10, (2,)), ("b", 1, (3, 1))]


def test_generate_printout_reads_the_current_assignment() -> None:
    printout = ("Current partition replica assignment\n\n"
                '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}\n\n'
                "Proposed partition reassignment configuration\n\n"
                '{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[3,4],"log_dirs":["any","any"]}]}\n')
    (e,) = parse_reassignment_json(printout.encode())
    assert e.replicas == (1, 2)


def test_version_defaults_to_1() -> None:
    (e,) = parse_reassignment_json(b'{"partitions":[{"topic":"t","partition":0,"replicas":[1]}]}')
    assert e.log_dirs is None


@pytest.mark.parametrize(("doc", "field"), [
    pytest.param('{"version":2,"partitions":[]}', "version", id="version-2"),
    pytest.param('{"version":1}', "partitions", id="no-partitions"),
    pytest.param('{"version":1,"partitions":[]}', "partitions", id="empty-list"),
    pytest.param('{"partitions":[{"topic":"t","partition":0,"replicas":[]}]}', "partitions[0].replicas",
                 id="empty-replicas"),
    pytest.param('{"partitions":[{"topic":"t","partition":0,"replicas":[1,1]}]}', "partitions[0].replicas",
                 id="duplicate-broker"),
    pytest.param('{"partitions":[{"topic":"t","partition":0,"replicas":[1]},{"topic":"t","partition":0,"replicas":[2]}]}',
                 "partitions[1]", id="duplicate-partition"),
    pytest.param('{"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any"]}]}',
                 "partitions[0].log_dirs", id="log-dirs-length"),
    pytest.param('{"partitions":[{"topic":"t","partition":"0","replicas":[1]}]}', "partitions[0].partition",
                 id="partition-as-text"),
    pytest.param('{"partitions":[{"partition":0,"replicas":[1]}]}', "partitions[0].topic", id="no-topic"),
])
def test_what_execute_refuses_is_malformed(doc: str, field: str) -> None:
    with pytest.raises(Malformed) as info:
        parse_reassignment_json(doc.encode(), path="plan.json")
    assert info.value.field == field
    assert info.value.path == "plan.json"


def test_bad_json_names_the_byte() -> None:
    with pytest.raises(Malformed) as info:
        parse_reassignment_json(b'prose\n{"version":1,"partitions":[{"topic":"t",,]}', path="x.json")
    assert info.value.position == len(b'prose\n{"version":1,"partitions":[{"topic":"t",')
    with pytest.raises(Malformed):
        parse_reassignment_json(b"no json here")


@given(st.binary(max_size=300))
def test_any_bytes_give_entries_or_format_error(data: bytes) -> None:
    for parse in (parse_reassignment_json, parse_log_dirs_describe):
        try:
            parse(data)
        except FormatError:
            pass


@given(st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 50),
                          st.lists(st.integers(0, 20), min_size=1, max_size=5, unique=True)),
                unique_by=lambda t: (t[0], t[1]), min_size=1, max_size=20))
def test_round_trip(entries) -> None:
    built = [PartitionReassignment(t, p, tuple(r)) for t, p, r in entries]
    back = parse_reassignment_json(build_reassignment_json(built))
    assert sorted((e.topic, e.partition, e.replicas) for e in back) == sorted((e.topic, e.partition, e.replicas)
                                                                              for e in built)


# -- kafka-log-dirs.sh --describe -------------------------------------------------------------------

LOG_DIRS_PRINTOUT = (
    "Querying brokers for log directories information\n"
    "Received log directory information from brokers 1,2\n"
    '{"brokers":[{"broker":1,"logDirs":[{"partitions":[{"partition":"my.topic-10","size":1234,"offsetLag":0,'
    '"isFuture":false},{"partition":"t-0","size":7,"offsetLag":2,"isFuture":true}],"error":null,'
    '"logDir":"/var/kafka"}]},{"broker":2,"logDirs":[{"partitions":[],"error":"KafkaStorageException",'
    '"logDir":"/bad"}]}],"version":1}\n')


def test_log_dirs_printout() -> None:
    replicas, errors = parse_log_dirs_describe(LOG_DIRS_PRINTOUT.encode(), path="sizes.json")
    assert replicas == (ReplicaLogDirInfo(1, "/var/kafka", "my.topic", 10, 1234, 0, False),
                        ReplicaLogDirInfo(1, "/var/kafka", "t", 0, 7, 2, True))
    assert [(e.broker, e.log_dir, e.error) for e in errors] == [(2, "/bad", "KafkaStorageException")]


def test_log_dirs_round_trip() -> None:
    replicas, _ = parse_log_dirs_describe(LOG_DIRS_PRINTOUT.encode())
    assert parse_log_dirs_describe(build_log_dirs_describe(replicas))[0] == replicas


@pytest.mark.parametrize(("doc", "field"), [
    pytest.param({"version": 1}, "brokers", id="no-brokers"),
    pytest.param({"brokers": [{"broker": 1, "logDirs": [{"logDir": "/d", "partitions": [
        {"partition": "nodash", "size": 1}]}]}]}, "brokers[0].logDirs[0].partitions[0].partition", id="bad-name"),
    pytest.param({"brokers": [{"broker": 1, "logDirs": [{"logDir": "/d", "partitions": [
        {"partition": "t-0", "size": -1}]}]}]}, "brokers[0].logDirs[0].partitions[0].size", id="negative-size"),
])
def test_log_dirs_malformed(doc: dict, field: str) -> None:
    with pytest.raises(Malformed) as info:
        parse_log_dirs_describe(json.dumps(doc).encode())
    assert info.value.field == field
