"""Fleet scale on Apache Spark through PySpark: the same formats/model/analysis code, run inside
Spark tasks (``local[*]`` by default, a cluster by ``--master``). Needs the ``fleet`` extra
(``pip install 'kreplica[fleet]'``: PySpark and pyarrow); no other command imports this package's
Spark or Parquet modules.

* ``layout``: where a fleet's evidence lies (``ROOT/<broker>/<logdir>/<topic>-<partition>/``);
* ``session``: the Spark context a fleet job runs in (its SQL session made only when used), its
  memory and ``--conf`` settings, how much of Spark's log shows (``log4j2.properties``), Ctrl-C;
* ``jvm_output``: the driver JVM's stdout and stderr, kept off the terminal unless asked for;
* ``jvm_archive``: the driver JVM's class-data-sharing archive, made by a first run and kept in
  kreplica's cache directory, which halves Spark's start;
* ``job_progress``: what each Spark job covers and how far the running ones are, for the
  commands' progress display;
* ``tables``: one Arrow schema per Parquet table, and rows ↔ model values;
* ``parquet_writers``: the Parquet files a scan's tasks write themselves, in bounded row groups;
* ``scan_output``: where a scan's tables go: a directory every task writes into, or any URI
  Spark writes (``spark_tables``: the tasks' row groups kept by Spark, then written by Spark's
  own writer); the stages use either alike;
* ``hadoop_files``: files on any file system Spark reaches, handled from the driver through the
  JVM's Hadoop ``FileSystem`` (checking, moving and marking tables; a few bytes of a file);
* ``arrow_map``: Arrow record batches through Python tasks (``mapInArrow``) without pandas,
  and the Spark schema of an Arrow one;
* ``scan``: ``fleet scan``: the work planned (large segments split into stretches), the stages
  run on Spark and their reports joined;
* ``scan_work``: what the scan's driver and tasks hand each other (stretches, segment walks,
  totals);
* ``scan_log_dirs``: stage 1, one task per log directory: ``replicas`` rows, the segment list;
* ``scan_segments``: stage 2, each segment walked once: batches, markers, findings, records;
* ``scan_groups``: the ``group_offsets`` and ``transactions`` rows of Kafka's internal topics
  (stage 1), and the committed offsets ``fleet analyze`` reads back;
* ``scan_checks``: stage 3, the checks across segment boundaries, redone only where they change;
* ``remote``: evidence on ``hdfs://``, ``s3a://`` and other URIs listed and fetched through
  Spark's connectors, and staged for the readers;
* ``remote_scan``: the scan's stages on such evidence (fetched small files, segments in memory);
* ``remote_ranges``: large remote segments read in ranges into a sparse file on the executor's
  disk, never held whole;
* ``analyze``: ``fleet analyze``: per partition, the single-partition analyses on rebuilt logs;
* ``analysis_tables``: the scan's rows gathered by partition, and the analysis tables written,
  published and read back for the output;
* ``analyze_run``: ``fleet analyze`` in the driver for small tables, else as one Spark job;
* ``break_even``: below what evidence the single-partition commands answer sooner than the fleet.
"""
