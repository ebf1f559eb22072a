"""Fleet scale on Apache Spark through PySpark: the same formats/model/analysis code, run inside
Spark tasks (``local[*]`` by default, a cluster by ``--master``). Needs the ``fleet`` extra
(``pip install 'kreplica[fleet]'``: PySpark and pyarrow); no other command imports this package's
Spark or Parquet modules.

Each package does one part (import-linter holds them to this order):

* ``analyze``: ``fleet analyze``, per partition, the single-partition analyses on rebuilt logs;
* ``scan``: ``fleet scan``, every segment walked once into the tables, in three stages;
* ``tables``: the Parquet tables' schemas and writers;
* ``evidence``: where a fleet's evidence lies, locally or on a file system only Spark reads;
* ``spark``: the Spark session, its driver JVM and the JVM's file systems;
* ``break_even`` (a module): below what evidence the single-partition commands answer sooner
  than the fleet;
* ``fleet`` (a module): ``fleet scan``, ``fleet analyze`` and ``fleet run`` as one call each,
  Spark started where they need it.
"""
