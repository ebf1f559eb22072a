"""Where a fleet's evidence lies, on a local disk or on a file system only Spark reads.

* ``layout``: ``ROOT/<broker>/<logdir>/<topic>-<partition>/``, discovered;
* ``remote``: evidence on ``hdfs://``, ``s3a://`` and other URIs listed and fetched through
  Spark's connectors, and staged for the readers.
"""
