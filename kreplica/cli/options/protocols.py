"""``--protocol``, the truncation protocol generation of ``truncate-plan`` and ``fleet analyze``
(and ``fleet run``): one of :class:`~kreplica.model.versions.Protocol`'s, or ``auto`` (from
``--kafka-version``)."""

from __future__ import annotations

from typing import Annotated

import typer

from kreplica.cli.options.names import choice_message
from kreplica.formats.usage import UsageError
from kreplica.model.versions import Protocol

#: ``--protocol``: the truncation protocol generations (light to import: the version table);
#: tests/analysis/replication/test_scenarios.py checks they match what the truncation accepts
AUTO = "auto"
PROTOCOLS = (*(p.value for p in Protocol), AUTO)


def _protocol(value: str) -> str:
    if value not in PROTOCOLS:
        raise UsageError(choice_message(value, PROTOCOLS), option="--protocol")
    return value


ProtocolOption = Annotated[str, typer.Option(
    "--protocol", metavar="hw|kip101|kip279|diverging-epoch|auto", callback=_protocol,
    help="Truncation protocol generation; auto picks it from --kafka-version.")]
