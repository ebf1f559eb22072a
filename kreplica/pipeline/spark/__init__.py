"""What every fleet job runs on: the Spark session, its driver JVM and the JVM's file systems.

* ``session``: the Spark context a fleet job runs in (its SQL session made only when used), its
  memory and ``--conf`` settings, how much of Spark's log shows (``log4j2.properties``), Ctrl-C;
* ``jvm_output``: the driver JVM's stdout and stderr, kept off the terminal unless asked for;
* ``jvm_archive``: the driver JVM's class-data-sharing archive, made by a first run and kept in
  kreplica's cache directory, which halves Spark's start;
* ``job_progress``: what each Spark job covers and how far the running ones are;
* ``hadoop_files``: files on any file system Spark reaches, handled from the driver through the
  JVM's Hadoop ``FileSystem``, and Hadoop's failures as one-line errors;
* ``arrow_map``: Arrow record batches through Python tasks (``mapInArrow``) without pandas.

The bottom of ``pipeline/``: it knows nothing of scans, tables or analyses.
"""
