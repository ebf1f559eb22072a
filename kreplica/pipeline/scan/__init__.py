"""``fleet scan``: every segment of every replica of a fleet, walked once, into the tables.

* ``run``: the work planned (large segments split into stretches), the stages run on Spark and
  their reports joined;
* ``work``: what the scan's driver and tasks hand each other (stretches, segment walks, totals);
* ``log_dirs``: stage 1, one task per log directory: ``replicas`` rows, the segment list;
* ``groups``: the ``group_offsets`` and ``transactions`` rows of Kafka's internal topics (stage
  1), and the committed offsets ``fleet analyze`` reads back;
* ``segments``: stage 2, each segment walked once: batches, markers, findings, records;
* ``checks``: stage 3, the checks across segment boundaries, redone only where they change;
* ``output``: where the tables go (a directory every task writes into, or a URI Spark writes);
* ``remote``: the stages on remote evidence (fetched small files, segments in memory);
* ``remote_ranges``: large remote segments read in ranges into a sparse file on the executor's
  disk, never held whole.
"""
