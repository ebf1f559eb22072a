"""The two checksums of Kafka's segments, with a fast and a reference implementation.

* CRC-32C (Castagnoli; reflected polynomial 0x82F63B78): v2 record batches (bytes 21..end)
  and producer-state snapshots. Kafka: ``org.apache.kafka.common.utils.Crc32C``.
* CRC-32 (IEEE 802.3, as zlib and ``java.util.zip.CRC32``): legacy v0/v1 messages (magic..end).

The fast CRC-32C is the ``crc32c`` package (SSE 4.2 / ARMv8 instructions where the CPU has
them); the reference is ``crcmod``'s table-driven Castagnoli CRC. Set ``KREPLICA_CRC=reference``
to run everything on the reference (the test suite runs once with each and checks which one
loaded). CRC-32 uses ``zlib.crc32`` (itself hardware-assisted in modern zlib), with ``crcmod``'s
``crc-32`` as its reference.
"""

from __future__ import annotations

import os
import zlib

import crcmod.predefined

_reference_crc32c = crcmod.predefined.mkCrcFun("crc-32c")
_reference_crc32 = crcmod.predefined.mkCrcFun("crc-32")

#: ``"reference"`` or ``"fast"``: which implementation this process uses.
CRC_IMPLEMENTATION = "reference" if os.environ.get("KREPLICA_CRC", "").lower() == "reference" else "fast"

if CRC_IMPLEMENTATION == "fast":
    import crc32c as _crc32c_package

    #: True when the fast CRC-32C runs on CPU instructions rather than a software table.
    CRC32C_HARDWARE = bool(_crc32c_package.hardware_based)

    def crc32c(data) -> int:
        """CRC-32C of a bytes-like object, as an unsigned int."""
        return _crc32c_package.crc32c(data)

    def crc32(data) -> int:
        """CRC-32 (IEEE) of a bytes-like object, as an unsigned int."""
        return zlib.crc32(data)

else:
    CRC32C_HARDWARE = False

    def crc32c(data) -> int:
        """CRC-32C of a bytes-like object, as an unsigned int (crcmod reference)."""
        return _reference_crc32c(bytes(data))

    def crc32(data) -> int:
        """CRC-32 (IEEE) of a bytes-like object, as an unsigned int (crcmod reference)."""
        return _reference_crc32(bytes(data))


def reference_crc32c(data) -> int:
    """The crcmod CRC-32C, whatever :data:`CRC_IMPLEMENTATION` says (for cross-checks)."""
    return _reference_crc32c(bytes(data))


def reference_crc32(data) -> int:
    """The crcmod CRC-32, whatever :data:`CRC_IMPLEMENTATION` says (for cross-checks)."""
    return _reference_crc32(bytes(data))
