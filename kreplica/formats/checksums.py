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

import importlib.machinery
import importlib.util
import os
import zlib
from functools import cache


@cache
def _reference(name: str):
    """crcmod's table-driven CRC (the reference), built on first use: start-up stays cheap."""
    import crcmod.predefined

    return crcmod.predefined.mkCrcFun(name)


def _reference_crc32c(data: bytes, value: int = 0) -> int:
    return _reference("crc-32c")(data, value)


def _reference_crc32(data: bytes, value: int = 0) -> int:
    return _reference("crc-32")(data, value)


def _load_crc32c():
    """The ``crc32c`` package's compiled module. Loaded without running the package's
    ``__init__``, which imports ``importlib.metadata`` (35-40 ms of every start-up) only to set
    ``__version__``; falls back to a plain import if the layout is not the expected one."""
    spec = importlib.util.find_spec("crc32c")
    for directory in (spec.submodule_search_locations or ()) if spec else ():
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(directory, "_crc32c" + suffix)
            if os.path.isfile(path):
                loader = importlib.machinery.ExtensionFileLoader("crc32c._crc32c", path)
                module_spec = importlib.util.spec_from_loader("crc32c._crc32c", loader)
                module = importlib.util.module_from_spec(module_spec)
                loader.exec_module(module)
                return module
    import crc32c

    return crc32c

#: ``"reference"`` or ``"fast"``: which implementation this process uses.
CRC_IMPLEMENTATION = "reference" if os.environ.get("KREPLICA_CRC", "").lower() == "reference" else "fast"

if CRC_IMPLEMENTATION == "fast":
    _crc32c_package = _load_crc32c()

    #: True when the fast CRC-32C runs on CPU instructions rather than a software table.
    CRC32C_HARDWARE = bool(_crc32c_package.hardware_based)

    def crc32c(data, value: int = 0) -> int:
        """CRC-32C of a bytes-like object, as an unsigned int; ``value`` is the CRC of the bytes
        before ``data`` when a checksum is computed in pieces."""
        return _crc32c_package.crc32c(data, value)

    def crc32(data, value: int = 0) -> int:
        """CRC-32 (IEEE) of a bytes-like object, as an unsigned int; ``value`` continues a
        checksum computed in pieces."""
        return zlib.crc32(data, value)

else:
    CRC32C_HARDWARE = False

    def crc32c(data, value: int = 0) -> int:
        """CRC-32C of a bytes-like object, as an unsigned int (crcmod reference); ``value``
        continues a checksum computed in pieces."""
        return _reference_crc32c(bytes(data), value)

    def crc32(data, value: int = 0) -> int:
        """CRC-32 (IEEE) of a bytes-like object, as an unsigned int (crcmod reference); ``value``
        continues a checksum computed in pieces."""
        return _reference_crc32(bytes(data), value)


def reference_crc32c(data) -> int:
    """The crcmod CRC-32C, whatever :data:`CRC_IMPLEMENTATION` says (for cross-checks)."""
    return _reference_crc32c(bytes(data))


def reference_crc32(data) -> int:
    """The crcmod CRC-32, whatever :data:`CRC_IMPLEMENTATION` says (for cross-checks)."""
    return _reference_crc32(bytes(data))
