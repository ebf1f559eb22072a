"""ZooKeeper's files: jute, snapshots and transaction logs; and Kafka's znode payloads in them.

* ``jute``: jute, ZooKeeper's binary record encoding;
* ``snapshot``: ``snapshot.<zxid>``: the whole data tree at a zxid, sessions and ACLs;
* ``txnlog``: ``log.<zxid>``: every transaction, checksummed;
* ``znodes``: the JSON Kafka writes in its znodes (``ZkData.scala``), decoded once.
"""
