"""Rendering only: text for people; json, ndjson and msgpack for programs. One place per schema.

Sub-layers (import-linter holds them to this order):

* ``results``: what each command returns, the analysis values with their objects and text;
* ``text``: the text reports, and the layout, numbers and safe text they share;
* ``schemas``: the machine objects, one module per command, every ``type`` listed in one table;
* ``output``: the output contract and the one seam that renders a result: formats, the emitter,
  the value rules, payloads, the ``finding`` object, the console.

``_crender`` (a C extension, ``_crender.c``) is the compiled twin of ``inspect-log``'s ndjson
batch and record lines (:mod:`kreplica.report.schemas.inspect_log`).
"""
