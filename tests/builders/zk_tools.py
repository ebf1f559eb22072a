"""Parsers of what ZooKeeper's own tools print (``SnapshotFormatter``, ``TxnLogToolkit -d``), for
comparing kreplica's readings with theirs."""

from __future__ import annotations

import re


def parse_formatter(text: str) -> tuple[int, dict[str, dict[str, str]], list[tuple[int, int, int]]]:
    head, _, rest = text.partition("\n")
    count = int(re.match(r"ZNode Details \(count=(\d+)\):", head).group(1))
    nodes_part, _, sessions_part = rest.partition("Session Details (sid, timeout, ephemeralCount):\n")
    nodes: dict[str, dict[str, str]] = {}
    for block in nodes_part.split("----\n"):
        lines = [ln for ln in block.split("\n") if ln]
        if not lines:
            continue
        fields = {}
        for ln in lines[1:]:
            m = re.match(r"\s*(\w+) =\s?(.*)$", ln)
            fields[m.group(1)] = m.group(2)
        nodes[lines[0]] = fields
    sessions = []
    for ln in sessions_part.split("\n"):
        m = re.match(r"(0x[0-9a-f]+), (\d+), (\d+)$", ln.strip())
        if m:
            sessions.append((int(m.group(1), 16), int(m.group(2)), int(m.group(3))))
    return count, nodes, sessions


# -- TxnLogToolkit -d --------------------------------------------------------------------------

_ENTRY = re.compile(
    r"^(?P<date>\d{1,2}/\d{1,2}/\d{2}), (?P<time>\d{1,2}:\d{2}:\d{2})\s(?P<ampm>[AP]M) (?P<zone>\S+) "
    r"session 0x(?P<session>[0-9a-f]+) cxid 0x(?P<cxid>[0-9a-f]+) zxid 0x(?P<zxid>[0-9a-f]+) "
    r"(?P<op>\S+)(?: (?P<details>.*))?",
    re.M | re.S,
)


def parse_toolkit(text: str) -> tuple[str, list[dict], int]:
    header, _, _ = text.partition("\n")
    eof = re.search(r"^EOF reached after (\d+) txns\.$", text, re.M)
    body_end = eof.start() if eof else len(text)
    starts = [m.start() for m in re.finditer(r"^\d{1,2}/\d{1,2}/\d{2}, ", text[:body_end], re.M)]
    entries = []
    for i, s in enumerate(starts):
        chunk = text[s:starts[i + 1] if i + 1 < len(starts) else body_end].rstrip("\n")
        m = _ENTRY.match(chunk)
        assert m is not None, chunk[:120]
        entries.append(m.groupdict())
    return header, entries, int(eof.group(1)) if eof else -1
