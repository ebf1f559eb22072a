"""The parts of KRaft's metadata image beyond brokers and partitions, as ``cluster-state`` holds
them after a replay: registered controllers, ACLs, client quotas, SCRAM users, delegation
tokens, the producer id block, features, broker log directories and replica directories. Expected
values come from the Kafka delta each record is replayed by (``metadata/src/main/java/org/apache/
kafka/image/``, the method named in each test), each rule with its counter-case; records are
written with kreplica's KRaft writer (``tests/builders/kraft_metadata.py``)."""

from __future__ import annotations

import json

import pytest

from kreplica.formats.findings import Finding
from kreplica.model.cluster import DIRECTORY_MIGRATING, cluster_state_from_kraft, find_kraft_files
from kreplica.model.cluster.state import (
    Acl,
    ClientQuota,
    ControllerRegistration,
    DelegationToken,
    ProducerIds,
    ScramCredential,
    ScramUser,
)
from kreplica.report.schemas.cluster_state import cluster_state_to_dict
from tests.builders.kraft_metadata import JUNK, ORDERS, broker_registration
from tests.model.cluster.test_kraft_image import _write

ACL_1, ACL_2 = "xzPcSbvUTKu5qiIvEhlgrQ", "Q0b2tHSmRfuYXJLtZWbk3g"
DIR_A, DIR_B = "7FJxkMWXSB2ZYjr9Tt6YZQ", "VwvfYvZVQw2T9Kk9MEcV8A"


def _state(tmp_path, records):
    return cluster_state_from_kraft(_write(tmp_path, records))


def _acl(acl_id, permission=3, principal="User:alice"):
    # TOPIC (2) "orders" LITERAL (3), READ (3), ALLOW (3) unless told
    return ("AccessControlEntryRecord", 0, {"id": acl_id, "resource_type": 2, "resource_name": "orders",
                                            "pattern_type": 3, "principal": principal, "host": "*",
                                            "operation": 3, "permission_type": permission})


def _quota(entity, key, value=0.0, remove=False):
    return ("ClientQuotaRecord", 0, {"entity": tuple({"entity_type": t, "entity_name": n} for t, n in entity),
                                     "key": key, "value": value, "remove": remove})


def _scram(name, mechanism, iterations=4096):
    return ("UserScramCredentialRecord", 0, {"name": name, "mechanism": mechanism, "salt": b"s" * 16,
                                             "stored_key": b"k" * 32, "server_key": b"v" * 32,
                                             "iterations": iterations})


def _token(token_id, expiration):
    return ("DelegationTokenRecord", 0, {"owner": "User:alice", "requester": "User:admin", "renewers": ("User:bob",),
                                         "issue_timestamp": 1000, "max_timestamp": 9000,
                                         "expiration_timestamp": expiration, "token_id": token_id})


def _controller(cid, incarnation=JUNK, port=9093):
    return ("RegisterControllerRecord", 0, {
        "controller_id": cid, "incarnation_id": incarnation, "zk_migration_ready": False,
        "end_points": ({"name": "CONTROLLER", "host": f"c{cid}", "port": port, "security_protocol": 0},),
        "features": ({"name": "metadata.version", "min_supported_version": 7, "max_supported_version": 27},
                     {"name": "kraft.version", "min_supported_version": 0, "max_supported_version": 1})})


# -- AclsDelta ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("records, ids, invalid", [
    pytest.param([_acl(ACL_1), _acl(ACL_2, permission=2)], [ACL_1, ACL_2], 0, id="added-by-id"),
    pytest.param([_acl(ACL_1), _acl(ACL_1, permission=2)], [ACL_1], 0, id="same-id-replaces"),
    pytest.param([_acl(ACL_1), _acl(ACL_2), ("RemoveAccessControlEntryRecord", 0, {"id": ACL_1})], [ACL_2], 0,
                 id="removed"),
    pytest.param([_acl(ACL_2), ("RemoveAccessControlEntryRecord", 0, {"id": ACL_1})], [ACL_2], 1,
                 id="removing-an-unknown-id-is-refused"),
])
def test_acls_by_id(tmp_path, records, ids, invalid):
    """``AclsDelta.replay(AccessControlEntryRecord)`` puts the ACL under its id (a second record of
    the id replaces it); ``replay(RemoveAccessControlEntryRecord)`` removes it, and throws
    ("Failed to find existing ACL with ID") for an id neither the image nor the delta holds."""
    cs = _state(tmp_path, records)
    assert [a.id for a in cs.acls] == sorted(ids)
    assert [f.kind for f in cs.findings] == ["kraft_invalid_record"] * invalid


def test_acl_fields_are_kafkas_enum_names(tmp_path):
    """``StandardAcl.fromRecord``: ``ResourceType``, ``PatternType``, ``AclOperation`` and
    ``AclPermissionType`` by code (2 TOPIC, 3 LITERAL, 3 READ, 2 DENY); a code Kafka does not define
    stays the number."""
    cs = _state(tmp_path, [_acl(ACL_1, permission=2), ("AccessControlEntryRecord", 0, {
        "id": ACL_2, "resource_type": 4, "resource_name": "kafka-cluster", "pattern_type": 4, "principal": "User:*",
        "host": "10.0.0.1", "operation": 99, "permission_type": 3})])
    assert cs.acls[1] == Acl(ACL_1, 2, "orders", 3, "User:alice", "*", 3, 2)   # by id: ACL_2 sorts first
    doc = cluster_state_to_dict(cs)["acls"]
    assert doc[::-1] == [
        {"id": ACL_1, "resource_type": "TOPIC", "resource_name": "orders", "pattern_type": "LITERAL",
         "principal": "User:alice", "host": "*", "operation": "READ", "permission_type": "DENY"},
        {"id": ACL_2, "resource_type": "CLUSTER", "resource_name": "kafka-cluster", "pattern_type": "PREFIXED",
         "principal": "User:*", "host": "10.0.0.1", "operation": 99, "permission_type": "ALLOW"}]


# -- ClientQuotasDelta / ClientQuotaDelta -----------------------------------------------------------------

ALICE = (("user", "alice"),)
DEFAULT_USER = (("user", None),)
ALICE_APP = (("user", "alice"), ("client-id", "app"))


@pytest.mark.parametrize("records, expected", [
    pytest.param([_quota(ALICE, "producer_byte_rate", 1024.0)],
                 [ClientQuota(ALICE, {"producer_byte_rate": 1024.0})], id="set"),
    pytest.param([_quota(ALICE, "producer_byte_rate", 1024.0), _quota(ALICE, "producer_byte_rate", 2048.0)],
                 [ClientQuota(ALICE, {"producer_byte_rate": 2048.0})], id="set-again-replaces"),
    pytest.param([_quota(ALICE, "producer_byte_rate", 1024.0), _quota(ALICE, "consumer_byte_rate", 10.0),
                  _quota(ALICE, "producer_byte_rate", remove=True)],
                 [ClientQuota(ALICE, {"consumer_byte_rate": 10.0})], id="remove-deletes-the-key"),
    pytest.param([_quota(ALICE, "producer_byte_rate", 1024.0), _quota(ALICE, "producer_byte_rate", remove=True)],
                 [], id="an-entity-left-empty-is-dropped"),
    pytest.param([_quota(ALICE, "request_percentage", remove=True)], [], id="removing-an-unset-key-is-nothing"),
    pytest.param([_quota(DEFAULT_USER, "producer_byte_rate", 1.0), _quota(ALICE_APP, "producer_byte_rate", 2.0),
                  _quota(ALICE, "producer_byte_rate", 3.0)],
                 [ClientQuota((("client-id", "app"), ("user", "alice")), {"producer_byte_rate": 2.0}),
                  ClientQuota(DEFAULT_USER, {"producer_byte_rate": 1.0}),
                  ClientQuota(ALICE, {"producer_byte_rate": 3.0})], id="entities-apart-default-first"),
])
def test_client_quotas_by_entity(tmp_path, records, expected):
    """``ClientQuotaDelta.replay``: ``remove`` puts an empty value for the key (deleted), else the
    value; ``ClientQuotasDelta.apply`` keeps only entities whose image is not empty. The entity is
    its (type, name) pairs (``ClientQuotaImage.dataToEntity``); a null name is the default entity."""
    assert list(_state(tmp_path, records).client_quotas) == expected


def test_client_quota_json_entity_is_an_object(tmp_path):
    cs = _state(tmp_path, [_quota(DEFAULT_USER, "producer_byte_rate", 1048576.0)])
    assert cluster_state_to_dict(cs)["client_quotas"] == [{"entity": {"user": None},
                                                           "quotas": {"producer_byte_rate": 1048576.0}}]


# -- ScramDelta -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("records, expected", [
    pytest.param([_scram("alice", 1), _scram("alice", 2, 8192), _scram("bob", 2)],
                 [ScramUser("alice", (ScramCredential(1, 4096), ScramCredential(2, 8192))),
                  ScramUser("bob", (ScramCredential(2, 4096),))], id="by-name-and-mechanism"),
    pytest.param([_scram("alice", 1), _scram("alice", 1, 10000)],
                 [ScramUser("alice", (ScramCredential(1, 10000),))], id="same-mechanism-replaces"),
    pytest.param([_scram("alice", 1), _scram("alice", 2),
                  ("RemoveUserScramCredentialRecord", 0, {"name": "alice", "mechanism": 1})],
                 [ScramUser("alice", (ScramCredential(2, 4096),))], id="remove-one-mechanism"),
    pytest.param([_scram("alice", 1), ("RemoveUserScramCredentialRecord", 0, {"name": "alice", "mechanism": 1})],
                 [], id="a-user-without-credentials-is-gone"),
    pytest.param([_scram("alice", 1), ("RemoveUserScramCredentialRecord", 0, {"name": "alice", "mechanism": 2})],
                 [ScramUser("alice", (ScramCredential(1, 4096),))], id="removing-another-mechanism-keeps-it"),
])
def test_scram_users_by_name(tmp_path, records, expected):
    """``ScramDelta.replay(UserScramCredentialRecord)`` puts the credential under (mechanism, name);
    ``replay(RemoveUserScramCredentialRecord)`` removes that one; ``apply`` drops what is empty."""
    assert list(_state(tmp_path, records).scram_users) == expected


def test_scram_secrets_never_reach_the_output(tmp_path):
    """Salts and keys are credentials: only the mechanism's name and the iterations are shown."""
    cs = _state(tmp_path, [_scram("alice", 2, 8192)])
    doc = cluster_state_to_dict(cs)
    assert doc["scram_users"] == [{"name": "alice", "mechanisms": [{"mechanism": "SCRAM-SHA-512", "iterations": 8192}]}]
    text = json.dumps(doc)
    assert "salt" not in text and "key" not in json.dumps(doc["scram_users"])


# -- DelegationTokenDelta ---------------------------------------------------------------------------------

@pytest.mark.parametrize("records, expected", [
    pytest.param([_token("t1", 5000)], {"t1": 5000}, id="added"),
    pytest.param([_token("t1", 5000), _token("t1", 7000)], {"t1": 7000}, id="renewal-replaces"),
    pytest.param([_token("t1", 5000), _token("t2", 5000), ("RemoveDelegationTokenRecord", 0, {"token_id": "t1"})],
                 {"t2": 5000}, id="removed"),
    pytest.param([_token("t2", 5000), ("RemoveDelegationTokenRecord", 0, {"token_id": "t1"})], {"t2": 5000},
                 id="removing-an-unknown-token-is-nothing"),
])
def test_delegation_tokens_by_id(tmp_path, records, expected):
    """``DelegationTokenDelta.replay(DelegationTokenRecord)`` puts the token under its id (a
    renewal is a new record of it); ``replay(RemoveDelegationTokenRecord)`` removes it, and does
    not throw for one it does not hold."""
    cs = _state(tmp_path, records)
    assert {t.token_id: t.expiration_timestamp for t in cs.delegation_tokens} == expected
    assert not cs.findings
    assert cs.delegation_tokens[0] == DelegationToken(cs.delegation_tokens[0].token_id, "User:alice", "User:admin",
                                                      ("User:bob",), 1000, cs.delegation_tokens[0].expiration_timestamp,
                                                      9000)


# -- ClusterDelta: controllers ------------------------------------------------------------------------------

@pytest.mark.parametrize("records, expected", [
    pytest.param([_controller(3000), _controller(3001)], {3000: 9093, 3001: 9093}, id="registered"),
    pytest.param([_controller(3000), _controller(3000, ORDERS, 19093)], {3000: 19093}, id="again-replaces"),
    pytest.param([_controller(3000), _controller(3001), ("UnregisterControllerRecord", 0, {"controller_id": 3000})],
                 {3001: 9093}, id="unregistered"),
    pytest.param([_controller(3001), ("UnregisterControllerRecord", 0, {"controller_id": 3000})], {3001: 9093},
                 id="unregistering-an-unknown-one-is-nothing"),
])
def test_registered_controllers(tmp_path, records, expected):
    """``ClusterDelta.replay(RegisterControllerRecord)`` puts the registration under its id,
    replacing an earlier one; ``replay(UnregisterControllerRecord)`` (4.1+) removes it."""
    cs = _state(tmp_path, records)
    assert {c.id: int(c.endpoints[0].rsplit(":", 1)[1]) for c in cs.controllers} == expected
    assert not cs.findings


def test_controller_registration_fields(tmp_path):
    """``ControllerRegistration.Builder(RegisterControllerRecord)``: incarnation, migration
    readiness, listeners by name and supported features by name."""
    cs = _state(tmp_path, [_controller(3000)])
    assert cs.controllers == (ControllerRegistration(3000, JUNK, False, ("CONTROLLER://c3000:9093",),
                                                     {"kraft.version": (0, 1), "metadata.version": (7, 27)}),)
    assert cluster_state_to_dict(cs)["controllers"][0]["features"]["metadata.version"] == {
        "min_supported_version": 7, "max_supported_version": 27}


# -- ProducerIdsDelta, FeaturesDelta ------------------------------------------------------------------------

def test_producer_ids_the_last_record_wins(tmp_path):
    """``ProducerIdsDelta.replay``: ``nextProducerId = record.nextProducerId()`` (the image keeps
    nothing else); absent before any."""
    assert _state(tmp_path, [broker_registration(1, "a", 10)]).producer_ids is None
    (tmp_path / "b").mkdir()
    cs = cluster_state_from_kraft(_write(tmp_path / "b", [
        ("ProducerIdsRecord", 0, {"broker_id": 1, "broker_epoch": 10, "next_producer_id": 1000}),
        ("ProducerIdsRecord", 0, {"broker_id": 2, "broker_epoch": 11, "next_producer_id": 2000})]))
    assert cs.producer_ids == ProducerIds(2000)
    assert cluster_state_to_dict(cs)["producer_ids"] == {"next_producer_id": 2000}


@pytest.mark.parametrize("records, expected", [
    pytest.param([("FeatureLevelRecord", 0, {"name": "group.version", "feature_level": 1})],
                 {"group.version": 1}, id="set"),
    pytest.param([("FeatureLevelRecord", 0, {"name": "group.version", "feature_level": 1}),
                  ("FeatureLevelRecord", 0, {"name": "group.version", "feature_level": 0})], {}, id="level-0-removes"),
    pytest.param([("FeatureLevelRecord", 0, {"name": "metadata.version", "feature_level": 0})],
                 {"metadata.version": 0}, id="metadata-version-is-not-removed"),
])
def test_features(tmp_path, records, expected):
    """``FeaturesDelta.replay(FeatureLevelRecord)``: ``metadata.version`` is always a level; any
    other feature at level 0 is removed (``Optional.empty()``)."""
    cs = _state(tmp_path, records)
    assert dict(cs.features) == expected
    assert cluster_state_to_dict(cs)["features"] == expected


# -- directories ------------------------------------------------------------------------------------------

def test_broker_log_dirs(tmp_path):
    """``BrokerRegistration.fromRecord``: the registration's log directories;
    ``ClusterDelta.replay(BrokerRegistrationChangeRecord)``: a list that is not empty replaces
    them, an empty one leaves them."""
    reg = broker_registration(1, "a", 10)
    reg = (reg[0], reg[1], dict(reg[2], log_dirs=(DIR_A,)))
    change = ("BrokerRegistrationChangeRecord", 2, {"broker_id": 1, "broker_epoch": 10, "log_dirs": (DIR_A, DIR_B)})
    keep = ("BrokerRegistrationChangeRecord", 2, {"broker_id": 1, "broker_epoch": 10, "log_dirs": ()})
    assert _state(tmp_path, [reg]).broker(1).log_dirs == (DIR_A,)
    (tmp_path / "b").mkdir()
    cs = cluster_state_from_kraft(_write(tmp_path / "b", [reg, change, keep]))
    assert cs.broker(1).log_dirs == (DIR_A, DIR_B)
    assert cluster_state_to_dict(cs)["brokers"][0]["log_dirs"] == [DIR_A, DIR_B]


def test_replica_directories(tmp_path):
    """``new PartitionRegistration(PartitionRecord)`` and ``merge(PartitionChangeRecord)`` with
    ``defaultToMigrating``: a v0 record's partition has one ``MIGRATING`` per replica; a change
    naming directories replaces them."""
    records = [("TopicRecord", 0, {"name": "orders", "topic_id": ORDERS}),
               ("PartitionRecord", 0, {"partition_id": 0, "topic_id": ORDERS, "replicas": (1, 2), "isr": (1, 2),
                                       "leader": 1, "leader_epoch": 0, "partition_epoch": 0}),
               ("PartitionRecord", 1, {"partition_id": 1, "topic_id": ORDERS, "replicas": (1, 2), "isr": (1, 2),
                                       "leader": 1, "leader_epoch": 0, "partition_epoch": 0,
                                       "directories": (DIR_A, DIR_B)}),
               ("PartitionChangeRecord", 1, {"partition_id": 0, "topic_id": ORDERS, "directories": (DIR_B, DIR_A)})]
    cs = _state(tmp_path, records[:3])
    assert [p.directories for p in cs.topic("orders").partitions] == [(DIRECTORY_MIGRATING,) * 2, (DIR_A, DIR_B)]
    (tmp_path / "b").mkdir()
    cs = cluster_state_from_kraft(_write(tmp_path / "b", records))
    assert cs.topic("orders").partitions[0].directories == (DIR_B, DIR_A)
    assert cluster_state_to_dict(cs)["topics"][0]["partitions"][0]["directories"] == [DIR_B, DIR_A]


def test_an_aborted_transaction_changes_no_image(tmp_path):
    """``MetadataBatchLoader``: records between Begin and Abort are never replayed, whatever image
    they are for."""
    cs = _state(tmp_path, [("BeginTransactionRecord", 0, {}), _acl(ACL_1), _scram("alice", 1), _token("t1", 5000),
                           _quota(ALICE, "producer_byte_rate", 1.0), _controller(3000),
                           ("AbortTransactionRecord", 0, {"reason": "test"})])
    assert (cs.acls, cs.scram_users, cs.delegation_tokens, cs.client_quotas, cs.controllers) == ((), (), (), (), ())
    assert not [f for f in cs.findings if isinstance(f, Finding) and f.is_error]
