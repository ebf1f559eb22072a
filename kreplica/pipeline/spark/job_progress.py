"""How far a fleet command's Spark jobs are, for kreplica's own progress display (Spark's console
bar is off, :mod:`.session`).

The driver announces each job with what it covers (:class:`JobWork`: files, bytes, partitions),
as it plans it; how far the job is comes from Spark's status tracker (:func:`jobs_done`): the
tasks completed out of the tasks of the running jobs' stages. Tasks are balanced by bytes, so
the share of tasks done is the share of the work done, to within a task.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class JobWork:
    """What one Spark job of a fleet command covers (zero: not counted in this job)."""

    what: str
    files: int = 0
    bytes: int = 0
    partitions: int = 0


#: Told of each job as it starts (``None``: nobody is watching).
JobAnnouncer = Callable[[JobWork], None] | None


def announce(progress: JobAnnouncer, work: JobWork) -> None:
    if progress is not None:
        progress(work)


def jobs_done(spark) -> float | None:
    """The share of the running jobs' tasks completed (0 to 1), over every stage of theirs Spark
    has planned so far; ``None`` when no job runs. Safe to call from another thread."""
    tracker = spark.sparkContext.statusTracker()
    total = done = 0
    for job in tracker.getActiveJobsIds():
        info = tracker.getJobInfo(job)
        for stage in (info.stageIds if info is not None else ()):
            stage_info = tracker.getStageInfo(stage)
            if stage_info is not None:
                total += stage_info.numTasks
                done += stage_info.numCompletedTasks
    return done / total if total else None
