"""What the evidence describes: log directories, partitions, replicas, epoch lineage and cache,
ZooKeeper trees and the cluster state. Built from formats/; prints nothing."""
