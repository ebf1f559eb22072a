"""KRaft's own files: the metadata log's records and a voter's election state.

* ``records``: the records of ``__cluster_metadata-0`` segments and ``*.checkpoint`` snapshots;
* ``quorum_state``: ``quorum-state``: a KRaft voter's election state.
"""
