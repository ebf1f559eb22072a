"""Kafka's coordinator topics: ``__consumer_offsets``, ``__transaction_state``, ``__share_group_state``.

* ``records``: the key/value frame, one decoder for the three topics (:class:`CoordinatorRecord`);
* ``group_records``: the group coordinator's schemas, classic and KIP-848/KIP-932/KIP-1071 groups;
* ``transaction_records``: the transaction log's schemas and transaction state names;
* ``share_records``: the share coordinator's schemas;
* ``consumer_protocol``: the ``consumer`` protocol's subscription and assignment bytes.

Every schema is read by the one generic reader, :mod:`kreplica.formats.generated_messages`.
"""
