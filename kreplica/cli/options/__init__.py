"""What the commands take, and the checks made before any work: one name per concept.

* ``common``: the options every command shares (``--format``, ``--payload``, ``--debug``,
  ``--kafka-version``), a control-plane SOURCE, ``--log-dirs BROKER=DIR``, and the missing-path
  check;
* ``sources``: the control-plane SOURCE and its position options (``--at-*``, ``--chroot``), the
  one rule for a point outside the evidence, a ``timeline``'s history;
* ``replicas``: the replica options and loading of the replication commands;
* ``groups``: ``--groups`` and the group evidence of the commands that report consumer impact;
* ``protocols``: ``--protocol``, the truncation protocol generation;
* ``reassignment``: ``plan-reassign``'s words and options, and its inputs loaded;
* ``names``: names the evidence never mentions and words outside a choice (did-you-mean);
* ``output_dirs``: directories a command writes into, checked before any work;
* ``reassignment_files``: the files ``plan-reassign --output-dir`` writes;
* ``usage``: the usage contract: one line per usage error, each command's class declaring the
  options that exclude each other or need another, and the old spellings kept as aliases.
"""
