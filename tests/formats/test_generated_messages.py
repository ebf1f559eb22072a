"""Kafka's generated message encoding where kreplica's reader once differed from Kafka's: a
nullable struct's presence marker (``MessageDataGenerator.generateStructReader`` and the writer
beside it). Expected bytes are what the generator's code writes, and the first case is the value
a real Kafka 4.4 group coordinator wrote (fixtures/real-kafka, a KIP-848 consumer group)."""

from __future__ import annotations

import pytest

from kreplica.formats.coordinator.group_records import ConsumerGroupMemberMetadataValue
from kreplica.formats.generated_messages import F, decode_fields, encode_fields

# ConsumerGroupMemberMetadataValue v0 as Kafka 4.4 wrote it for a consumer-protocol member:
# instance and rack null, client id, host, topics [orders], regex "", rebalance 300000, assignor
# null, then one tagged field: tag 0 (ClassicMemberMetadata), size 1, marker 0 = null
REAL_44 = bytes.fromhex("00001d636f6e73756d65722d636f6e73756d65722d70726f746f636f6c2d320b2f3132372e302e302e3102"
                        "076f726465727301000493e00001000100")


def test_a_null_tagged_struct_as_kafka_4_4_writes_it() -> None:
    data, end = decode_fields(ConsumerGroupMemberMetadataValue.fields, 0, REAL_44)
    assert end == len(REAL_44)
    assert data["classic_member_metadata"] is None
    assert data["client_id"] == "consumer-consumer-protocol-2" and data["rebalance_timeout_ms"] == 300000
    assert data["subscribed_topic_names"] == ("orders",) and data["subscribed_topic_regex"] == ""


def test_a_present_tagged_struct_has_the_varint_marker_1() -> None:
    # generateVariableLengthWriter, tagged nullable struct: size + 1, then writeUnsignedVarint(1),
    # then the struct (session timeout 45000, one protocol "range" with 2 bytes, no tags)
    classic = {"session_timeout_ms": 45000, "supported_protocols": ({"name": "range", "metadata": b"\x01\x02"},)}
    values = {"client_id": "c", "client_host": "h", "subscribed_topic_names": (), "classic_member_metadata": classic}
    raw = encode_fields(ConsumerGroupMemberMetadataValue.fields, 0, values)
    struct = bytes.fromhex("0000afc8" "02" "0672616e6765" "03" "0102" "00" "00")
    assert raw.endswith(bytes([1, 0, len(struct) + 1, 1]) + struct)
    assert decode_fields(ConsumerGroupMemberMetadataValue.fields, 0, raw)[0]["classic_member_metadata"] == classic


UNTAGGED = (F("a", "int32"), F("s", "struct", nullable=True, fields=(F("x", "int16"),)), F("b", "int8"))


@pytest.mark.parametrize("flexible", [True, False], ids=["flexible", "non-flexible"])
def test_an_untagged_nullable_struct_has_a_byte_marker(flexible: bool) -> None:
    # generateVariableLengthWriter, untagged: writeByte(-1) for null, writeByte(1) before a struct
    tail = b"\x00" if flexible else b""
    null = encode_fields(UNTAGGED, 0, {"a": 7, "s": None, "b": 2}, flexible=flexible)
    assert null == b"\x00\x00\x00\x07" + b"\xff" + b"\x02" + tail
    present = encode_fields(UNTAGGED, 0, {"a": 7, "s": {"x": 5}, "b": 2}, flexible=flexible)
    assert present == b"\x00\x00\x00\x07" + b"\x01\x00\x05" + tail + b"\x02" + tail
    assert decode_fields(UNTAGGED, 0, null, flexible=flexible)[0]["s"] is None
    assert decode_fields(UNTAGGED, 0, present, flexible=flexible)[0]["s"] == {"x": 5}
    # the counter-case: a struct that is not nullable has no marker
    plain = (F("s", "struct", fields=(F("x", "int16"),)),)
    assert encode_fields(plain, 0, {"s": {"x": 5}}, flexible=flexible) == b"\x00\x05" + tail + tail
