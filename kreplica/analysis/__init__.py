"""Kafka's decisions, reproduced: recovery, log loading, index verification, OffsetForLeaderEpoch,
follower truncation and divergence. Version-dependent behaviour is an explicit parameter."""
