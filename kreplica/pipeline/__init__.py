"""Fleet scale on Apache Spark through PySpark: the same formats/model/analysis code, run inside
Spark tasks (``local[*]`` by default, a cluster by ``--master``). Needs the ``fleet`` extra.

* ``layout``: where a fleet's evidence lies (``ROOT/<broker>/<logdir>/<topic>-<partition>/``);
* ``session``: the Spark session a fleet job runs in, its memory and ``--conf`` settings;
* ``tables``: one Arrow schema per Parquet table, and rows ↔ model values;
* ``scan``: ``fleet scan``: every segment of every replica walked once, into the tables;
* ``remote``: evidence on ``hdfs://``, ``s3a://`` and other URIs read through Spark's connectors;
* ``analyze``: ``fleet analyze``: per partition, the single-partition analyses on rebuilt logs.
"""
