"""What several test modules build their evidence with: kreplica's writers put together into
replicas, clusters, histories, fleets and coordinator partitions, and parsers of the reference
tools' output. A test that needs one imports it from here, never from another test module."""
