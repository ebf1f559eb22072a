"""The output contract shared by every command (ARCHITECTURE.md, "Output contract"), and the one
seam that renders a command's result.

* ``seam``: :class:`~kreplica.report.output.seam.Report`, what every command returns (a stream's:
  ``StreamedReport``), and
  :func:`~kreplica.report.output.seam.write`, which renders it as text, json, ndjson or msgpack;
* ``formats``: the formats and ``--payload`` modes, and the choice of format;
* ``emitter``: the one path machine output takes (buffered blocks, json arrays, msgpack);
* ``encoding``: one rule for the values of every machine format (no NaN), the JSON text;
* ``payload``: byte payloads per ``--payload`` (one, or a batch's at once);
* ``findings``: the ``finding`` object every command writes;
* ``console``: the rich console of text output.
"""
