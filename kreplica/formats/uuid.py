"""Kafka UUIDs: topic ids, directory ids, incarnation ids (kafka-formats spec §1.3).

Source (apache/kafka, trunk 2024-10 baseline): ``clients/src/main/java/org/apache/kafka/common/
Uuid.java``; reserved directory ids from ``server-common/src/main/java/org/apache/kafka/common/
DirectoryId.java``.

Binary form, 16 bytes::

    Uuid => mostSignificantBits => Int64, leastSignificantBits => Int64

Text form: URL-safe Base64 of those 16 bytes *without* padding, always 22 characters
(``Uuid.toString``). ``Uuid.fromString`` is laxer than ``toString`` is strict, and this module
reproduces it exactly, because a hand-edited ``partition.metadata`` or ``meta.properties``
is accepted or refused by Kafka on precisely these rules:

* more than 24 characters → ``IllegalArgumentException`` ("Input string with prefix `…` is too
  long to be decoded as a base64 UUID");
* decoded by ``java.util.Base64.getUrlDecoder()``: padding optional but, if present, correct;
  any character outside ``A-Z a-z 0-9 - _`` refused; a dangling single character refused;
  the unused low bits of the last character are **not** checked (so ``…AB`` decodes like
  ``…AA``);
* the result must be exactly 16 bytes.

There is no checksum. Reserved values: all-zero (:data:`ZERO_UUID`, "no id") and ``0…01``
(:data:`ONE_UUID`, also the ``__cluster_metadata`` topic id).
"""

from __future__ import annotations

import base64
import struct

from kreplica.formats.errors import Malformed

UUID = struct.Struct(
    ">"
    "q"  # mostSignificantBits
    "q"  # leastSignificantBits
)
UUID_SIZE = UUID.size  # 16

ZERO_UUID = bytes(UUID_SIZE)
ONE_UUID = UUID.pack(0, 1)
METADATA_TOPIC_ID = ONE_UUID

#: ``Uuid.fromString`` refuses longer input before decoding.
MAX_TEXT_LENGTH = 24

# DirectoryId.java: most-significant half 0 and least-significant half < 100 are reserved.
DIRECTORY_ID_RESERVED_BELOW = 100
DIRECTORY_ID_MIGRATING = ZERO_UUID
DIRECTORY_ID_UNASSIGNED = ONE_UUID
DIRECTORY_ID_LOST = UUID.pack(0, 2)

_ALPHABET = {c: i for i, c in enumerate(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")}


def _java_url_decode(text: str) -> bytes:
    """``java.util.Base64.getUrlDecoder().decode(String)``, raising ``ValueError`` with the
    JDK's message where it throws ``IllegalArgumentException``."""
    # decode(String) first turns the string into ISO-8859-1 bytes; anything else becomes '?'.
    n = len(text)
    if 0 < n < 2:
        raise ValueError("Input byte[] should at least have 2 bytes for base64 bytes")
    out = bytearray()
    bits = 0
    shiftto = 18
    sp = 0
    while sp < n:
        c = text[sp]
        sp += 1
        v = _ALPHABET.get(c)
        if v is None:
            if c == "=":
                # "=" right after 2 chars needs a second "="; a "=" at a unit boundary is wrong.
                if shiftto == 6 and (sp == n or text[sp] != "=") or shiftto == 18:
                    raise ValueError("Input byte array has wrong 4-byte ending unit")
                if shiftto == 6:
                    sp += 1
                break
            byte = ord(c) if ord(c) < 256 else ord("?")
            signed = byte - 256 if byte > 127 else byte
            raise ValueError(f"Illegal base64 character {signed:x}" if signed >= 0
                             else f"Illegal base64 character -{-signed:x}")
        bits |= v << shiftto
        shiftto -= 6
        if shiftto < 0:
            out += bits.to_bytes(3, "big")
            shiftto = 18
            bits = 0
    if shiftto == 6:
        out.append((bits >> 16) & 0xFF)
    elif shiftto == 0:
        out += ((bits >> 8) & 0xFFFF).to_bytes(2, "big")
    elif shiftto == 12:
        raise ValueError("Last unit does not have enough valid bits")
    if sp < n:
        raise ValueError(f"Input byte array has incorrect ending byte at {sp}")
    return bytes(out)


def parse_uuid(text: str, *, path: str | None = None, position: int | None = None,
               field: str | None = None) -> bytes:
    """The 16 bytes of a Kafka UUID text, accepted or refused exactly as ``Uuid.fromString``.

    Raises :class:`Malformed` whose ``reason`` is the JDK/Kafka ``IllegalArgumentException``
    message. Reserved values (zero, one) are *not* refused here: whether they are allowed
    depends on the file (``partition.metadata`` refuses zero, for example).
    """
    if len(text) > MAX_TEXT_LENGTH:
        raise Malformed(f"Input string with prefix `{text[:MAX_TEXT_LENGTH]}` is too long to be "
                        "decoded as a base64 UUID", path=path, position=position, field=field)
    try:
        raw = _java_url_decode(text)
    except ValueError as exc:
        raise Malformed(str(exc), path=path, position=position, field=field) from None
    if len(raw) != UUID_SIZE:
        raise Malformed(f"Input string `{text}` decoded as {len(raw)} bytes, which is not equal to "
                        "the expected 16 bytes of a base64-encoded UUID",
                        path=path, position=position, field=field)
    return raw


def format_uuid(raw: bytes) -> str:
    """``Uuid.toString``: 22 characters of unpadded URL-safe Base64."""
    if len(raw) != UUID_SIZE:
        raise ValueError(f"a Kafka UUID is {UUID_SIZE} bytes, got {len(raw)}")
    return base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode("ascii")


def is_reserved_directory_id(raw: bytes) -> bool:
    """True for the ids ``DirectoryId`` reserves (high half 0, low half below 100), which a
    ``meta.properties`` ``directory.id`` must not use."""
    msb, lsb = UUID.unpack(raw)
    return msb == 0 and 0 <= lsb < DIRECTORY_ID_RESERVED_BELOW
