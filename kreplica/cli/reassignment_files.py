"""The files ``plan-reassign --output-dir`` writes: Kafka's version-1 reassignment JSON, what
``kafka-reassign-partitions.sh --execute`` takes. Which partitions each file holds is decided in
:mod:`kreplica.analysis.reassignment.plan`; this module only writes them where the user said."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from kreplica.analysis.reassignment.plan import PlannedReassignment
from kreplica.formats.tools.reassignment_json import PartitionReassignment, build_reassignment_json

PROPOSAL_FILE = "proposal.json"
ROLLBACK_FILE = "rollback.json"
PHASE_FILE = "phase-{}.json"


def write_reassignment_file(path: Path, replicas: Mapping[tuple[str, int], Sequence[int]]) -> str:
    """Write one version-1 reassignment file; returns its path as text."""
    entries = [PartitionReassignment(t, p, tuple(r)) for (t, p), r in replicas.items()]
    path.write_bytes(build_reassignment_json(entries))
    return str(path)


def write_plan_files(out_dir: Path, planned: PlannedReassignment) -> tuple[list[str], dict[int, str]]:
    """``proposal.json``, ``rollback.json`` and each ``phase-N.json`` of ``planned`` in ``out_dir``
    (created if needed). Returns the files in the order written and each phase's file."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files = [write_reassignment_file(out_dir / PROPOSAL_FILE, planned.proposal),
             write_reassignment_file(out_dir / ROLLBACK_FILE, planned.rollback)]
    phase_files: dict[int, str] = {}
    for number, replicas in planned.phase_proposals.items():
        phase_files[number] = write_reassignment_file(out_dir / PHASE_FILE.format(number), replicas)
        files.append(phase_files[number])
    return files, phase_files
