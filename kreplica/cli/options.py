"""Options shared by commands: one name per concept (``--format``, ``--payload``, ``--debug``)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from kreplica.report.output import OutputFormat, Payload

FormatOption = Annotated[
    Optional[OutputFormat],
    typer.Option("--format", "-f", case_sensitive=False,
                 help="Output format: text for people; json, ndjson or msgpack for programs. "
                      "Default: text on a terminal, ndjson otherwise."),
]
PayloadOption = Annotated[
    Payload,
    typer.Option("--payload", case_sensitive=False,
                 help="How keys, values and header values are written: base64 (standard, padded), hex, "
                      "utf8 (invalid bytes replaced) or none."),
]
DebugOption = Annotated[
    bool,
    typer.Option("--debug", help="Show the Python traceback of an internal error (also KREPLICA_DEBUG=1)."),
]


def _kafka_version(text: str | None):
    from kreplica.model.versions import parse_kafka_version

    if text is None:
        return None  # each command applies its default (current Kafka, or the protocol's era)
    try:
        return parse_kafka_version(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


KafkaVersionOption = Annotated[
    Optional[str],
    typer.Option("--kafka-version", metavar="X.Y[.Z]", callback=_kafka_version,
                 help="Emulate this Kafka version where behaviour changed across releases (default: current "
                      "Kafka, 4.0)."),
]

SourcesArgument = Annotated[list[str], typer.Argument(
    metavar="SOURCE", show_default=False,
    help="What cluster-state reads: a ZooKeeper data directory (or snapshot and log files), or KRaft "
         "metadata (a __cluster_metadata-0 directory, the log directory holding it, or its files).")]


def parse_log_dirs(values: list[str] | None) -> dict[int, str]:
    """``--log-dirs BROKER=DIR ...``: each broker's copied log directory (or partition directory);
    a malformed pair, a missing directory or a broker given twice is a usage error (exit 2)."""
    import os

    from kreplica.formats.errors import FormatError

    out: dict[int, str] = {}
    for v in values or ():
        broker, sep, path = v.partition("=")
        if not sep or not broker.strip().isdigit() or not path:
            raise FormatError(f"expected BROKER=DIR such as 1=/data/broker-1, got {v!r}", field="--log-dirs")
        if not os.path.isdir(path):
            raise FormatError("no such log directory", path=path, field="--log-dirs")
        b = int(broker)
        if b in out:
            raise FormatError(f"broker {b} is given twice", field="--log-dirs")
        out[b] = path
    return out

