"""Which implementation runs where kreplica has two: the record decoder and ``inspect-log``'s
ndjson renderer (compiled twins, built by ``pip install`` only where a C compiler and Python's
headers are present, else the pure-Python reference, about 3x slower on ``--records``), and the
CRC-32C (the ``crc32c`` package or the ``crcmod`` reference).

An install without a compiler succeeds without a word, so ``kreplica --version`` names each
implementation in use and why, and ``--debug`` says the same on stderr at the start of a run.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from kreplica import __version__

COMPILED = "compiled"
PYTHON = "python"
#: what building a compiled twin needs, for the message that says one is missing
BUILD_NEEDS = "pip install builds it where a C compiler and Python headers are present"


@dataclass(frozen=True, slots=True)
class Implementation:
    """One part with two implementations: which one this process uses (``name``) and why."""

    part: str
    name: str
    detail: str

    def __str__(self) -> str:
        return f"{self.part}: {self.name} ({self.detail})"


def _twin(part: str, in_use: str, module: str, source: str, env_var: str) -> Implementation:
    """A compiled twin's state: in use, forced off by ``env_var``, not built, or a stale build."""
    from kreplica.formats._compiled import forced_python

    if in_use == COMPILED:
        return Implementation(part, COMPILED, f"built from {source}")
    if forced_python(env_var):
        return Implementation(part, PYTHON, f"{env_var}=python")
    if importlib.util.find_spec(module) is None:
        return Implementation(part, PYTHON, f"the compiled twin, {source}, is not built; {BUILD_NEEDS}")
    return Implementation(part, PYTHON, f"the build of {source} is of another version; reinstall kreplica")


def implementations() -> tuple[Implementation, ...]:
    """The record decoder, the ndjson renderer and the CRC-32C this process uses."""
    from kreplica.formats import checksums
    from kreplica.formats.log import default_records
    from kreplica.report.schemas import inspect_log

    if checksums.CRC_IMPLEMENTATION == "reference":
        crc = Implementation("CRC-32C", "reference", "crcmod, KREPLICA_CRC=reference")
    else:
        crc = Implementation("CRC-32C", "fast", "crc32c package, "
                             + ("hardware instructions" if checksums.CRC32C_HARDWARE else "software table"))
    return (
        _twin("record decoder", default_records.DECODE_IMPLEMENTATION, "kreplica.formats.log._crecords",
              "kreplica/formats/log/_crecords.c", "KREPLICA_DECODE"),
        _twin("inspect-log ndjson renderer", inspect_log.RENDER_IMPLEMENTATION, "kreplica.report._crender",
              "kreplica/report/_crender.c", "KREPLICA_RENDER"),
        crc,
    )


def version_text() -> str:
    """What ``kreplica --version`` prints: the version, then one line per implementation."""
    return "\n".join([f"kreplica {__version__}", *map(str, implementations())])


def debug_line() -> str:
    """The line ``--debug`` writes to stderr when a run starts."""
    return "kreplica: debug: " + "; ".join(map(str, implementations()))
