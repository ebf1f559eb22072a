"""What each command returns: its result, holding the analysis values it answers from, with
their machine objects (:mod:`kreplica.report.schemas`) and their text (:mod:`kreplica.report.text`,
imported only when text is written). Each is a :class:`~kreplica.report.output.seam.Report`, which
the one seam renders and whose ``has_problems`` gives the exit status.

* ``inspect_log``, ``inspect_index``, ``inspect_dir``: the inspections, streamed;
* ``replication``: ``epochs``, ``offset-for-epoch``, ``truncate-plan``, ``diverge``, each after
  the findings of its replicas' logs;
* ``groups``, ``transactions``: the coordinators' state against the data;
* ``zk``: ``zk dump`` and ``zk log``;
* ``cluster_state``, ``election`` (``plan-elect``, its plan or sweep), ``timeline``;
* ``reassignment``: ``plan-reassign``'s plan or verify;
* ``fleet``: ``fleet scan``, ``fleet analyze`` and ``fleet run``.
"""
