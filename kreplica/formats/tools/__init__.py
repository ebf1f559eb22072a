"""The JSON documents Kafka's command-line tools print and take.

* ``reassignment_json``: the reassignment JSON of ``kafka-reassign-partitions.sh`` (version 1);
* ``log_dirs_describe``: what ``kafka-log-dirs.sh --describe`` prints: replica sizes per broker and
  log dir;
* ``_tool_json``: the JSON document among a tool's prose (private).
"""
