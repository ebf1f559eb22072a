"""What the evidence describes, built from formats/; prints nothing.

* ``log``: one replica's partition log, read once by one walk (or rebuilt from table rows) and
  shared by every command: its lineage, epoch cache, cuts and the replicas a user named;
* ``logdir``: a broker's log directory as found on disk, and which files a path stands for;
* ``coordinator``: consumer groups and transactional ids as their coordinators load them;
* ``cluster``: the cluster state a controller believed in, from ZooKeeper or KRaft, and where
  replicas are (the input of placement);
* ``zookeeper``: ZooKeeper's data tree, its files and their replay;
* ``versions`` (a module): every Kafka version switch (``Feature``) and truncation protocol
  generation;
* ``evidence_span`` (a module): how far a piece of evidence reaches, which a point asked for
  must lie within.

Sub-layers (import-linter checks them): ``coordinator`` | ``cluster`` above ``log`` above
``logdir`` above ``zookeeper``.
"""
