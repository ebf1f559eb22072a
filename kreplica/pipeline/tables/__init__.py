"""The fleet's Parquet tables: their schemas, and the two ways they are written.

* ``schemas``: one Arrow schema per table, and rows to and from model values (README, "The
  fleet's tables", documents every column; a test holds the two together);
* ``parquet``: the Parquet files a scan's tasks write themselves, in bounded row groups;
* ``spark_writer``: the tasks' row groups kept by Spark and written by Spark's own writer, for an
  ``--output-dir`` URI no executor can write with Arrow.
"""
