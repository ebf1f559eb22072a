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
