"""Consumer groups against the rest of the evidence.

* ``replicas``: replicas of one ``__consumer_offsets`` partition against each other: which one
  answers (the highest log end offset) and where their groups and offsets disagree;
* ``offset_fit``: committed offsets against the data partitions they point into (beyond every
  replica's log end, or below its log start);
* ``state``: the answer ``kreplica groups`` gives per partition: the replicas joined, expiry
  applied, the groups asked for, the offsets checked;
* ``committed``: every group's committed offsets as ``groups`` answers them, for the commands
  that join groups with what they find (consumer impact, stalled groups).
"""
