"""Every record of the real ``__consumer_offsets`` partitions and KRaft metadata logs of
``../shared/oracle/wild/`` (brokers of Kafka 2.x to 4.x, ZooKeeper and KRaft) decodes in
``inspect-log --records``: no coordinator or KRaft invalid- or unknown-record finding, and a
``decoded`` member on every record but the transaction markers."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from kreplica.analysis.inspect.inspect_log import InspectOptions, inspect_groups
from kreplica.analysis.inspect.internal_records import DecodedRecord
from kreplica.formats.findings import Finding
from kreplica.model.logdir.segments import find_segments
from kreplica.report.schemas.internal_records import decoded_object
from kreplica.report.output.formats import Payload
from kreplica.report.output.payload import encoder
from tests.interop.wild_cases import wild_dir

pytestmark = pytest.mark.interop

DECODING_KINDS = {"coordinator_invalid_record", "coordinator_unknown_record", "kraft_invalid_record",
                  "kraft_unknown_record"}


def _internal_files(root: Path) -> list[str]:
    """Every non-empty segment of a ``__consumer_offsets-N`` or ``__cluster_metadata-0``
    directory under ``root`` and every KRaft snapshot (``*.checkpoint``, which inspect-log reads
    when named), each content once (the corpus holds several commits of the same brokers)."""
    seen = set()
    out = []
    for path in sorted(root.glob("**/*")):
        internal = path.parent.name.startswith("__consumer_offsets-") or path.parent.name == "__cluster_metadata-0"
        if not (path.suffix == ".checkpoint" or (internal and path.suffix == ".log")) or not path.is_file():
            continue
        data = path.read_bytes()
        digest = hashlib.sha1(data).digest()
        if data and digest not in seen:
            seen.add(digest)
            out.append(str(path))
    return out


def test_every_internal_record_of_the_wild_corpus_decodes() -> None:
    paths = _internal_files(wild_dir())
    enc = encoder(Payload.base64)
    kinds: Counter[str] = Counter()
    types: Counter[str] = Counter()
    undecoded = []
    for group in find_segments(paths).groups:
        for event in inspect_groups([group], InspectOptions(records=True)):
            if isinstance(event, Finding):
                kinds[event.kind] += 1
            elif isinstance(event, DecodedRecord):
                if event.decoded is None:
                    if event.record.control_type not in (0, 1):
                        undecoded.append((group.partition, event.offset))
                    continue
                obj = decoded_object(event.decoded, enc)
                json.dumps(obj, allow_nan=False)
                types[f"{group.topic}:{obj['record_type']}:v{obj['value_version']}"] += 1
    assert {k: n for k, n in kinds.items() if k in DECODING_KINDS} == {}
    assert undecoded == []
    # what the corpus holds (its README): classic offset commits (values v1 to v4 across
    # the brokers' versions), group metadata, and KRaft metadata and snapshots
    offsets = sum(n for t, n in types.items() if t.startswith("__consumer_offsets:offset_commit"))
    assert offsets > 80_000
    assert any(t.startswith("__consumer_offsets:group_metadata") for t in types)
    assert types["__cluster_metadata:snapshot_header:v0"] > 0 and types["__cluster_metadata:topic_record:v0"] > 0
