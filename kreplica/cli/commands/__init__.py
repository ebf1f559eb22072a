"""One module per command, thin: parse the options (rejecting bad ones at once), call one
operation, hand its result to the seam (``kreplica.cli.runner.show``), which renders it and
returns the exit status the result comes to.

``inspect_log``, ``inspect_index``, ``inspect_dir``, ``epochs``, ``offset_for_epoch``,
``truncate_plan``, ``diverge``, ``groups``, ``zk`` (``zk dump``, ``zk log``), ``cluster_state``,
``plan_elect``, ``timeline``, ``fleet`` (``fleet scan``, ``fleet analyze``, ``fleet run``),
``plan_reassign``, ``transactions``. :data:`kreplica.cli.main.COMMANDS` names them; none imports
another.
"""
