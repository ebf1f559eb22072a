"""A broker's log directory as found on disk, and which files a path given on the command line
stands for.

* ``log_dir``: a log directory, its checkpoints and its partition directories;
* ``segments``: which segment files a path stands for (a segment, a partition directory, a log
  directory), mapped for the walk;
* ``index_files``: which index files a path stands for (``inspect-index``);
* ``replica_sizes``: how many bytes each replica holds (``kafka-log-dirs.sh --describe`` or the
  files).
"""
