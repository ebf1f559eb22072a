"""Byte payloads in output: ``base64`` (standard, padded), ``hex``, ``utf8`` (invalid bytes
replaced) or ``none`` (omitted, written as null). ``None`` (a null key or value) stays null and
``b""`` becomes ``""``, so absent and empty are never confused.

Two forms: :func:`encoder` turns one payload into the string an output object holds;
:func:`json_literals` turns a whole batch's payloads at once into the JSON text (UTF-8 bytes)
of those strings, for the ndjson hot path of ``inspect-log --records``. Base64 uses
``pybase64`` (SIMD, the same bytes as the standard library) when it is installed.
"""

from __future__ import annotations

import binascii
from collections.abc import Callable, Sequence

from kreplica.report.output.encoding import dumps_str
from kreplica.report.output.formats import Payload



def _stdlib_b64(data: bytes) -> bytes:
    return binascii.b2a_base64(data, newline=False)


_B64: list[Callable[[bytes], bytes]] = []


def _b64encoder() -> Callable[[bytes], bytes]:
    """Standard padded base64 as bytes: ``pybase64`` (SIMD) when installed, else the standard
    library's encoder (the same bytes, about half the speed). Imported on first use, so runs that
    write no base64 (scans, ``--payload none``, the compiled renderer) do not pay for it."""
    if not _B64:
        try:
            from pybase64 import b64encode
        except ImportError:
            b64encode = _stdlib_b64
        _B64.append(b64encode)
    return _B64[0]


def b64_text(data: bytes) -> str:
    """Standard padded base64 of ``data`` as a str."""
    return _b64encoder()(data).decode("ascii")


def encoder(mode: Payload) -> Callable[[bytes | None], str | None]:
    """A function turning a payload (or ``None``) into its output form."""
    if mode is Payload.base64:
        b64 = _b64encoder()
        return lambda b: None if b is None else b64(b).decode("ascii")
    if mode is Payload.hex:
        return lambda b: None if b is None else b.hex()
    if mode is Payload.utf8:
        return lambda b: None if b is None else b.decode("utf-8", "replace")
    return lambda b: None


def _quoted(encode: Callable[[bytes], bytes]) -> Callable[[Sequence[bytes | None]], list[bytes]]:
    def literals(payloads: Sequence[bytes | None]) -> list[bytes]:
        # NOTE: one map over the batch with the C encoder; None (a null key, rarely a value) is
        # the exception, handled by the slower comprehension only when it occurs
        if None in payloads:
            return [b"null" if p is None else b'"' + encode(p) + b'"' for p in payloads]
        return [b'"' + e + b'"' for e in map(encode, payloads)]

    return literals


def _hex(data: bytes) -> bytes:
    return binascii.hexlify(data)


def json_literals(mode: Payload) -> Callable[[Sequence[bytes | None]], list[bytes]]:
    """A function turning a sequence of payloads into their JSON literals (UTF-8 bytes), each
    exactly what ``dumps(encoder(mode)(p))`` writes: ``null`` for ``None``."""
    if mode is Payload.base64:
        return _quoted(_b64encoder())
    if mode is Payload.hex:
        return _quoted(_hex)
    if mode is Payload.utf8:
        def utf8(payloads: Sequence[bytes | None]) -> list[bytes]:
            return [b"null" if p is None else dumps_str(p.decode("utf-8", "replace")) for p in payloads]

        return utf8
    return lambda payloads: [b"null"] * len(payloads)
