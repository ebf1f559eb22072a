"""The files ``plan-reassign --output-dir`` writes: Kafka's version-1 reassignment JSON, what
``kafka-reassign-partitions.sh --execute`` takes. Which partitions each file holds is decided in
:mod:`kreplica.analysis.reassignment.plan`; this module only writes them where the user said, into
a directory that holds no earlier plan (or, with ``--overwrite``, once that plan's files are gone:
an old ``phase-2.json`` left beside a new ``proposal.json`` would be executed as if it were new)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from kreplica.analysis.reassignment.plan import PlannedReassignment
from kreplica.cli.options.output_dirs import (
    OUTPUT_DIR_OPTION,
    OVERWRITE_OPTION,
    listing,
    own_files,
    remove_earlier,
    require_writable_dir,
)
from kreplica.formats.tools.reassignment_json import PartitionReassignment, build_reassignment_json
from kreplica.formats.usage import UsageError

PROPOSAL_FILE = "proposal.json"
ROLLBACK_FILE = "rollback.json"
PHASE_FILE = "phase-{}.json"
#: every name a plan's file can have: the only files ``--overwrite`` removes
PLAN_FILE_NAME = re.compile(r"(?:proposal|rollback|phase-[1-9][0-9]*)\.json")


def earlier_plan_files(out_dir: Path, overwrite: bool) -> tuple[Path, ...]:
    """Check ``--output-dir`` before planning: a directory that can be written and holds nothing,
    or (``overwrite``) nothing in the way. Returns the earlier plan's files, to remove when the
    new plan is written; anything else there is refused without ``overwrite`` (exit 2, naming
    what the directory holds) and kept with it."""
    require_writable_dir(out_dir, OUTPUT_DIR_OPTION)
    entries = sorted(out_dir.iterdir()) if out_dir.exists() else []
    if not entries:
        return ()
    earlier = own_files([p for p in entries if PLAN_FILE_NAME.fullmatch(p.name)], out_dir, OUTPUT_DIR_OPTION)
    if not overwrite:
        held = listing(p.name + ("/" if p.is_dir() else "") for p in entries)
        hint = (f"give {OVERWRITE_OPTION} to replace the earlier plan (its proposal.json, rollback.json and "
                "phase-N.json; nothing else is removed)" if earlier else
                f"choose an empty directory, or give {OVERWRITE_OPTION} to write the plan beside them")
        raise UsageError(f"is not empty: it holds {held}; {hint}", path=str(out_dir), option=OUTPUT_DIR_OPTION)
    return earlier


def write_reassignment_file(path: Path, replicas: Mapping[tuple[str, int], Sequence[int]]) -> str:
    """Write one version-1 reassignment file; returns its path as text."""
    entries = [PartitionReassignment(t, p, tuple(r)) for (t, p), r in replicas.items()]
    path.write_bytes(build_reassignment_json(entries))
    return str(path)


def write_plan_files(out_dir: Path, planned: PlannedReassignment,
                     earlier: Iterable[Path] = ()) -> tuple[list[str], dict[int, str]]:
    """``proposal.json``, ``rollback.json`` and each ``phase-N.json`` of ``planned`` in ``out_dir``
    (created if needed), once the ``earlier`` plan's files (:func:`earlier_plan_files`) are
    removed. Returns the files in the order written and each phase's file."""
    remove_earlier(earlier)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = [write_reassignment_file(out_dir / PROPOSAL_FILE, planned.proposal),
             write_reassignment_file(out_dir / ROLLBACK_FILE, planned.rollback)]
    phase_files: dict[int, str] = {}
    for number, replicas in planned.phase_proposals.items():
        phase_files[number] = write_reassignment_file(out_dir / PHASE_FILE.format(number), replicas)
        files.append(phase_files[number])
    return files, phase_files
