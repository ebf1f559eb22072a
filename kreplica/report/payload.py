"""Byte payloads in output: ``base64`` (standard, padded), ``hex``, ``utf8`` (invalid bytes
replaced) or ``none`` (omitted, written as null). ``None`` (a null key or value) stays null and
``b""`` becomes ``""``, so absent and empty are never confused."""

from __future__ import annotations

import base64
from collections.abc import Callable

from kreplica.report.output import Payload


def encoder(mode: Payload) -> Callable[[bytes | None], str | None]:
    """A function turning a payload (or ``None``) into its output form."""
    if mode is Payload.base64:
        b64 = base64.b64encode
        return lambda b: None if b is None else b64(b).decode("ascii")
    if mode is Payload.hex:
        return lambda b: None if b is None else b.hex()
    if mode is Payload.utf8:
        return lambda b: None if b is None else b.decode("utf-8", "replace")
    return lambda b: None
