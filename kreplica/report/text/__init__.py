"""Text for people: each command's text report, rendered from the objects of its schema (so the
text cannot say what the machine output does not), and the layout they share.

* ``layout``: text at the terminal's width (prose wrapped under a hanging indent, tables that
  wrap and then leave out their least important columns, previews cut to the room, colours on
  lines written without rich);
* ``numbers``: numbers and plurals written one way; ``safe_text``: evidence made safe for a
  terminal; ``findings``: a finding as one line;
* one module per command or family: ``inspect_log`` (and ``internal_records``),
  ``inspect_index``, ``inspect_dir``, ``replication`` (after ``log_findings``, the findings of the
  replicas' logs), ``consumer_impact``, ``groups``, ``transactions``, ``zk``, ``cluster_state``,
  ``election``, ``timeline``, ``reassignment``, ``fleet``.
"""
