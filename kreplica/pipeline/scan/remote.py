"""``fleet scan`` on remote evidence (``hdfs://``, ``s3a://``...: read through Spark's
connectors, :mod:`.remote`): the same stages, with the files fetched through Spark. Stage 1 runs
on a skeleton of each log directory, its small files filled in from what Spark fetched; stage 2
walks each segment of up to :data:`~.remote_ranges.WHOLE_FETCH_LIMIT` bytes in memory, fetched
whole, and each larger one from the ranges Spark reads of it (:mod:`.remote_ranges`), one task
each, never split. Every path in rows and results is given as its URI.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import replace

from kreplica.formats.mapped import EvidenceError
from kreplica.pipeline.evidence import remote as remote
from kreplica.pipeline.evidence.layout import FleetLogDir, discover
from kreplica.pipeline.scan.remote_ranges import WHOLE_FETCH_LIMIT, read_in_ranges, scan_ranged_segment
from kreplica.pipeline.scan.log_dirs import scan_log_dirs
from kreplica.pipeline.scan.segments import scan_segments
from kreplica.pipeline.scan.work import SegmentWalk, Stretch


def scan_fetched_log_dirs(out: str, index: int, tree: remote.RemoteTree, log_dirs: list[FleetLogDir],
                          rows: Iterable[tuple[str, bytes]]) -> Iterator[tuple]:
    """Stage 1 task on remote evidence: ``log_dirs`` (URIs) staged as skeletons in a local
    temporary directory, the files the readers read written there from the fetched ``(uri,
    content)`` rows, then scanned as :func:`scan_log_dirs` scans a local one, every path in
    rows and results given as its URI."""
    with tempfile.TemporaryDirectory(prefix="kreplica-stage-") as tmp:
        staging = remote.Staging(tmp, tree)
        entries = [e for d in log_dirs for e in tree.under(d.path)]
        staging.build(entries)
        for uri, content in rows:
            staging.put(uri, content)
        staging.check_complete(entries)
        staged = [replace(d, path=staging.local(d.path)) for d in log_dirs]
        yield from scan_log_dirs(out, index, staged, staging.relabel)


def scan_fetched_segments(out: str, records: bool, payloads: bool, index: int, by_uri: dict[str, Stretch],
                          rows: Iterable[tuple[str, bytes]]) -> Iterator[SegmentWalk]:
    """Stage 2 task on remote evidence: each ``(uri, content)`` Spark fetched is a whole
    segment, walked from memory as :func:`scan_segments` walks a mapped one."""
    def pairs():
        for uri, content in rows:
            stretch = by_uri.get(uri)
            if stretch is None:
                raise EvidenceError("Spark returned a segment under a name kreplica did not list", path=uri)
            yield stretch, memoryview(content)
    return scan_segments(out, records, payloads, index, pairs())


def scan_remote_log_dirs(spark, root: str, output, tasks: int) -> list[tuple]:
    """Stage 1 on remote evidence: the tree listed and its log directories found on the driver,
    then each log directory scanned in a task from the small files Spark fetches for it, writing
    into ``output`` (:mod:`.scan_output`)."""
    sc = spark.sparkContext
    tree = remote.list_tree(spark, root)
    log_dirs = _discover_remote(tree)
    slot = {d.path: i for i, d in enumerate(log_dirs)}
    uris = tree.fetched(e for d in log_dirs for e in tree.under(d.path))
    remote.refuse_globs(uris)
    n = min(len(log_dirs), tasks)

    def owner(uri: str) -> int:  # a log directory's own file, or a file of one of its partitions
        parent = uri.rpartition("/")[0]
        return slot[parent] if parent in slot else slot[parent.rpartition("/")[0]]

    if uris:
        fetched = remote.fetch(sc, uris, n).map(lambda pair: (owner(pair[0]), pair))
    else:
        fetched = sc.parallelize([], n).map(lambda row: row)
    shipped = sc.broadcast(tree)
    sc.setJobDescription("kreplica fleet scan: log directories")
    return output.run(fetched.partitionBy(n, lambda k: k), lambda out, i, it: scan_fetched_log_dirs(
        out, i, shipped.value, log_dirs[i::n], (v for _, v in it)))


def _discover_remote(tree: remote.RemoteTree) -> list[FleetLogDir]:
    """The fleet's log directories, found by :func:`discover` on a skeleton of the tree."""
    with tempfile.TemporaryDirectory(prefix="kreplica-skeleton-") as tmp:
        staging = remote.Staging(tmp, tree)
        staging.build(tree.entries, placeholders_for_content=True)
        try:
            return [staging.relabel(d) for d in discover(tmp)]
        except EvidenceError as exc:
            raise EvidenceError(staging.relabel(exc.reason), path=staging.relabel(exc.path)) from None


def walk_fetched(spark, segments: list[tuple], output, records: bool, payloads: bool,
                 tasks: int) -> list[SegmentWalk]:
    """Stage 2 on remote evidence: each segment up to :data:`WHOLE_FETCH_LIMIT` bytes fetched as
    one value and walked in memory, Spark packing them into about ``tasks`` tasks of even size;
    each larger one read in ranges by a task of its own (:mod:`.remote_ranges`)."""
    stretches = {files.log: Stretch(key, files, size, txn_index_below_base=txn) for key, files, size, txn in segments}
    remote.refuse_globs(stretches)
    whole = {uri: s for uri, s in stretches.items() if s.size <= WHOLE_FETCH_LIMIT}
    large = [s for s in stretches.values() if s.size > WHOLE_FETCH_LIMIT]
    sc = spark.sparkContext
    sc.setJobDescription("kreplica fleet scan: segments")
    walks = []
    if whole:
        shipped = sc.broadcast(whole)
        walks += output.run(remote.fetch(sc, list(whole), tasks), lambda out, i, pairs: scan_fetched_segments(
            out, records, payloads, i, shipped.value, pairs))
    if large:
        ranges, ranged = read_in_ranges(spark, large)
        work = sc.broadcast(ranged)
        walks += output.run(ranges, lambda out, i, numbered: scan_ranged_segment(
            out, records, payloads, i, work.value[i], numbered))
    return walks
