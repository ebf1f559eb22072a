"""Large remote segments read in ranges, never held whole: a segment over
:data:`WHOLE_FETCH_LIMIT` bytes reaches its task as consecutive ranges of :data:`RANGE_BYTES`
that Spark's Hadoop connector reads one after another (``SparkContext.binaryRecords``, Spark's
fixed-length record reader, on a single split of the whole file; its records reach Python as raw
bytes, not pickled: 0.5 GB/s a core here, five times ``newAPIHadoopFile``'s), so neither the JVM nor
the Python worker holds more than a few ranges at a time, whatever the segment's size (Spark's
limit of 2 GiB for one value no longer applies). The task writes the ranges at their places in
a sparse file of the segment's size on the executor's disk (``SPARK_LOCAL_DIRS``; ranges of
zeros are left as holes), and walks that file mapped, exactly as a local segment is walked:
pages walked are handed back, holes skipped.

Spark's reader reads whole records only and fails on a shorter last one; it is told to take
that failure as the end of the file (``spark.files.ignoreCorruptFiles``, for these reads only),
the last ``size % RANGE_BYTES`` bytes are read by the driver (a positioned read through Hadoop)
and shipped with the work, and the task checks that it got every range before it walks: a read
that failed midway is an error, never a shorter segment.

A large remote segment is walked by one task, not split into stretches as a mapped one is: a
task gets one contiguous split from Spark's reader, while the walk of a stretch needs the bytes
after it (the batch across its end, the search for the next batch after damage).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass

from kreplica.formats.mapped import EvidenceError, open_buffer
from kreplica.pipeline.spark.hadoop_files import HadoopFiles
from kreplica.pipeline.scan.segments import scan_segments
from kreplica.pipeline.scan.work import SegmentWalk, Stretch
from kreplica.pipeline.tables.spark_writer import spool_dir

#: A remote segment larger than this is read in ranges; a smaller one is fetched as one value.
WHOLE_FETCH_LIMIT = 128 << 20
#: The size of one range: small enough that the driver's read of a segment's last, shorter
#: range and the work shipped with it stay small; large enough that the cost per range is not felt.
RANGE_BYTES = 64 << 10
#: Reads of the last ranges done at once by the driver (each waits on the store).
TAIL_THREADS = 8

_RECORD_LENGTH = "org.apache.spark.input.FixedLengthBinaryInputFormat.recordLength"
_SPLIT_MIN_SIZE = "mapreduce.input.fileinputformat.split.minsize"
_IGNORE_CORRUPT_FILES = "spark.files.ignoreCorruptFiles"


@contextmanager
def _ranges_of_whole_files(sc) -> Iterator[None]:
    """While reading RDDs are made (each keeps the settings it was made with): one split per file
    (the whole file, in order), and a failure to read a whole record taken as the end of the file
    (Spark's reader fails on the last, shorter one). Both configurations are left as they were,
    with the record length ``binaryRecords`` writes into Hadoop's."""
    spark_conf, hadoop_conf = sc._jsc.sc().conf(), sc._jsc.hadoopConfiguration()
    ignoring = spark_conf.getOption(_IGNORE_CORRUPT_FILES)
    hadoop_before = {key: hadoop_conf.get(key) for key in (_SPLIT_MIN_SIZE, _RECORD_LENGTH)}
    spark_conf.set(_IGNORE_CORRUPT_FILES, "true")
    hadoop_conf.set(_SPLIT_MIN_SIZE, str(1 << 62))
    try:
        yield
    finally:
        if ignoring.isDefined():
            spark_conf.set(_IGNORE_CORRUPT_FILES, ignoring.get())
        else:
            spark_conf.remove(_IGNORE_CORRUPT_FILES)
        for key, value in hadoop_before.items():
            if value is None:
                hadoop_conf.unset(key)
            else:
                hadoop_conf.set(key, value)


@dataclass(frozen=True, slots=True)
class RangedSegment:
    """A large remote segment's work: the segment, the size of its ranges, and its last range
    when that is shorter (read by the driver; ``b""`` when the ranges fill the file)."""

    stretch: Stretch
    range_bytes: int
    tail: bytes


def read_in_ranges(spark, stretches: list[Stretch]) -> tuple:
    """An RDD with one partition per segment, in the order of ``stretches``, each the segment's
    ``(number, range)`` pairs in order; and the :class:`RangedSegment` of each (its last,
    shorter range read here)."""
    sc = spark.sparkContext
    size = RANGE_BYTES
    with _ranges_of_whole_files(sc):
        rdds = [sc.binaryRecords(s.files.log, size) for s in stretches]
    files = HadoopFiles(spark)
    with ThreadPoolExecutor(TAIL_THREADS) as pool:
        tails = list(pool.map(lambda s: files.read(s.files.log, s.size - s.size % size, s.size % size)
                              if s.size % size else b"", stretches))
    for s, rdd in zip(stretches, rdds):
        if rdd.getNumPartitions() != 1:
            raise EvidenceError(f"Spark split this file into {rdd.getNumPartitions()} reads, not one", path=s.files.log)
    return sc.union(rdds).mapPartitions(enumerate), [RangedSegment(s, size, tail) for s, tail in zip(stretches, tails)]


def scan_ranged_segment(out: str, records: bool, payloads: bool, index: int, work: RangedSegment,
                        ranges: Iterable[tuple[int, bytes]]) -> Iterator[SegmentWalk]:
    """Stage 2 task on a large remote segment: its ranges written into a sparse file in place
    (all but the last, shorter one, which comes with the work), checked complete, then walked
    mapped as :func:`scan_segments` walks a local segment."""
    stretch, step, tail = work.stretch, work.range_bytes, work.tail
    uri, size = stretch.files.log, stretch.size
    with tempfile.NamedTemporaryFile(prefix="kreplica-segment-", dir=spool_dir()) as spool:
        fd = spool.fileno()
        os.ftruncate(fd, size)
        got = 0
        for number, data in ranges:
            if number != got or len(data) != step:
                break
            if data.count(0) != step:  # a range of zeros stays a hole
                os.pwrite(fd, data, number * step)
            got += 1
        if got * step + len(tail) != size:
            raise EvidenceError(f"Spark's reader returned {got * step + len(tail)} of its {size} bytes", path=uri)
        if tail.count(0) != len(tail):
            os.pwrite(fd, tail, got * step)
        with open_buffer(spool.name) as buf:
            yield from scan_segments(out, records, payloads, index, [(stretch, buf)])
