"""Thin typer commands: parse options, reject bad ones at once, call analysis, hand results to
report, return an exit code.

* ``main``: the ``kreplica`` application, one sub-app per command module merged at the top level;
* one module per command: ``inspect_log``, ``inspect_index``, ``inspect_dir``, ``epochs``,
  ``offset_for_epoch``, ``truncate_plan``, ``diverge``, ``zk``, ``cluster_state``, ``plan_elect``,
  ``plan_reassign``, ``timeline``, ``fleet``, ``transactions``, ``groups``;
* ``runner``: the one wrapper that maps what a command raises to the exit codes, and
  ``exit_codes``: those codes (``ExitCode``);
* ``options``: options shared by commands (one name per concept) and the missing-path check;
* ``replicas``: the replica options and loading of the replication commands;
* ``group_evidence``: consumer group evidence and the ``consumer_impact`` objects of the
  commands that report it;
* ``sources``: the control-plane SOURCE, its position options and the rule for a point outside
  the evidence;
* ``names``: names the evidence never mentions and words outside a choice (did-you-mean);
* ``output_dirs``: directories a command writes into, checked before any work;
* ``reassignment_files``: the files ``plan-reassign --output-dir`` writes;
* ``implementations``: which record decoder, renderer and CRC run (``--version``, ``--debug``);
* ``progress``: progress on stderr for long reads;
* ``manpage``: the man pages, generated from ``--help``.
"""
