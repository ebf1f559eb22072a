"""What a starting broker does with its log directory's ``remote-log-index-cache``.

Source (apache/kafka, the 4.4.0 jar): ``storage/src/main/java/org/apache/kafka/storage/internals/
log/RemoteIndexCache.java``, ``init``. The directory is tiered storage's cache of indexes fetched
from remote storage, in the first ``log.dirs`` entry; it is not partition data and the log
manager skips it. At start-up ``init``:

1. deletes every ``*.deleted`` (an entry evicted, its files renamed and deleted asynchronously)
   and ``*.tmp`` file (a fetch cut short): leftovers of normal work;
2. parses the segment id of every other name (``<offset>_<uuid>.<suffix>``) and, where one of a
   segment's ``.index``, ``.timeindex`` and ``.txnindex`` is missing, deletes the others; a
   complete triple is loaded (its offset parsed, each index sanity-checked).

Nothing in step 2 catches an exception: a name whose id ``Uuid.fromString`` refuses, or a
complete triple whose offset is not a long, fails ``RemoteIndexCache``'s construction and with it
the broker's start (``RemoteLogManager`` is built in ``BrokerServer.startup``). Before 4.0 the
first step compared whole path components (``Path.endsWith``), so leftovers stayed and were
parsed like the rest; kreplica follows 4.4. The cached indexes themselves are not read here.
"""

from __future__ import annotations

from collections import defaultdict

from kreplica.formats.findings import Finding
from kreplica.formats.logdir.naming import REMOTE_LOG_INDEX_CACHE, FileKind, classify_remote_index_file

_TRIPLE = frozenset({FileKind.INDEX, FileKind.TIMEINDEX, FileKind.TXNINDEX})


def remote_index_cache_findings(log_dir_path: str, names: tuple[str, ...]) -> list[Finding]:
    """The findings on a log directory's ``remote-log-index-cache`` holding ``names``: one
    ``remote_index_cache`` note saying what it holds and what the next start removes (normal
    state, never a warning), and a ``restart_refused`` error per name ``init`` fails on."""
    cache = f"{log_dir_path}/{REMOTE_LOG_INDEX_CACHE}"
    leftovers = []
    by_prefix: dict[str, set[FileKind]] = defaultdict(set)
    findings = []
    for name in names:
        f = classify_remote_index_file(name.rstrip("/"))
        if f.kind in (FileKind.DELETED, FileKind.TMP):
            leftovers.append(name)
            continue
        if f.error is not None:
            findings.append(Finding("restart_refused", f"{cache}/{name}", 0,
                                    f"{REMOTE_LOG_INDEX_CACHE}/{name}: RemoteIndexCache's start-up cannot parse this "
                                    f"name ({f.error}): the broker fails to start",
                                    details={"file_kind": "remote_index"}))
            continue
        by_prefix[f.prefix].add(f.kind)
    complete = []
    for prefix in sorted(p for p, kinds in by_prefix.items() if _TRIPLE <= kinds):
        if classify_remote_index_file(prefix + ".index").start_offset is not None:
            complete.append(prefix)
        else:
            findings.append(Finding("restart_refused", f"{cache}/{prefix}.index", 0,
                                    f"{REMOTE_LOG_INDEX_CACHE}/{prefix}.*: the start offset before '_' is not a long: "
                                    "RemoteIndexCache's start-up fails on it (Long.parseLong), and the broker with it",
                                    details={"file_kind": "remote_index"}))
    incomplete = sorted(p for p, kinds in by_prefix.items() if not _TRIPLE <= kinds)
    parts = [f"indexes of {len(complete)} remote segment{'s' if len(complete) != 1 else ''}, fetched from remote "
             "storage by RemoteIndexCache (a cache, not partition data)"]
    if leftovers:
        parts.append(f"{len(leftovers)} .deleted or .tmp file{'s' if len(leftovers) != 1 else ''} of evictions and "
                     "fetches, which the next start deletes")
    if incomplete:
        parts.append(f"{len(incomplete)} segment{'s' if len(incomplete) != 1 else ''} missing one of .index, "
                     f".timeindex, .txnindex ({', '.join(incomplete[:3])}), whose files the next start deletes")
    findings.insert(0, Finding("remote_index_cache", cache, 0, f"{REMOTE_LOG_INDEX_CACHE}/: " + "; ".join(parts),
                               severity="info",
                               details={"segments": len(complete), "leftovers": len(leftovers),
                                        "incomplete": len(incomplete)}))
    return findings
