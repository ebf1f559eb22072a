"""``meta.properties`` (kafka-formats spec §8.5): which cluster and node a log directory belongs to.

One file per log directory root, a Java ``.properties`` file. Kafka's classes: ``MetaProperties``,
``MetaPropertiesVersion`` and ``PropertiesUtils`` in ``metadata/src/main/java/org/apache/kafka/
metadata/properties/`` (apache/kafka trunk 2024-10 baseline), and the JDK's
``java.util.Properties.load``/``store``, reproduced here (:func:`parse_java_properties`,
:func:`build_meta_properties`).

Layout (``Properties.load``: ISO-8859-1 with ``\\uXXXX`` escapes)::

    Properties => (Comment | Blank | Entry)*
    Comment    => ("#" | "!") text EOL
    Entry      => Key (WS* ("=" | ":") WS* | WS+) Value EOL   ("\\" EOL continues a line)

    v0 (ZooKeeper era): version=0 (or absent), broker.id (optional), cluster.id (optional)
    v1 (KRaft):         version=1, node.id (required), cluster.id (required)
    both, 3.7+:         directory.id (optional, base64url Uuid, KIP-858)

No checksum; written via ``meta.properties.tmp`` and an atomic rename, keys in hash order.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from kreplica.formats._java import java_parse_int, java_string_hash, java_trim
from kreplica.formats.errors import Malformed, UnsupportedVersion
from kreplica.formats.uuid import format_uuid, parse_uuid

META_PROPERTIES_VERSIONS = (0, 1)    # MetaPropertiesVersion at the baseline (V0, V1)
META_PROPERTIES_FILE = "meta.properties"


# --- java.util.Properties ---------------------------------------------------------------

def _properties_logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """``Properties.LineReader.readLine`` (JDK 9+): logical lines with comments and blank lines
    dropped, leading whitespace skipped, and ``\\``-newline continuations joined (the
    continuation's leading whitespace skipped). Yields ``(start offset, raw line)``."""
    n = len(text)
    off = 0
    while True:
        buf: list[str] = []
        start = off
        skip_ws = True
        appended_line_begin = False
        preceding_backslash = False
        while True:
            if off >= n:
                if not buf:
                    return
                yield start, "".join(buf[:-1] if preceding_backslash else buf)
                return
            c = text[off]
            off += 1
            if skip_ws:
                if c in " \t\f":
                    continue
                if not appended_line_begin and c in "\r\n":
                    continue
                skip_ws = False
                appended_line_begin = False
            if not buf:
                start = off - 1
                if c in "#!":
                    # A comment runs to the end of its natural line; no continuation.
                    while off < n and text[off] not in "\r\n":
                        off += 1
                    if off >= n:
                        return
                    off += 1
                    skip_ws = True
                    continue
            if c not in "\r\n":
                buf.append(c)
                preceding_backslash = (not preceding_backslash) if c == "\\" else False
                continue
            if not buf:
                skip_ws = True
                continue
            if off >= n:
                yield start, "".join(buf[:-1] if preceding_backslash else buf)
                return
            if preceding_backslash:
                buf.pop()                      # the backslash is not part of the line
                skip_ws = True
                appended_line_begin = True
                preceding_backslash = False
                if c == "\r" and text[off] == "\n":
                    off += 1
                continue
            yield start, "".join(buf)
            break


_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "f": "\f"}
_HEX = set("0123456789abcdefABCDEF")


def _properties_unescape(raw: str) -> str:
    """``Properties.loadConvert``: ``\\uXXXX`` (exactly four hex digits, else
    ``IllegalArgumentException``), ``\\t \\r \\n \\f``, and ``\\x`` → ``x`` for anything else."""
    out: list[str] = []
    i = 0
    n = len(raw)
    while i < n:
        c = raw[i]
        i += 1
        if c != "\\":
            out.append(c)
            continue
        if i >= n:                          # cannot happen after LineReader; be safe
            break
        c = raw[i]
        i += 1
        if c == "u":
            digits = raw[i:i + 4]
            if len(digits) < 4 or not set(digits) <= _HEX:
                raise ValueError("Malformed \\uxxxx encoding.")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_ESCAPES.get(c, c))
    text = "".join(out)
    # Java strings are UTF-16: escaped surrogate pairs form one character.
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def _properties_key_value(line: str) -> tuple[str, str]:
    # Properties.load0: the key ends at the first unescaped '=', ':' or whitespace; whitespace
    # and at most one '='/':' separator are skipped before the value.
    limit = len(line)
    key_len = 0
    value_start = limit
    has_sep = False
    preceding_backslash = False
    while key_len < limit:
        c = line[key_len]
        if c in "=:" and not preceding_backslash:
            value_start = key_len + 1
            has_sep = True
            break
        if c in " \t\f" and not preceding_backslash:
            value_start = key_len + 1
            break
        preceding_backslash = (not preceding_backslash) if c == "\\" else False
        key_len += 1
    while value_start < limit:
        c = line[value_start]
        if c not in " \t\f":
            if not has_sep and c in "=:":
                has_sep = True
            else:
                break
        value_start += 1
    return _properties_unescape(line[:key_len]), _properties_unescape(line[value_start:])


def parse_java_properties(content: bytes, *, path: str = "") -> tuple[dict[str, str], dict[str, int]]:
    """``java.util.Properties.load(InputStream)``: ISO-8859-1 bytes, ``\\uXXXX`` escapes, ``#``/``!``
    comments, ``key=value``/``key:value``/``key value``, line continuations; a later key wins.

    Returns the properties and, for each key, the byte offset of the line that set it. A bad
    ``\\u`` escape raises :class:`Malformed` ("Malformed \\\\uxxxx encoding.").
    """
    text = bytes(content).decode("latin-1")
    props: dict[str, str] = {}
    where: dict[str, int] = {}
    for start, line in _properties_logical_lines(text):
        try:
            key, value = _properties_key_value(line)
        except ValueError as exc:
            raise Malformed(f"{exc} (java.lang.IllegalArgumentException)", path=path,
                            position=start, field="properties line") from None
        props[key] = value
        where[key] = start
    return props, where


@dataclass(frozen=True, slots=True)
class MetaProperties:
    """``meta.properties`` as Kafka's ``MetaProperties.Builder(Properties)`` reads it.

    v0 (ZooKeeper era, or migrated): ``broker_id`` from ``broker.id`` if present, ``node_id``
    ``None``. v1 (KRaft): ``node_id`` from ``node.id``, ``broker_id`` ``None``. ``cluster_id``
    and ``directory_id`` (canonical text) are ``None`` when absent; ``properties`` holds every
    key as loaded. :attr:`effective_id` is the id to label the broker with.
    """

    version: int
    broker_id: int | None
    node_id: int | None
    cluster_id: str | None
    directory_id: str | None
    properties: dict[str, str] = field(hash=False, compare=False)

    @property
    def effective_id(self) -> int | None:
        """``broker_id`` for v0, ``node_id`` for v1 (Kafka's ``nodeId()`` in both cases)."""
        return self.broker_id if self.version == 0 else self.node_id


def _required_int(props: dict[str, str], where: dict[str, int], key: str, path: str) -> int:
    # PropertiesUtils.loadRequiredIntProp: no trimming (load keeps trailing spaces of a value).
    value = props.get(key)
    if value is None:
        raise Malformed(f"Failed to find {key}", path=path, position=0, field=key)
    try:
        return java_parse_int(value)
    except ValueError:
        raise Malformed(f"Unable to read {key} as a base-10 number.", path=path,
                        position=where.get(key, 0), field=key) from None


def parse_meta_properties(content: bytes, *, path: str) -> MetaProperties:
    """Read ``meta.properties`` (§8.5) with Kafka's rules and messages.

    Order of checks as in ``MetaProperties.Builder``: ``version`` (default ``0``; trimmed, then
    ``Integer.parseInt``: "Invalid meta.properties version string '…'"; only 0 and 1 exist at
    the baseline: "Unknown meta.properties version number N"); v0 ``broker.id`` if present, v1
    ``node.id`` required ("Failed to find node.id", "Unable to read node.id as a base-10
    number."); ``directory.id`` must pass ``Uuid.fromString`` ("Unable to read directory.id as
    a Uuid: …"); v1 requires ``cluster.id`` ("cluster.id was not found."). Cross-directory
    checks (same cluster, same node, unique directory ids) belong to the model.
    """
    props, where = parse_java_properties(content, path=path)
    version_text = props.get("version", "0")
    try:
        version = java_parse_int(java_trim(version_text))
    except ValueError:
        raise Malformed(f"Invalid meta.properties version string '{version_text}'", path=path,
                        position=where.get("version", 0), field="version") from None
    if version not in META_PROPERTIES_VERSIONS:
        raise UnsupportedVersion(f"Unknown meta.properties version number {version}", path=path,
                                 position=where.get("version", 0), field="version")
    broker_id = node_id = None
    if version == 0:
        if "broker.id" in props:
            broker_id = _required_int(props, where, "broker.id", path)
    else:
        node_id = _required_int(props, where, "node.id", path)
    cluster_id = props.get("cluster.id")
    directory_id = None
    if "directory.id" in props:
        try:
            directory_id = format_uuid(parse_uuid(props["directory.id"]))
        except Malformed as exc:
            raise Malformed(f"Unable to read directory.id as a Uuid: {exc.reason}", path=path,
                            position=where.get("directory.id", 0), field="directory.id") from exc
    if version != 0 and cluster_id is None:
        raise Malformed("cluster.id was not found.", path=path, position=0, field="cluster.id")
    return MetaProperties(version, broker_id, node_id, cluster_id, directory_id, dict(props))


def _properties_escape(text: str, *, is_key: bool) -> str:
    # Properties.saveConvert(text, escapeSpace=is_key, escapeUnicode=False): store(Writer) does
    # not escape non-ASCII; the writer encodes it as UTF-8.
    out: list[str] = []
    for i, c in enumerate(text):
        if c == "\\":
            out.append("\\\\")
        elif c == " ":
            out.append("\\ " if (i == 0 or is_key) else " ")
        elif c in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[c])
        elif c in "=:#!":
            out.append("\\" + c)
        else:
            out.append(c)
    return "".join(out)


def _concurrent_hash_map_order(keys: Sequence[str]) -> list[str]:
    # java.util.Properties (JDK 9-17) keeps a ConcurrentHashMap(8): 16 bins, iterated bin by
    # bin, insertion order within a bin. The table doubles when it reaches 3/4 full; a resize
    # may reorder a bin, so the order is exact up to 11 keys (meta.properties has at most 5).
    size = 16
    while len(keys) >= size * 3 // 4:
        size *= 2

    def bin_of(key: str) -> int:
        h = java_string_hash(key) & 0xFFFFFFFF   # as unsigned: Java shifts it with >>>
        return ((h ^ (h >> 16)) & 0x7FFFFFFF) & (size - 1)

    return sorted(keys, key=bin_of)   # sorted() is stable: insertion order within a bin


def build_meta_properties(props: Mapping[str, str], *, date: str = "Thu Jan 01 00:00:00 UTC 1970",
                          key_order: str = "hash") -> bytes:
    """``meta.properties`` as ``PropertiesUtils.writePropertiesFile`` writes it.

    ``Properties.store(writer, "")``: an empty ``#`` comment line, ``#`` + ``Date.toString()``
    (``date``; fixed by default so fixtures are reproducible), then ``key=value`` lines with
    ``saveConvert`` escaping, UTF-8. ``key_order`` is ``"hash"`` (the spec's "hash order": JDK
    9–17 ``ConcurrentHashMap`` order, ``props`` insertion order within a bin; Kafka inserts
    ``version``, ``cluster.id``, ``node.id``/``broker.id``, ``directory.id``) or ``"sorted"``
    (JDK 18 and later write the keys sorted).
    """
    keys = list(props)
    if key_order == "sorted":
        keys.sort()
    elif key_order == "hash":
        keys = _concurrent_hash_map_order(keys)
    else:
        raise ValueError(f"key_order must be 'sorted' or 'hash', not {key_order!r}")
    lines = ["#", f"#{date}"]
    lines.extend(f"{_properties_escape(k, is_key=True)}={_properties_escape(props[k], is_key=False)}"
                 for k in keys)
    return ("\n".join(lines) + "\n").encode("utf-8")

