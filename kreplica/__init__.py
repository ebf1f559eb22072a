"""kreplica: offline forensics for Apache Kafka replication.

Layers, left to right (a module imports only from its own layer and those to its left):

* ``formats``: bytes to typed values, by file family (``log``, ``logdir``, ``kraft``, ``zookeeper``,
  ``tools``);
* ``model``: what the evidence describes: a replica's partition log read once, log directories,
  the epoch cache, ZooKeeper trees, the cluster state;
* ``analysis``: Kafka's decisions, reproduced, by question (``log``, ``replication``, ``election``,
  ``reassignment``, ``timeline``, ``inspect``);
* ``pipeline``: the same analyses fleet-wide on Apache Spark (the ``fleet`` extra);
* ``report``: rendering, one schema per output;
* ``cli``: thin commands and the one runner that maps errors to exit codes.
"""

__version__ = "0.1.0"
