"""ZooKeeper transaction logs (``log.<first-zxid-hex>``): every state change, checksummed.

Sources (apache/zookeeper ``release-3.8.0-1``): ``zookeeper-server/src/main/java/org/apache/
zookeeper/server/persistence/FileTxnLog.java`` (``FileTxnIterator``), ``Util.java``
(``readTxnBytes``), ``FilePadding.java``, ``server/util/SerializeUtils.java`` (``deserializeTxn``),
``server/TxnLogEntry.java``, ``ZooDefs.java`` (``OpCode``), and the records of
``zookeeper-jute/src/main/resources/zookeeper.jute``; ``../shared/specs/zookeeper-formats.md`` §4.

Layout::

    FileHeader   int magic = 0x5A4B4C47 "ZKLG", int version = 2, long dbid = 0
    entry*       long checksum, int length, byte[length] txnBytes, byte 0x42 'B'
    (zeros up to the preallocated size)

    txnBytes     TxnHeader {long clientId, int cxid, long zxid, long time, int type}
                 body (record chosen by type; may be absent)
                 TxnDigest {int version, long treeDigest}   (3.6+, every type but error)

The checksum is the Adler-32 of ``txnBytes`` only. ZooKeeper's reader ends a file at EOF while
reading checksum or length, or at a length of 0 (the zero-filled preallocated tail: normal, not
damage); a missing ``'B'`` after the payload means the last entry was only partly written
("Last transaction was partial"), also an end. Here the tail is described in
:class:`TxnLogEnd`, a torn entry and a checksum mismatch are findings (ZooKeeper stops at the
latter with "CRC check failed"; the entry is still yielded, flagged), and a body that does not
parse is a finding with the entry kept raw. Nothing but an unreadable file header raises.
"""

from __future__ import annotations

import os
import re
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from kreplica.formats.errors import FormatError, Malformed, UnsupportedVersion
from kreplica.formats.findings import Finding
from kreplica.formats.mapped import open_buffer
from kreplica.formats.zookeeper.jute import (
    JuteReader,
    build_boolean,
    build_buffer,
    build_int,
    build_long,
    build_ustring,
)
from kreplica.formats.zookeeper.snapshot import Acl

LOG_MAGIC = 0x5A4B4C47  # "ZKLG"
LOG_VERSION = 2
END_OF_ENTRY = 0x42     # 'B'

FILE_HEADER = struct.Struct(
    ">"
    "i"  # magic
    "i"  # version
    "q"  # dbid
)
ENTRY_PREFIX = struct.Struct(
    ">"
    "q"  # checksum (Adler-32 of txnBytes, as a long)
    "i"  # length of txnBytes
)
TXN_HEADER = struct.Struct(
    ">"
    "q"  # clientId
    "i"  # cxid
    "q"  # zxid
    "q"  # time
    "i"  # type
)
TXN_DIGEST = struct.Struct(
    ">"
    "i"  # version
    "q"  # treeDigest
)

# ZooDefs.OpCode values that can appear in a log.
OP_CREATE = 1
OP_DELETE = 2
OP_SET_DATA = 5
OP_SET_ACL = 7
OP_CHECK = 13
OP_MULTI = 14
OP_CREATE2 = 15
OP_RECONFIG = 16
OP_CREATE_CONTAINER = 19
OP_DELETE_CONTAINER = 20
OP_CREATE_TTL = 21
OP_CREATE_SESSION = -10
OP_CLOSE_SESSION = -11
OP_ERROR = -1

#: The ``ZooDefs.OpCode`` field names (what ``Request.op2String`` prints, except createTTL).
OPCODE_NAMES = {
    OP_CREATE: "create", OP_DELETE: "delete", OP_SET_DATA: "setData", OP_SET_ACL: "setACL",
    OP_CHECK: "check", OP_MULTI: "multi", OP_CREATE2: "create2", OP_RECONFIG: "reconfig",
    OP_CREATE_CONTAINER: "createContainer", OP_DELETE_CONTAINER: "deleteContainer",
    OP_CREATE_TTL: "createTTL", OP_CREATE_SESSION: "createSession",
    OP_CLOSE_SESSION: "closeSession", OP_ERROR: "error",
}

#: ``KeeperException.Code`` values seen in ``ErrorTxn``.
ERROR_CODES = {
    0: "OK", -2: "RUNTIMEINCONSISTENCY", -5: "MARSHALLINGERROR", -101: "NONODE", -102: "NOAUTH",
    -103: "BADVERSION", -108: "NOCHILDRENFOREPHEMERALS", -110: "NODEEXISTS", -111: "NOTEMPTY",
    -114: "INVALIDACL",
}

STOP_END_OF_FILE = "end_of_file"
STOP_PREALLOCATED = "preallocated_tail"
STOP_TORN = "torn_entry"
STOP_INVALID_LENGTH = "invalid_length"

_NONZERO = re.compile(rb"[^\x00]")


# -- bodies ---------------------------------------------------------------------------------
#
# NOTE: bodies, digests and entries are NamedTuples, not frozen dataclasses: a replay builds one
# entry and one body per logged transaction (millions), and a tuple is several times cheaper to
# build (the reader calls ``tuple.__new__`` directly). Attribute names are the same as before.


class CreateTxn(NamedTuple):
    """``CreateTxn`` (create, create2), ``CreateContainerTxn``, ``CreateTTLTxn``.

    ``ephemeral`` is only carried by CreateTxn (containers and TTL nodes get their owner from
    the type); ``ttl`` only by CreateTTLTxn; ``parent_cversion`` is -1 in a ``CreateTxnV0``.
    """

    path: str
    data: bytes | None
    acl: tuple[Acl, ...] | None
    ephemeral: bool
    parent_cversion: int
    ttl: int | None = None


class DeleteTxn(NamedTuple):
    """``DeleteTxn`` (delete, deleteContainer)."""

    path: str


class SetDataTxn(NamedTuple):
    """``SetDataTxn`` (setData, reconfig): ``version`` is the *new* data version."""

    path: str
    data: bytes | None
    version: int


class SetACLTxn(NamedTuple):
    """``SetACLTxn``: ``version`` is the new ACL version."""

    path: str
    acl: tuple[Acl, ...] | None
    version: int


class CheckVersionTxn(NamedTuple):
    """``CheckVersionTxn`` (only inside multi); ``version`` is logged as current + 1."""

    path: str
    version: int


class CreateSessionTxn(NamedTuple):
    timeout: int


class CloseSessionTxn(NamedTuple):
    """``CloseSessionTxn``: the ephemerals to delete (3.6+); ``None`` when the body is absent."""

    paths: tuple[str, ...] | None


class ErrorTxn(NamedTuple):
    """``ErrorTxn``: a request that failed in the pre-processor still consumes a zxid."""

    err: int


class SubTxn(NamedTuple):
    """One ``Txn`` of a multi: its type and decoded body (``None`` if it did not parse)."""

    type: int
    body: object
    raw: bytes


class MultiTxn(NamedTuple):
    """``MultiTxn``: sub-transactions sharing the outer header. If any has type -1 (error),
    ZooKeeper applies none of them (``DataTree.processTxn``)."""

    txns: tuple[SubTxn, ...]

    @property
    def failed(self) -> bool:
        return any(t.type == OP_ERROR for t in self.txns)


class TxnDigest(NamedTuple):
    version: int
    tree_digest: int


@dataclass(frozen=True, slots=True)
class TxnLogHeader:
    path: str
    magic: int
    version: int
    dbid: int


class TxnEntry(NamedTuple):
    """One logged transaction.

    ``position`` is where its checksum starts in the file; ``body`` is the decoded record (one of
    the ``*Txn`` classes) or ``None`` when the type has no body or it did not parse
    (``body_error`` then says why). ``checksum_valid`` is ZooKeeper's CRC check.
    """

    path: str
    position: int
    size: int
    checksum: int
    checksum_valid: bool
    client_id: int
    cxid: int
    zxid: int
    time: int
    type: int
    body: object
    digest: TxnDigest | None
    body_error: str | None = None

    @property
    def paths(self) -> tuple[str, ...]:
        """The znode paths this transaction names (sub-transactions of a multi included)."""
        return txn_paths(self.type, self.body)


@dataclass(frozen=True, slots=True)
class TxnLogEnd:
    """How the walk ended: ``valid_bytes`` is the end of the last whole entry; ``stopped_by``
    is ``end_of_file``, ``preallocated_tail`` (a zero length, the normal end), ``torn_entry``
    or ``invalid_length``; ``tail_bytes`` is what lies after ``valid_bytes``."""

    path: str
    file_size: int
    entries: int
    valid_bytes: int
    stopped_by: str
    tail_bytes: int
    first_zxid: int | None
    last_zxid: int | None


def txn_paths(txn_type: int, body) -> tuple[str, ...]:
    if body is None:
        return ()
    if isinstance(body, MultiTxn):
        out: list[str] = []
        for t in body.txns:
            out.extend(txn_paths(t.type, t.body))
        return tuple(out)
    if isinstance(body, CloseSessionTxn):
        return body.paths or ()
    p = getattr(body, "path", None)
    return (p,) if p is not None else ()


# -- reading --------------------------------------------------------------------------------


def parse_log_name(name: str) -> int | None:
    """The first zxid of ``log.<hex>``; ``None`` for anything else (side files included)."""
    parts = name.split(".")
    if len(parts) != 2 or parts[0] != "log" or not parts[1]:
        return None
    try:
        return int(parts[1], 16)
    except ValueError:
        return None


def _acl_list(r: JuteReader, field: str) -> tuple[Acl, ...] | None:
    n = r.vector_count(field, 12)
    if n < 0:
        return None
    return tuple(Acl(r.int("ACL perms"), r.ustring("ACL scheme"), r.ustring("ACL id")) for _ in range(n))


def _path(r: JuteReader, field: str = "path") -> str:
    at = r.position
    p = r.ustring(field)
    if p is None:
        raise Malformed("null path", path=r.path, position=at, field=field)
    return p


def parse_body(txn_type: int, r: JuteReader, *, in_multi: bool = False):
    """Decode the record for ``txn_type`` at the reader's position (``SerializeUtils.deserializeTxn``).

    Returns the body, or ``None`` for types without one. Leaves the reader after the body.
    """
    if txn_type in (OP_CREATE, OP_CREATE2):
        p = _path(r)
        data = r.buffer("data")
        acl = _acl_list(r, "acl")
        eph = r.boolean("ephemeral")
        if r.remaining == 0:
            # CreateTxnV0 (no parentCVersion): ZooKeeper retries on EOF with parentCVersion -1.
            return CreateTxn(p, data, acl, eph, -1)
        return CreateTxn(p, data, acl, eph, r.int("parentCVersion"))
    if txn_type == OP_CREATE_CONTAINER:
        return CreateTxn(_path(r), r.buffer("data"), _acl_list(r, "acl"), False, r.int("parentCVersion"))
    if txn_type == OP_CREATE_TTL:
        p, data, acl = _path(r), r.buffer("data"), _acl_list(r, "acl")
        pcv = r.int("parentCVersion")
        return CreateTxn(p, data, acl, False, pcv, r.long("ttl"))
    if txn_type in (OP_DELETE, OP_DELETE_CONTAINER):
        return DeleteTxn(_path(r))
    if txn_type in (OP_SET_DATA, OP_RECONFIG):
        return SetDataTxn(_path(r), r.buffer("data"), r.int("version"))
    if txn_type == OP_SET_ACL:
        return SetACLTxn(_path(r), _acl_list(r, "acl"), r.int("version"))
    if txn_type == OP_CHECK:
        return CheckVersionTxn(_path(r), r.int("version"))
    if txn_type == OP_CREATE_SESSION:
        return CreateSessionTxn(r.int("timeOut"))
    if txn_type == OP_ERROR:
        return ErrorTxn(r.int("err"))
    if txn_type == OP_CLOSE_SESSION:
        # 3.6+ writes paths2Delete; older servers (or closeSessionTxn.enabled=false) no body,
        # which with a digest leaves exactly the 12 digest bytes.
        if r.remaining == 0 or (not in_multi and r.remaining == TXN_DIGEST.size):
            return CloseSessionTxn(None)
        n = r.vector_count("paths2Delete", 4)
        if n < 0:
            return CloseSessionTxn(())
        return CloseSessionTxn(tuple(_path(r, "paths2Delete") for _ in range(n)))
    if txn_type == OP_MULTI:
        n = r.vector_count("txns", 8)
        subs = []
        for _ in range(max(n, 0)):
            sub_type = r.int("txn type")
            data_at = r.pos
            raw = r.buffer("txn data") or b""
            sub = JuteReader(r.buf, path=r.path, base=r.base, start=data_at + 4, end=data_at + 4 + len(raw))
            body = parse_body(sub_type, sub, in_multi=True) if sub_type in MULTI_TYPES else None
            subs.append(SubTxn(sub_type, body, raw))
        return MultiTxn(tuple(subs))
    raise Malformed("unknown transaction type", path=r.path, position=r.position, field="type",
                    actual=txn_type)


#: Sub-transaction types ``DataTree.processTxn`` accepts inside a multi.
MULTI_TYPES = frozenset({OP_CREATE, OP_CREATE2, OP_CREATE_TTL, OP_CREATE_CONTAINER, OP_DELETE,
                          OP_DELETE_CONTAINER, OP_SET_DATA, OP_ERROR, OP_CHECK})


def parse_entry(payload, *, path: str, base: int) -> tuple[tuple, object, TxnDigest | None, str | None]:
    """Header, body, digest and body error of one entry's ``txnBytes`` (``base`` = its file offset).

    Raises :class:`FormatError` only when the 32-byte header itself is missing.
    """
    r = JuteReader(payload, path=path, base=base)
    header = r.unpack(TXN_HEADER, "TxnHeader")
    txn_type = header[4]
    try:
        body = parse_body(txn_type, r) if r.remaining else None
    except FormatError as exc:
        return header, None, None, exc.one_line()
    digest = None
    if r.remaining == TXN_DIGEST.size:
        digest = TxnDigest(*r.unpack(TXN_DIGEST, "TxnDigest"))
    elif r.remaining:
        return header, body, None, f"{r.remaining} bytes after the body are neither empty nor a TxnDigest"
    return header, body, digest, None


# -- the fast path of the walk ----------------------------------------------------------------
#
# NOTE: ``parse_entry`` (a ``JuteReader`` call per field) is the reference and says exactly why an
# entry does not parse. ``iter_txnlog`` first decodes each entry with :func:`_fast_body`, which
# reads the same fields inline (one ``unpack_from`` per integer, bounds checked before every
# slice) and gives up with :class:`_Irregular` on anything unusual (null or oversized lengths,
# unknown types, bytes after the body that are not a digest, a null sub-transaction); the entry
# is then decoded again by ``parse_entry``. So both give the same value for every entry the fast
# path accepts (``tests/formats/zookeeper/test_txnlog.py`` compares them on random and damaged
# entries). Figures in bench/README.md, "ZooKeeper".

_int_at = struct.Struct(">i").unpack_from
_long_at = struct.Struct(">q").unpack_from
_header_at = TXN_HEADER.unpack_from
_digest_at = TXN_DIGEST.unpack_from
_new = tuple.__new__
_HEADER_SIZE = TXN_HEADER.size
_DIGEST_SIZE = TXN_DIGEST.size


class _Irregular(Exception):
    """The fast decoder met something only the reference reader should judge.

    Raised as a new instance each time: one shared instance kept the traceback of every raise
    (raising an instance extends its ``__traceback__``), and with it every frame and buffer the
    fast path had been in, for as long as the process lived (found by bench/fuzz).
    """


def _fast_ustring(buf, p: int, end: int, nullable: bool) -> tuple[str | None, int]:
    """A ``ustring`` at ``p`` and the position after it (``None`` for -1 when ``nullable``)."""
    if end - p < 4:
        raise _Irregular
    (n,) = _int_at(buf, p)
    p += 4
    if 0 <= n <= end - p:
        return str(buf[p:p + n], "utf-8", "replace"), p + n
    if n == -1 and nullable:
        return None, p
    raise _Irregular


def _fast_count(buf, p: int, end: int, element_size: int) -> tuple[int, int]:
    """A vector's count at ``p`` (-1 = null) whose elements fit, and the position after it."""
    if end - p < 4:
        raise _Irregular
    (n,) = _int_at(buf, p)
    p += 4
    if n < -1 or n * element_size > end - p:
        raise _Irregular
    return n, p


def _fast_acl(buf, p: int, end: int) -> tuple[tuple[Acl, ...] | None, int]:
    n, p = _fast_count(buf, p, end, 12)
    if n == -1:
        return None, p
    out = []
    for _ in range(n):
        if end - p < 4:
            raise _Irregular
        (perms,) = _int_at(buf, p)
        scheme, p = _fast_ustring(buf, p + 4, end, True)
        ident, p = _fast_ustring(buf, p, end, True)
        out.append(_new(Acl, (perms, scheme, ident)))
    return tuple(out), p


def _fast_body(buf, p: int, end: int, t: int):
    """``parse_body`` for a well-formed body of type ``t`` in ``buf[p:end]``: ``(body, position
    after it)``; raises :class:`_Irregular` where ``parse_body`` might fail or differ."""
    if end - p < 4:
        raise _Irregular
    if t == OP_SET_DATA or t == OP_RECONFIG or t == OP_DELETE or t == OP_DELETE_CONTAINER \
            or t == OP_CHECK or t == OP_CREATE or t == OP_CREATE2 or t == OP_CREATE_CONTAINER \
            or t == OP_CREATE_TTL or t == OP_SET_ACL:
        (n,) = _int_at(buf, p)
        p += 4
        if n < 0 or n > end - p:
            raise _Irregular
        zpath = str(buf[p:p + n], "utf-8", "replace")
        p += n
        if t == OP_DELETE or t == OP_DELETE_CONTAINER:
            return _new(DeleteTxn, (zpath,)), p
        if t == OP_SET_ACL:
            acl, p = _fast_acl(buf, p, end)
            if end - p < 4:
                raise _Irregular
            return _new(SetACLTxn, (zpath, acl, _int_at(buf, p)[0])), p + 4
        if end - p < 4:
            raise _Irregular
        if t == OP_CHECK:
            return _new(CheckVersionTxn, (zpath, _int_at(buf, p)[0])), p + 4
        (n,) = _int_at(buf, p)
        p += 4
        if n == -1:
            data = None
        elif 0 <= n <= end - p:
            data = bytes(buf[p:p + n])
            p += n
        else:
            raise _Irregular
        if t == OP_SET_DATA or t == OP_RECONFIG:
            if end - p < 4:
                raise _Irregular
            return _new(SetDataTxn, (zpath, data, _int_at(buf, p)[0])), p + 4
        acl, p = _fast_acl(buf, p, end)
        if t == OP_CREATE or t == OP_CREATE2:
            if p >= end:
                raise _Irregular
            eph = buf[p] != 0
            p += 1
            if p == end:
                return _new(CreateTxn, (zpath, data, acl, eph, -1, None)), p
            if end - p < 4:
                raise _Irregular
            return _new(CreateTxn, (zpath, data, acl, eph, _int_at(buf, p)[0], None)), p + 4
        if end - p < 4:
            raise _Irregular
        (pcv,) = _int_at(buf, p)
        p += 4
        if t == OP_CREATE_CONTAINER:
            return _new(CreateTxn, (zpath, data, acl, False, pcv, None)), p
        if end - p < 8:
            raise _Irregular
        return _new(CreateTxn, (zpath, data, acl, False, pcv, _long_at(buf, p)[0])), p + 8
    if t == OP_ERROR:
        return _new(ErrorTxn, (_int_at(buf, p)[0],)), p + 4
    if t == OP_CREATE_SESSION:
        return _new(CreateSessionTxn, (_int_at(buf, p)[0],)), p + 4
    if t == OP_MULTI:
        n, p = _fast_count(buf, p, end, 8)
        if n < 0:
            raise _Irregular
        subs = []
        for _ in range(n):
            if end - p < 8:
                raise _Irregular
            sub_type, k = _int_at(buf, p)[0], _int_at(buf, p + 4)[0]
            p += 8
            if k < 0 or k > end - p:
                raise _Irregular   # a null sub-transaction (or damage): the reference decides
            sub_end = p + k
            raw = bytes(buf[p:sub_end])
            body = _fast_body(buf, p, sub_end, sub_type)[0] if sub_type in MULTI_TYPES else None
            subs.append(_new(SubTxn, (sub_type, body, raw)))
            p = sub_end
        return _new(MultiTxn, (tuple(subs),)), p
    if t == OP_CLOSE_SESSION:
        # only decoded outside a multi: no body but a digest is the older form (parse_body)
        if end - p == _DIGEST_SIZE:
            return _new(CloseSessionTxn, (None,)), p
        n, p = _fast_count(buf, p, end, 4)
        if n < 0:
            raise _Irregular
        paths = []
        for _ in range(n):
            zpath, p = _fast_ustring(buf, p, end, False)
            paths.append(zpath)
        return _new(CloseSessionTxn, (tuple(paths),)), p
    raise _Irregular   # an unknown type: the reference names it


def iter_txnlog(buf, *, path: str) -> Iterator[TxnLogHeader | TxnEntry | Finding | TxnLogEnd]:
    """Walk a txn log held in ``buf`` (an mmap, bytes or memoryview).

    Yields the :class:`TxnLogHeader`, then each :class:`TxnEntry` with any :class:`Finding`
    about it right after, then one :class:`TxnLogEnd`. Stops where ``FileTxnIterator`` stops:
    at EOF, at a zero length (the preallocated tail; a tail that is not all zeros is a finding),
    or at a torn last entry (a finding, as ZooKeeper logs "Last transaction was partial").
    Raises :class:`FormatError` only for a missing or foreign file header.
    """
    size = len(buf)
    r = JuteReader(buf, path=path)
    magic, version, dbid = r.unpack(FILE_HEADER, "FileHeader")
    if magic != LOG_MAGIC:
        raise Malformed("not a ZooKeeper transaction log", path=path, position=0, field="magic",
                        expected=hex(LOG_MAGIC), actual=hex(magic & 0xFFFFFFFF))
    if version != LOG_VERSION:
        raise UnsupportedVersion("unknown txn log version", path=path, position=4, field="version",
                                 expected=LOG_VERSION, actual=version)
    yield TxnLogHeader(path, magic, version, dbid)
    pos = FILE_HEADER.size
    entries = 0
    first = last = None
    stopped = STOP_END_OF_FILE
    mv = memoryview(buf)
    try:
        while True:
            if size - pos < ENTRY_PREFIX.size:
                if pos < size and _NONZERO.search(buf, pos, size) is not None:
                    stopped = STOP_TORN
                    yield Finding("torn_txn_entry", path, pos,
                                  f"{size - pos} bytes at the end are too few for an entry header; "
                                  "the last entry was cut off while being written",
                                  details={"available": size - pos})
                break
            checksum, length = ENTRY_PREFIX.unpack_from(buf, pos)
            if length == 0:
                stopped = STOP_PREALLOCATED
                if _NONZERO.search(buf, pos, size) is not None:
                    yield Finding("zk_unread_tail", path, pos,
                                  f"a zero entry length at byte {pos} ends the log as ZooKeeper reads it, "
                                  "but non-zero bytes follow it; ZooKeeper never reads them",
                                  details={"length": size - pos})
                break
            if length < 0:
                stopped = STOP_INVALID_LENGTH
                yield Finding("torn_txn_entry" if length == -1 else "zk_invalid_length", path, pos,
                              f"entry length {length} at byte {pos} is impossible; ZooKeeper stops reading here",
                              details={"length": length})
                break
            body_at = pos + ENTRY_PREFIX.size
            if length > size - body_at or body_at + length >= size:
                stopped = STOP_TORN
                yield Finding("torn_txn_entry", path, pos,
                              f"the entry at byte {pos} declares {length} bytes but the file ends first "
                              f"({size - body_at} bytes remain): the last transaction was partly written",
                              details={"declared_length": length, "available": size - body_at})
                break
            if buf[body_at + length] != END_OF_ENTRY:
                stopped = STOP_TORN
                yield Finding("torn_txn_entry", path, pos,
                              f"the entry at byte {pos} is not followed by the 'B' end marker; "
                              "ZooKeeper reads this as 'Last transaction was partial' and stops",
                              details={"declared_length": length})
                break
            payload = mv[body_at:body_at + length]
            computed = zlib.adler32(payload)
            if length < TXN_HEADER.size:
                stopped = STOP_INVALID_LENGTH
                yield Finding("zk_invalid_txn", path, pos,
                              f"entry of {length} bytes at byte {pos} is shorter than a transaction header",
                              details={"length": length})
                break
            client_id, cxid, zxid, time, txn_type = _header_at(buf, body_at)
            end = body_at + length
            at = body_at + _HEADER_SIZE
            error = None
            if at == end:
                body = digest = None
            else:
                try:
                    body, at = _fast_body(buf, at, end, txn_type)
                    if at == end:
                        digest = None
                    elif end - at == _DIGEST_SIZE:
                        digest = _new(TxnDigest, _digest_at(buf, at))
                    else:
                        raise _Irregular
                except (_Irregular, struct.error):
                    _header, body, digest, error = parse_entry(payload, path=path, base=body_at)
            yield _new(TxnEntry, (path, pos, ENTRY_PREFIX.size + length + 1, checksum, checksum == computed,
                                  client_id, cxid, zxid, time, txn_type, body, digest, error))
            entries += 1
            if first is None:
                first = zxid
            last = zxid
            if checksum != computed:
                yield Finding("zk_checksum_mismatch", path, pos,
                              f"entry zxid {zxid:#x} at byte {pos} stores Adler-32 {checksum:#x} but its "
                              f"bytes sum to {computed:#x}; ZooKeeper stops with 'CRC check failed'",
                              details={"zxid": zxid, "stored": checksum, "computed": computed})
            if error is not None:
                kind = "zk_unknown_txn_type" if txn_type not in OPCODE_NAMES else "zk_invalid_txn"
                yield Finding(kind, path, pos, f"entry zxid {zxid:#x} (type {txn_type}): {error}",
                              details={"zxid": zxid, "txn_type": txn_type})
            pos = body_at + length + 1
    finally:
        mv.release()
    yield TxnLogEnd(path, size, entries, pos, stopped, size - pos, first, last)


def read_txnlog(path: str | os.PathLike) -> tuple[TxnLogHeader | None, list[TxnEntry], list[Finding], TxnLogEnd]:
    """Read a whole log file (mmapped read-only): header, entries, findings, end.

    An empty file (a crash before the header was written) gives an end with no header.
    """
    p = os.fspath(path)
    with open_buffer(p) as buf:
        if not buf:
            return None, [], [], TxnLogEnd(p, 0, 0, 0, STOP_END_OF_FILE, 0, None, None)
        header = end = None
        entries: list[TxnEntry] = []
        findings: list[Finding] = []
        for item in iter_txnlog(buf, path=p):
            if isinstance(item, TxnEntry):
                entries.append(item)
            elif isinstance(item, Finding):
                findings.append(item)
            elif isinstance(item, TxnLogHeader):
                header = item
            else:
                end = item
        return header, entries, findings, end


# -- writer (fixtures and tests) ------------------------------------------------------------


def build_acl_list(acl) -> bytes:
    if acl is None:
        return build_int(-1)
    return build_int(len(acl)) + b"".join(build_int(a.perms) + build_ustring(a.scheme) + build_ustring(a.id)
                                          for a in acl)


def build_body(txn_type: int, body) -> bytes:
    """The jute bytes of a body, as ``Record.serialize`` writes it."""
    if body is None:
        return b""
    if isinstance(body, CreateTxn):
        out = build_ustring(body.path) + build_buffer(body.data) + build_acl_list(body.acl)
        if txn_type in (OP_CREATE, OP_CREATE2):
            out += build_boolean(body.ephemeral)
        out += build_int(body.parent_cversion)
        if txn_type == OP_CREATE_TTL:
            out += build_long(body.ttl or 0)
        return out
    if isinstance(body, DeleteTxn):
        return build_ustring(body.path)
    if isinstance(body, SetDataTxn):
        return build_ustring(body.path) + build_buffer(body.data) + build_int(body.version)
    if isinstance(body, SetACLTxn):
        return build_ustring(body.path) + build_acl_list(body.acl) + build_int(body.version)
    if isinstance(body, CheckVersionTxn):
        return build_ustring(body.path) + build_int(body.version)
    if isinstance(body, CreateSessionTxn):
        return build_int(body.timeout)
    if isinstance(body, CloseSessionTxn):
        if body.paths is None:
            return b""
        return build_int(len(body.paths)) + b"".join(build_ustring(p) for p in body.paths)
    if isinstance(body, ErrorTxn):
        return build_int(body.err)
    if isinstance(body, MultiTxn):
        out = build_int(len(body.txns))
        for t in body.txns:
            out += build_int(t.type) + build_buffer(build_body(t.type, t.body))
        return out
    raise TypeError(f"not a txn body: {body!r}")


def build_entry(*, client_id: int, cxid: int, zxid: int, time: int, txn_type: int, body=None,
                digest: TxnDigest | None = None, checksum: int | None = None) -> bytes:
    """One log entry (checksum, length, txnBytes, 'B') as ``FileTxnLog.append`` writes it."""
    payload = TXN_HEADER.pack(client_id, cxid, zxid, time, txn_type) + build_body(txn_type, body)
    if digest is not None:
        payload += TXN_DIGEST.pack(digest.version, digest.tree_digest)
    crc = zlib.adler32(payload) if checksum is None else checksum
    return ENTRY_PREFIX.pack(crc, len(payload)) + payload + bytes((END_OF_ENTRY,))


def build_txnlog(entries: list[bytes], *, dbid: int = 0, preallocate: int = 0) -> bytes:
    """A log file: header, the given entries, then zeros up to ``preallocate`` bytes (if larger)."""
    out = FILE_HEADER.pack(LOG_MAGIC, LOG_VERSION, dbid) + b"".join(entries)
    if preallocate > len(out):
        out += bytes(preallocate - len(out))
    return out
