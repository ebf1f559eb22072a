"""Where a fleet's evidence lies: ``ROOT/<broker>/<logdir>/<topic>-<partition>/``.

Each broker folder holds one or more log directories (one per ``log.dirs`` entry), each with its
own checkpoints and ``meta.properties``; a broker folder that is itself a log directory (segments'
partition directories and checkpoint files directly in it) is taken as that broker's only log
directory. The broker id is ``broker.id`` (or ``node.id``) in a log directory's
``meta.properties``, else the folder name (``broker-3`` or ``3``).

Discovery only lists directories on the driver; nothing is read here but ``meta.properties``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

from kreplica.formats.errors import FormatError
from kreplica.formats.mapped import EvidenceError
from kreplica.formats.logdir.meta_properties import parse_meta_properties
from kreplica.model.logdir.log_dir import LOG_DIR_MARKERS, META_PROPERTIES, read_bytes

_BROKER_FOLDER = re.compile(r"^(?:broker[-_]?)?(\d+)$")


@dataclass(frozen=True, slots=True)
class FleetLogDir:
    """One log directory of one broker; ``broker_source`` says where the id came from."""

    broker: int
    broker_source: str
    path: str


def local_path(root: str) -> Path:
    """``file://`` URIs and plain paths (other schemes are read through Spark: :mod:`.remote`)."""
    parsed = urlparse(root)
    if parsed.scheme in ("", "file"):
        return Path(parsed.path if parsed.scheme else root)
    raise EvidenceError(f"scheme {parsed.scheme}:// is not a local path", path=root)


def _is_log_dir(path: Path) -> bool:
    try:
        entries = list(os.scandir(path))
    except OSError:
        return False
    if any(e.name in LOG_DIR_MARKERS for e in entries if e.is_file()):
        return True
    return any(e.is_dir() and "-" in e.name and any(f.name.endswith(".log") for f in os.scandir(e.path))
               for e in entries)


def _meta_broker(path: Path) -> int | None:
    meta_path = path / META_PROPERTIES
    if not meta_path.is_file():
        return None
    try:
        meta = parse_meta_properties(read_bytes(str(meta_path)), path=str(meta_path))
    except (FormatError, ValueError):
        return None
    return meta.broker_id if meta.broker_id is not None else meta.node_id


def discover(root: str) -> list[FleetLogDir]:
    """Every log directory under ``root``, brokers and log directories in name order."""
    base = local_path(root)
    if not base.is_dir():
        raise EvidenceError("no such directory (expected ROOT/<broker>/<logdir>/<topic>-<partition>/)", path=root)
    found: list[FleetLogDir] = []
    for broker_dir in sorted((e for e in os.scandir(base) if e.is_dir()), key=lambda e: e.name):
        path = Path(broker_dir.path)
        log_dirs = [path] if _is_log_dir(path) else sorted(
            (Path(e.path) for e in os.scandir(path) if e.is_dir() and _is_log_dir(Path(e.path))), key=lambda p: p.name)
        folder_id = _BROKER_FOLDER.match(broker_dir.name)
        for log_dir in log_dirs:
            meta_id = _meta_broker(log_dir)
            if meta_id is not None:
                found.append(FleetLogDir(meta_id, "meta.properties", str(log_dir)))
            elif folder_id is not None:
                found.append(FleetLogDir(int(folder_id.group(1)), "folder name", str(log_dir)))
            else:
                raise EvidenceError("no broker id: neither meta.properties (broker.id or node.id) nor a folder "
                                    "name like broker-3 or 3", path=str(log_dir))
    if not found:
        raise EvidenceError("holds no broker log directories (expected ROOT/<broker>/<logdir>/<topic>-<partition>/)",
                            path=root)
    return found
