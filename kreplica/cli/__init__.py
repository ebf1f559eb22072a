"""Thin typer commands: parse options, reject bad ones at once, call one operation, hand its
result to the one output seam, return the exit code it comes to.

* ``main``: the ``kreplica`` application, one sub-app per command module merged at the top level,
  each imported when its command runs;
* ``commands``: one module per command;
* ``options``: what the commands take (shared options, sources, replicas, names, group
  evidence, output directories) and the checks made before any work;
* ``runner``: the one wrapper that maps what a command raises to the exit codes, and ``show``,
  which renders a command's result through the seam and gives its exit status; ``exit_codes``:
  those codes (``ExitCode``);
* ``implementations``: which record decoder, renderer and CRC run (``--version``, ``--debug``);
* ``progress``: progress on stderr for long reads, and the fleet's display of Spark's jobs;
* ``manpage``: the man pages, generated from ``--help``.
"""
