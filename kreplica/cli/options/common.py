"""Options shared by commands: one name per concept (``--format``, ``--payload``, ``--debug``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Optional

import typer

from kreplica.report.output.formats import OutputFormat, Payload

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
    """The version asked for; one newer than kreplica's version table knows is refused (it would
    be emulated as the newest known, silently)."""
    from kreplica.formats.usage import UsageError
    from kreplica.model.versions import NEWEST_KNOWN, is_known_release, parse_kafka_version

    if text is None:
        return None  # each command applies its default (current Kafka, or the protocol's era)
    try:
        version = parse_kafka_version(text)
    except ValueError as exc:
        raise UsageError(str(exc), option="--kafka-version") from None
    if not is_known_release(version):
        raise UsageError(f"Kafka {text.strip()} is newer than any version kreplica knows "
                         f"(the newest is {NEWEST_KNOWN.major}.{NEWEST_KNOWN.minor})", option="--kafka-version")
    if (version.major, version.minor) < OLDEST_KNOWN:
        raise UsageError(f"Kafka {text.strip()} predates replication, which Kafka 0.8 introduced: kreplica "
                         "emulates 0.8 and later", option="--kafka-version")
    return version


#: the first release line with replication (leaders, followers, the ISR): nothing older is emulated
OLDEST_KNOWN = (0, 8)


def _version_help() -> str:
    from kreplica.model.versions import DEFAULT_VERSION, NEWEST_KNOWN, RELEASES_WITHOUT_ROWS

    def line(v) -> str:
        return f"{v.major}.{v.minor}"

    quiet = " and ".join(line(v) for v in RELEASES_WITHOUT_ROWS)
    return (f"Emulate this Kafka version where behaviour changed across releases: {OLDEST_KNOWN[0]}.{OLDEST_KNOWN[1]} "
            f"(the first with replication) to {line(NEWEST_KNOWN)}, the newest whose rules kreplica has read "
            f"({quiet} change none of {line(DEFAULT_VERSION)}'s); default {line(DEFAULT_VERSION)}. A newer or older "
            "version is refused.")


_KAFKA_VERSION_HELP = _version_help()


KafkaVersionOption = Annotated[
    Optional[str],
    typer.Option("--kafka-version", metavar="X.Y[.Z]", callback=_kafka_version,
                 help=_KAFKA_VERSION_HELP),
]

SourcesArgument = Annotated[list[str], typer.Argument(
    metavar="SOURCE", show_default=False,
    help="What cluster-state reads: a ZooKeeper data directory (or snapshot and log files), or KRaft "
         "metadata (a __cluster_metadata-0 directory, the log directory holding it, or its files).")]


def require_paths(paths: Iterable[str], option: str | None = None, *, stdin: bool = False) -> None:
    """Every path a command is given must exist: a missing one is "no such file or directory"
    (exit 2) before anything is read, whatever the command would have made of an absent path
    ("holds no metadata files", "not a log directory"). ``-`` is stdin where ``stdin`` allows it.
    Other OS errors (permissions, a file used as a directory) are left to the reader, which names
    them."""
    import os

    from kreplica.formats.mapped import EvidenceError

    for path in paths:
        if stdin and path == "-":
            continue
        try:
            os.stat(path)
        except FileNotFoundError:
            raise EvidenceError("no such file or directory", path=path, field=option) from None
        except (OSError, ValueError):
            pass


def parse_log_dirs(values: list[str] | None) -> dict[int, str]:
    """``--log-dirs BROKER=DIR ...``: each broker's copied log directory (or partition directory);
    a malformed pair, a missing directory or a broker given twice is a usage error (exit 2)."""
    import os

    from kreplica.formats.usage import UsageError

    out: dict[int, str] = {}
    for v in values or ():
        broker, sep, path = v.partition("=")
        if not sep or not broker.strip().isdigit() or not path:
            raise UsageError(f"expected BROKER=DIR such as 1=/data/broker-1, got {v!r}", option="--log-dirs")
        require_paths([path], "--log-dirs")
        if not os.path.isdir(path):
            raise UsageError("not a directory", path=path, option="--log-dirs")
        b = int(broker)
        if b in out:
            raise UsageError(f"broker {b} is given twice", option="--log-dirs")
        out[b] = path
    return out

