"""ZooKeeper snapshot files (``snapshot.<zxid-hex>[.gz|.snappy]``): the whole data tree at a zxid.

Sources (apache/zookeeper ``release-3.8.0-1``, compared with master ``53a78e36``):
``zookeeper-server/src/main/java/org/apache/zookeeper/server/persistence/FileSnap.java``,
``SnapStream.java``, ``server/util/SerializeUtils.java``, ``server/DataTree.java``
(``serialize``/``serializeNode``), ``server/DataNode.java``, ``server/ReferenceCountedACLCache.java``;
``../shared/specs/zookeeper-formats.md`` §3.

Layout of the (uncompressed) stream, in jute::

    FileHeader        int magic = 0x5A4B534E "ZKSN", int version = 2, long dbid = -1
    sessions          int count; count x { long sessionId, int timeOut }
    ACL cache         int count; count x { long aclId, vector<ACL{int perms, ustring scheme, ustring id}> }
    nodes             { ustring path, DataNode }* until the path "/"   (the root's path is "")
    DataNode          buffer data, long acl, StatPersisted
    StatPersisted     long czxid, long mzxid, long ctime, long mtime, int version,
                      int cversion, int aversion, long ephemeralOwner, long pzxid
    seal #1           long adler32, ustring "/"
    digest   (3.6+)   long zxid, int digestVersion, long digest (version < 2: ustring)
    seal #2  (3.6+)   long adler32, ustring "/"
    lastProcessedZxid (3.9+) long zxid, then seal #3

What the seals cover: each is the Adler-32 (``CheckedOutputStream``) of *every* byte of the
uncompressed stream written before it, header included and never reset, so seal #2 also
covers seal #1. ZooKeeper checks seal #1 (and #2 when it reads a digest) and, on mismatch,
falls back to an older snapshot; here a mismatch is a finding and the nodes are still yielded.
Which trailers exist is decided, as ZooKeeper's own configuration would, from the bytes left
after seal #1: 0 none, 21 lastProcessedZxid only, otherwise a digest first.

Compression is chosen by the file name's last dot-separated part (``SnapStream.getStreamMode``):
``gz`` is a gzip member, ``snappy`` is xerial snappy-java stream framing (``\\x82SNAPPY\\0``,
int version, int compatible version, then int-length-prefixed raw Snappy blocks), anything else
is plain. Positions in errors and findings are positions in the uncompressed stream.
"""

from __future__ import annotations

import mmap
import os
import struct
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import NamedTuple

from kreplica.formats import codecs
from kreplica.formats.errors import FormatError, Malformed, UnsupportedVersion
from kreplica.formats.findings import Finding
from kreplica.formats.zookeeper.jute import JuteReader, build_buffer, build_int, build_long, build_ustring
from kreplica.formats.mapped import Buffer, open_buffer

SNAP_MAGIC = 0x5A4B534E  # "ZKSN"
SNAP_VERSION = 2
GZIP_MAGIC = b"\x1f\x8b"
SNAPPY_MAGIC = codecs.SNAPPY_MAGIC
#: ``SnapStream.isValidSnapshot`` for plain files: the last 5 bytes are int 1 + "/".
PLAIN_SEAL_TAIL = b"\x00\x00\x00\x01/"

FILE_HEADER = struct.Struct(
    ">"
    "i"  # magic
    "i"  # version
    "q"  # dbid
)
SESSION = struct.Struct(
    ">"
    "q"  # sessionId
    "i"  # timeOut
)
STAT_PERSISTED = struct.Struct(
    ">"
    "q"  # czxid
    "q"  # mzxid
    "q"  # ctime
    "q"  # mtime
    "i"  # version
    "i"  # cversion
    "i"  # aversion
    "q"  # ephemeralOwner
    "q"  # pzxid
)
#: A node's fixed tail: ``long acl`` then ``StatPersisted`` (one unpack in the hot loop).
NODE_TAIL = struct.Struct(">q" + STAT_PERSISTED.format[1:])
#: The loader's read of a node's tail: ``long acl``, then (44 bytes on) ``ephemeralOwner``.
ACL_AND_OWNER = struct.Struct(">q" + "44x" + "q")
INT_BE = struct.Struct(">i")
DIGEST_V2 = struct.Struct(
    ">"
    "q"  # zxid
    "i"  # digestVersion
    "q"  # digest
)
SEAL_SIZE = 8 + 4 + 1                       # long adler32, ustring "/"
LAST_PROCESSED_ZXID_TRAILER = 8 + SEAL_SIZE  # 21
DIGEST_TRAILER = DIGEST_V2.size + SEAL_SIZE  # 33

#: ``EphemeralType``: ephemeralOwner values that are not session ids.
CONTAINER_EPHEMERAL_OWNER = -0x8000000000000000
TTL_MASK = -0x100000000000000  # top byte 0xFF

#: Default inflation bound for compressed snapshots (a gz bomb is an error, not an allocation).
MAX_INFLATED_BYTES = 8 * 1024 * 1024 * 1024
#: A compressed snapshot may inflate to this many times its size, as a Kafka batch may
#: (:data:`~kreplica.formats.codecs.MAX_INFLATION_RATIO`): snapshots of real trees (paths, JSON
#: data, stats) compress a few to a few tens of times; deflate reaches its 1032:1 ceiling only on
#: runs of identical bytes, which is what a gz bomb is made of.
MAX_INFLATION_RATIO = codecs.MAX_INFLATION_RATIO
#: ... and always to this much, however small the file.
MIN_INFLATION_ALLOWANCE = codecs.MIN_INFLATION_ALLOWANCE
#: The most one compressed byte can expand to: deflate's limit is 1032:1; a Snappy copy of 64
#: bytes takes 3 bytes (about 22:1). Bounding by these keeps memory proportional to the file
#: even when a crafted Snappy block declares a 4 GiB length.
MAX_RATIO = {"gz": 1032, "snappy": 22}


def inflation_limit(compressed_size: int, compression: str, limit: int = MAX_INFLATED_BYTES) -> int:
    """How many bytes a ``compression`` snapshot of ``compressed_size`` bytes may inflate to:
    :data:`MAX_INFLATION_RATIO` times its size, at least :data:`MIN_INFLATION_ALLOWANCE`, at most
    ``limit`` and what the codec can physically produce (:data:`MAX_RATIO`)."""
    relative = max(MIN_INFLATION_ALLOWANCE, MAX_INFLATION_RATIO * compressed_size)
    physical = MAX_RATIO.get(compression, MAX_INFLATION_RATIO) * compressed_size + 65536
    return min(limit, relative, physical)

#: Seal #1 is summed (and, on an mmap, walked pages released) this many bytes at a time.
SEAL_STEP = 32 * 1024 * 1024
PAGE = mmap.PAGESIZE

COMPRESSION_NONE = "none"
COMPRESSION_GZ = "gz"
COMPRESSION_SNAPPY = "snappy"


class Acl(NamedTuple):
    """One ``ACL`` entry: permission bits (READ 1, WRITE 2, CREATE 4, DELETE 8, ADMIN 16), scheme, id."""

    perms: int
    scheme: str | None
    id: str | None


class ZNode(NamedTuple):
    """One node as stored: the path (``"/"`` for the root, which the file stores as ``""``),
    the data (``None`` = null, distinct from ``b""``), the ACL cache id, and ``StatPersisted``.

    ``cversion`` is the *persisted* value (count of child creations); clients see
    ``2 * cversion - numChildren`` (``DataNode.copyStat``). ``position`` is where the node's
    path starts in the (uncompressed) stream.

    NOTE: a NamedTuple, not a frozen dataclass: a snapshot can hold millions of nodes and tuple
    construction is several times cheaper (the same trade as ``batch.Record``).
    """

    path: str
    data: bytes | None
    acl: int
    czxid: int
    mzxid: int
    ctime: int
    mtime: int
    version: int
    cversion: int
    aversion: int
    ephemeral_owner: int
    pzxid: int
    position: int = -1


#: A node as ``iter_snapshot(raw=True)`` yields it: ``(path, data, acl, ephemeral_owner,
#: stat, position)`` where ``stat`` is the 60 ``StatPersisted`` bytes as stored.
RawZNode = tuple


@dataclass(frozen=True, slots=True)
class SnapshotPreamble:
    """What precedes the nodes: file header, the session table, the ACL cache."""

    path: str
    compression: str
    magic: int
    version: int
    dbid: int
    sessions: dict[int, int]             # sessionId -> negotiated timeout (ms), file order
    acls: dict[int, tuple[Acl, ...]]     # ACL cache id -> list (id -1 = open ACL, never listed)


@dataclass(frozen=True, slots=True)
class SnapshotDigest:
    """``ZxidDigest``: the tree digest and the last zxid whose effect it includes."""

    zxid: int
    digest_version: int
    digest: int | str


@dataclass(frozen=True, slots=True)
class SnapshotEnd:
    """How the stream ended: seals (stored and computed Adler-32), trailers, completeness."""

    path: str
    node_count: int
    complete: bool
    seals: tuple[tuple[int, int], ...]   # (stored, computed) per seal read
    digest: SnapshotDigest | None
    last_processed_zxid: int | None
    stream_size: int

    @property
    def seals_valid(self) -> bool:
        return all(stored == computed for stored, computed in self.seals)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A whole snapshot in memory (:func:`read_snapshot`)."""

    preamble: SnapshotPreamble
    nodes: tuple[ZNode, ...]
    end: SnapshotEnd
    findings: tuple[Finding, ...] = field(default=())

    @property
    def path(self) -> str:
        return self.preamble.path


def parse_snapshot_name(name: str) -> tuple[int, str] | None:
    """``(zxid, compression)`` for ``snapshot.<hex>[.gz|.snappy]``, else ``None``.

    Stricter than ``Util.getZxidFromName`` on purpose: ZooKeeper would also take
    ``snapshot.b6.SnapshotFormatter-d.txt`` as zxid 0xb6 (and then reject it as invalid), but a
    forensic copy often holds such side files, so only the three real shapes are accepted.
    """
    parts = name.split(".")
    if len(parts) not in (2, 3) or parts[0] != "snapshot" or not parts[1]:
        return None
    try:
        zxid = int(parts[1], 16)
    except ValueError:
        return None
    if len(parts) == 2:
        return zxid, COMPRESSION_NONE
    if parts[2] == "gz":
        return zxid, COMPRESSION_GZ
    if parts[2] == "snappy":
        return zxid, COMPRESSION_SNAPPY
    return None


def compression_of(path: str | os.PathLike) -> str:
    """``SnapStream.getStreamMode``: from the last dot-separated part of the file name."""
    last = os.path.basename(os.fspath(path)).rsplit(".", 1)[-1]
    return {"gz": COMPRESSION_GZ, "snappy": COMPRESSION_SNAPPY}.get(last, COMPRESSION_NONE)


def is_valid_snapshot_file(buf, compression: str) -> bool:
    """``SnapStream.isValidSnapshot`` on the raw file bytes (the cheap pre-check ZooKeeper runs)."""
    if compression == COMPRESSION_GZ:
        return bytes(buf[:2]) == GZIP_MAGIC
    if compression == COMPRESSION_SNAPPY:
        return bytes(buf[:8]) == SNAPPY_MAGIC
    return len(buf) >= 10 and bytes(buf[-5:]) == PLAIN_SEAL_TAIL


def inflate(raw, compression: str, *, path: str, limit: int = MAX_INFLATED_BYTES) -> tuple[bytes, Finding | None]:
    """The uncompressed stream of a gz or snappy snapshot, and a finding if it broke part way.

    The bytes recovered before a break are returned, so the nodes in them can still be read.
    A file that does not even start like its suffix says raises :class:`Malformed`. Output is
    bounded by :func:`inflation_limit` (``limit`` at most): a stream that inflates past it is a
    decompression bomb, reported as a ``decompression_error`` finding with the bytes up to the
    bound, whose nodes are still read; nothing larger is allocated.
    """
    if compression in MAX_RATIO:
        limit = inflation_limit(len(raw), compression, limit)
    if compression == COMPRESSION_GZ:
        if bytes(raw[:2]) != GZIP_MAGIC:
            raise Malformed("not a gzip stream (the .gz snapshot lacks the 1f 8b magic)",
                            path=path, position=0, field="gzip magic")
        result = codecs.decompress(codecs.GZIP, raw, limit=limit)
    elif compression == COMPRESSION_SNAPPY:
        if bytes(raw[:8]) != SNAPPY_MAGIC:
            raise Malformed("not a snappy-java stream (the .snappy snapshot lacks the \\x82SNAPPY\\0 magic)",
                            path=path, position=0, field="snappy magic")
        result = codecs.decompress(codecs.SNAPPY, raw, limit=limit)
    else:
        return bytes(raw), None
    finding = None
    if codecs.is_bomb(result.error):
        finding = Finding("decompression_error", path, 0,
                          f"the {compression} snapshot inflates past {limit} bytes, the most kreplica "
                          f"accepts from {len(raw)} compressed bytes ({MAX_INFLATION_RATIO} times, at least "
                          f"{MIN_INFLATION_ALLOWANCE}): a decompression bomb; nodes in the first {limit} "
                          "bytes are still read",
                          details={"uncompressed_bytes": len(result.data), "limit": limit,
                                   "compressed_bytes": len(raw)})
    elif result.error is not None:
        finding = Finding("decompression_error", path, 0,
                          f"the {compression} container breaks after {len(result.data)} uncompressed bytes: "
                          f"{result.error}; nodes before the break are still read",
                          details={"uncompressed_bytes": len(result.data)})
    return result.data, finding


def iter_snapshot(buf, *, path: str, compression: str = COMPRESSION_NONE, raw: bool = False
                  ) -> Iterator[SnapshotPreamble | ZNode | RawZNode | Finding | SnapshotEnd]:
    """Walk an uncompressed snapshot stream in ``buf`` (mmap, bytes or memoryview).

    Yields one :class:`SnapshotPreamble`, then every :class:`ZNode` in file order (pre-order,
    parents first; the root as ``"/"``), then findings about the seals and trailers, then one
    :class:`SnapshotEnd`. A damaged header, session table or ACL cache raises
    :class:`FormatError` (nothing after it can be located). Damage among the nodes or the
    trailers ends the walk with a finding, after every node read so far was yielded: a
    truncated snapshot still shows what it holds. Memory stays proportional to the tree (the
    set of paths seen, to check that parents come first, as ``DataTree.deserialize`` does).

    ``raw=True`` is the loader's form: each node is a plain :data:`RawZNode` tuple with the
    ``StatPersisted`` bytes left undecoded, and the parents-first check is left to the caller
    (which holds every path anyway; :func:`orphan_finding` is the finding to give), so no set
    of paths is kept here.
    """
    r = JuteReader(buf, path=path)
    magic, version, dbid = r.unpack(FILE_HEADER, "FileHeader")
    if magic != SNAP_MAGIC:
        raise Malformed("not a ZooKeeper snapshot", path=path, position=0, field="magic",
                        expected=hex(SNAP_MAGIC), actual=hex(magic & 0xFFFFFFFF))
    if version != SNAP_VERSION:
        raise UnsupportedVersion("unknown snapshot version", path=path, position=4,
                                 field="version", expected=SNAP_VERSION, actual=version)
    count = r.vector_count("session count", SESSION.size)
    sessions: dict[int, int] = {}
    for _ in range(max(count, 0)):
        sid, timeout = r.unpack(SESSION, "session")
        sessions[sid] = timeout
    count = r.vector_count("ACL cache size", 12)
    acls: dict[int, tuple[Acl, ...]] = {}
    for _ in range(max(count, 0)):
        acl_id = r.long("ACL cache id")
        at = r.position
        n = r.vector_count("ACL list", 12)
        if n < 0:
            # ReferenceCountedACLCache.deserialize: "Incorrent format of InputArchive"
            raise Malformed("null ACL list in the ACL cache", path=path, position=at, field="acls")
        acls[acl_id] = tuple(Acl(r.int("ACL perms"), r.ustring("ACL scheme"), r.ustring("ACL id"))
                             for _ in range(n))
    yield SnapshotPreamble(path, compression, magic, version, dbid, sessions, acls)

    seen: set[str] = set()
    node_count = 0
    seals: list[tuple[int, int]] = []
    digest = None
    last_zxid = None
    # NOTE: the hot loop (one pass per node; figures in bench/README.md, "ZooKeeper"). The path
    # and data lengths are read inline with the same checks JuteReader makes (re-read through it
    # on failure, so errors keep their labels); acl and StatPersisted are one unpack (raw: acl and
    # owner one unpack, the stat one slice). Slices of an mmap or bytes are bytes already.
    # Seal #1's Adler-32 is summed as the walk goes, a step at a time, and on an mmap the pages
    # summed are handed back (MADV_DONTNEED), so resident memory does not grow by the file size.
    unpack_int = INT_BE.unpack_from
    unpack_tail = NODE_TAIL.unpack_from
    unpack_acl_owner = ACL_AND_OWNER.unpack_from
    tail_size = NODE_TAIL.size
    b = r.buf if isinstance(r.buf, (bytes, mmap.mmap)) else bytes(r.buf)
    end = r.end
    make = ZNode
    release = getattr(b, "madvise", None) if hasattr(mmap, "MADV_DONTNEED") else None
    running = 1          # seal #1's Adler-32 of b[0:summed]
    summed = 0
    next_step = SEAL_STEP
    try:
        while True:
            pos = r.pos
            at = pos
            if pos >= next_step:
                upto = pos & ~(PAGE - 1)
                running = _adler(b, summed, upto, running)
                summed = upto
                if release is not None:
                    release(mmap.MADV_DONTNEED, 0, upto)
                next_step = pos + SEAL_STEP
            if end - pos >= 4:
                (n,) = unpack_int(b, pos)
                if 0 <= n <= end - pos - 4:
                    node_path = b[pos + 4:pos + 4 + n].decode("utf-8", "replace")
                    pos += 4 + n
                else:
                    node_path = r.ustring("node path")
                    pos = r.pos
            else:
                node_path = r.ustring("node path")
            if node_path == "/":
                r.pos = pos
                break
            if node_path is None:
                raise Malformed("null node path", path=path, position=at, field="node path")
            r.pos = pos
            if end - pos >= 4:
                (n,) = unpack_int(b, pos)
                if n == -1:
                    data = None
                    pos += 4
                elif 0 <= n <= end - pos - 4:
                    data = b[pos + 4:pos + 4 + n]
                    pos += 4 + n
                else:
                    data = r.buffer("node data")
                    pos = r.pos
            else:
                data = r.buffer("node data")
            r.pos = pos
            if end - pos < tail_size:
                r.long("node acl")
                r.need(tail_size - 8, "StatPersisted")
            r.pos = pos + tail_size
            if node_path == "":
                node_path = "/"
            elif not raw:
                parent = node_path[:node_path.rfind("/")] or "/"
                if parent not in seen:
                    yield orphan_finding(path, at, node_path, parent)
            node_count += 1
            if raw:
                yield (node_path, data, *unpack_acl_owner(b, pos), b[pos + 8:pos + tail_size], at)
            else:
                seen.add(node_path)
                yield make(node_path, data, *unpack_tail(b, pos), at)
        end_nodes = r.pos
        # seal #1: Adler-32 of everything before it
        running = _adler(b, summed, end_nodes, running)
        yield from _read_seal(r, path, 1, running, seals)
        left = r.remaining
        if left and left != LAST_PROCESSED_ZXID_TRAILER:
            running = _adler(buf, end_nodes, r.pos, running)
            start = r.pos
            zxid = r.long("digest zxid")
            dver = r.int("digest version")
            value = r.long("digest") if dver >= 2 else r.ustring("digest")
            digest = SnapshotDigest(zxid, dver, value)
            running = _adler(buf, start, r.pos, running)
            end_nodes = r.pos
            yield from _read_seal(r, path, 2, running, seals)
            left = r.remaining
        if left:
            running = _adler(buf, end_nodes, r.pos, running)
            start = r.pos
            last_zxid = r.long("lastProcessedZxid")
            running = _adler(buf, start, r.pos, running)
            yield from _read_seal(r, path, 3, running, seals)
        if r.remaining:
            yield Finding("zk_trailing_bytes", path, r.position,
                          f"{r.remaining} bytes after the last seal are not part of any known trailer",
                          details={"length": r.remaining})
        complete = True
    except FormatError as exc:
        complete = False
        yield Finding("zk_truncated_snapshot", path, exc.position if exc.position is not None else r.position,
                      f"the snapshot cannot be read past this point ({exc.one_line()}); "
                      f"{node_count} nodes were read before it; ZooKeeper would fall back to an older snapshot",
                      details={"field": exc.field, "nodes_read": node_count})
    yield SnapshotEnd(path, node_count, complete, tuple(seals), digest, last_zxid, len(buf))


def orphan_finding(path: str, position: int, znode: str, parent: str) -> Finding:
    """``zk_orphan_znode``: ``znode`` (at ``position``) comes before its ``parent``."""
    return Finding("zk_orphan_znode", path, position,
                   f"node {znode!r} comes before its parent {parent!r}; "
                   "ZooKeeper refuses to load such a snapshot",
                   details={"znode": znode})


def _adler(buf, start: int, end: int, value: int) -> int:
    """Adler-32 of ``buf[start:end]`` continuing from ``value``, without copying the bytes."""
    with memoryview(buf) as mv:
        return zlib.adler32(mv[start:end], value)


def _read_seal(r, path: str, n: int, running: int, seals: list) -> Iterator[Finding]:
    """Read seal ``n`` (long adler32, ustring "/"), record it, and report it if it does not match."""
    seal_at = r.position
    stored = r.long(f"seal #{n}")
    r.ustring(f"seal #{n} marker")
    seals.append((stored, running))
    if stored != running:
        yield _seal_finding(path, seal_at, n, stored, running)


def _seal_finding(path: str, position: int, which: int, stored: int, computed: int) -> Finding:
    return Finding("zk_checksum_mismatch", path, position,
                   f"snapshot seal #{which} stores Adler-32 {stored:#x} but the stream before it sums to "
                   f"{computed:#x}; ZooKeeper rejects this snapshot and tries an older one",
                   details={"seal": which, "stored": stored, "computed": computed})


@contextmanager
def open_snapshot_stream(path: str | os.PathLike, *, limit: int = MAX_INFLATED_BYTES
                         ) -> Iterator[tuple[Buffer, str, Finding | None]]:
    """Yield ``(buffer, compression, finding)``: the uncompressed stream of the snapshot at ``path``.

    Plain files are mapped read-only (:func:`~kreplica.formats.mapped.open_buffer`; an empty
    file is read as ``b""``) for as long as the context lasts; compressed ones are inflated into
    memory (bounded by ``limit``) and the mapping is closed at once. ``finding`` says why an
    inflated stream ended early.
    """
    p = os.fspath(path)
    compression = compression_of(p)
    with open_buffer(p) as raw:
        if compression == COMPRESSION_NONE:
            yield raw, compression, None
            return
        data, finding = inflate(raw, compression, path=p, limit=limit)
    yield data, compression, finding


def read_snapshot(path: str | os.PathLike, *, limit: int = MAX_INFLATED_BYTES) -> Snapshot:
    """Read a whole snapshot file (plain, ``.gz`` or ``.snappy`` by suffix) into a :class:`Snapshot`.

    Raises :class:`FormatError` only when the header, session table or ACL cache is unreadable;
    everything else (seal mismatches, truncation, a broken compressed container) is in
    ``findings``, with the nodes read before it.
    """
    p = os.fspath(path)
    nodes: list[ZNode] = []
    preamble = end = None
    with open_snapshot_stream(p, limit=limit) as (buf, compression, finding):
        findings: list[Finding] = [finding] if finding else []
        for item in iter_snapshot(buf, path=p, compression=compression):
            if type(item) is ZNode:
                nodes.append(item)
            elif isinstance(item, Finding):
                findings.append(item)
            elif isinstance(item, SnapshotPreamble):
                preamble = item
            else:
                end = item
    return Snapshot(preamble, tuple(nodes), end, tuple(findings))


def client_ephemeral_owner(owner: int) -> int:
    """``DataNode.getClientEphemeralOwner``: container and TTL nodes show 0 to clients."""
    if owner == CONTAINER_EPHEMERAL_OWNER or (owner & TTL_MASK) == TTL_MASK:
        return 0
    return owner


def is_session_owner(owner: int) -> bool:
    """True when ``ephemeralOwner`` names a session (an ephemeral node), not a container/TTL."""
    return owner != 0 and client_ephemeral_owner(owner) != 0


# -- writer (fixtures and tests) ------------------------------------------------------------


def build_snapshot(nodes, *, sessions: dict[int, int] | None = None,
                   acls: dict[int, list[Acl]] | None = None, digest: SnapshotDigest | None = None,
                   last_processed_zxid: int | None = None, dbid: int = -1) -> bytes:
    """An uncompressed snapshot stream as ``FileSnap.serialize`` writes it.

    ``nodes`` are :class:`ZNode` values in pre-order (the root with path ``"/"``, written as
    ``""``). Seals are computed the way ``CheckedOutputStream`` does. Trailers are written
    when given, as 3.6+ (digest) and 3.9+ (lastProcessedZxid) servers do.
    """
    out = bytearray(FILE_HEADER.pack(SNAP_MAGIC, SNAP_VERSION, dbid))
    sessions = sessions or {}
    out += build_int(len(sessions))
    for sid, timeout in sessions.items():
        out += SESSION.pack(sid, timeout)
    acls = acls or {}
    out += build_int(len(acls))
    for acl_id, entries in acls.items():
        out += build_long(acl_id) + build_int(len(entries))
        for a in entries:
            out += build_int(a.perms) + build_ustring(a.scheme) + build_ustring(a.id)
    for n in nodes:
        out += build_ustring("" if n.path == "/" else n.path)
        out += build_buffer(n.data) + build_long(n.acl)
        out += STAT_PERSISTED.pack(n.czxid, n.mzxid, n.ctime, n.mtime, n.version, n.cversion,
                                   n.aversion, n.ephemeral_owner, n.pzxid)
    out += build_ustring("/")

    def seal() -> None:
        out.extend(build_long(zlib.adler32(out)) + build_ustring("/"))

    seal()
    if digest is not None:
        out += build_long(digest.zxid) + build_int(digest.digest_version)
        out += build_long(digest.digest) if digest.digest_version >= 2 else build_ustring(str(digest.digest))
        seal()
    if last_processed_zxid is not None:
        out += build_long(last_processed_zxid)
        seal()
    return bytes(out)


def build_snappy_stream(data: bytes) -> bytes:
    """``SnappyOutputStream`` framing of ``data`` (what a ``.snappy`` snapshot file holds)."""
    return codecs.compress(codecs.SNAPPY, data)


def build_gzip_stream(data: bytes) -> bytes:
    """``GZIPOutputStream`` of ``data`` (what a ``.gz`` snapshot file holds)."""
    return codecs.compress(codecs.GZIP, data)
