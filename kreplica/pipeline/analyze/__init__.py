"""``fleet analyze``: per partition, the single-partition analyses on logs rebuilt from the scan.

* ``partitions``: one partition's analysis across its replicas (the functions the
  single-partition commands call), and the objects it prints;
* ``tables``: the scan's rows gathered by partition, and the analysis tables written, published
  and read back for the output;
* ``run``: in the driver for small tables, else as one Spark job.
"""
