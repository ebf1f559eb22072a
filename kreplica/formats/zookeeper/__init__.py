"""ZooKeeper's files: jute, snapshots and transaction logs.

* ``jute``: jute, ZooKeeper's binary record encoding;
* ``snapshot``: ``snapshot.<zxid>``: the whole data tree at a zxid, sessions and ACLs;
* ``txnlog``: ``log.<zxid>``: every transaction, checksummed.
"""
