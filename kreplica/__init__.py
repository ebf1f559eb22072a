"""kreplica: offline forensics for Apache Kafka replication.

Layers, left to right (a module imports only from its own layer and those to its left):
``formats`` (bytes to typed values) → ``model`` (what the evidence describes) → ``analysis``
(Kafka's decisions, reproduced) → ``report`` (rendering) → ``cli`` (thin commands).
"""

__version__ = "0.1.0"
