"""Rendering only: text for people; json, ndjson and msgpack for programs. One place per schema.

* ``output``: the output contract shared by every command (formats, the emitter, one serialiser
  rule);
* one schema module per command or family, with its text report beside it where it is long:
  ``inspect_log`` (and ``inspect_log_text``, and ``internal_records`` for the decoded records of
  Kafka's internal topics), ``inspect_index``, ``inspect_dir``,
  ``replication`` (epochs, offset-for-epoch, truncate-plan, diverge), ``zk``, ``cluster_state``
  (and ``cluster_state_text``), ``election``, ``reassignment``, ``timeline`` (and
  ``timeline_text``), ``fleet``, ``transactions``, ``groups`` (and ``groups_text``),
  ``consumer_impact`` (what a replication event does to consumer groups, in the commands that
  find one);
* ``log_findings``: the findings of a replica's log that the replication commands report first;
* ``salvage``: the files ``truncate-plan --export`` writes;
* ``describe``: words for the raw codes the formats layer yields;
* ``payload``: byte payloads per ``--payload``; ``safe_text``: evidence made safe for a terminal;
* ``numbers`` and ``text_layout``: numbers written one way, and text laid out for the terminal's
  width.
"""
