"""The inspection commands as analyses: everything a file or a directory says, checked as Kafka
would check it and past where Kafka stops.

* ``inspect_log``: ``inspect-log``: walk segments, decode, check and emulate recovery in one pass;
* ``internal_records``: ``inspect-log --records``: the records of Kafka's internal topics decoded;
* ``inspect_dir``: ``inspect-dir``: everything one partition directory says, read together;
* ``inspect_index``: ``inspect-index``: an index file's entries against the segment beside it;
* ``zookeeper``: ``zk dump`` and ``zk log``: the nodes and transactions asked for, of what the
  ZooKeeper model replays and reads.
"""
