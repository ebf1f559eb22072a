"""ZooKeeper txn log reader: every transaction type, digests, the preallocated tail, torn and
damaged entries as findings, and the property that any bytes give values, findings or a
FormatError."""

from __future__ import annotations

import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreplica.formats.zookeeper import txnlog as zkl
from kreplica.formats.errors import FormatError, Malformed
from kreplica.formats.findings import Finding
from kreplica.formats.zookeeper.jute import build_buffer, build_int, build_ustring
from kreplica.formats.zookeeper.snapshot import Acl

ACL = (Acl(31, "world", "anyone"),)
SID = 0x100002228F70001
DIGEST = zkl.TxnDigest(2, 0x1234)

BODIES = [
    pytest.param(zkl.OP_CREATE, zkl.CreateTxn("/a", b"x", ACL, True, 3), id="create"),
    pytest.param(zkl.OP_CREATE2, zkl.CreateTxn("/b", None, ACL, False, 4), id="create2"),
    pytest.param(zkl.OP_CREATE_CONTAINER, zkl.CreateTxn("/c", b"", ACL, False, 5), id="createContainer"),
    pytest.param(zkl.OP_CREATE_TTL, zkl.CreateTxn("/d", b"t", ACL, False, 6, 60000), id="createTTL"),
    pytest.param(zkl.OP_DELETE, zkl.DeleteTxn("/a"), id="delete"),
    pytest.param(zkl.OP_DELETE_CONTAINER, zkl.DeleteTxn("/c"), id="deleteContainer"),
    pytest.param(zkl.OP_SET_DATA, zkl.SetDataTxn("/b", b"new", 7), id="setData"),
    pytest.param(zkl.OP_RECONFIG, zkl.SetDataTxn("/zookeeper/config", b"server.1=x", 2), id="reconfig"),
    pytest.param(zkl.OP_SET_ACL, zkl.SetACLTxn("/b", (Acl(1, "digest", "u:h"),), 1), id="setACL"),
    pytest.param(zkl.OP_CHECK, zkl.CheckVersionTxn("/b", 8), id="check"),
    pytest.param(zkl.OP_CREATE_SESSION, zkl.CreateSessionTxn(18000), id="createSession"),
    pytest.param(zkl.OP_CLOSE_SESSION, zkl.CloseSessionTxn(("/brokers/ids/5", "/controller")), id="closeSession"),
    pytest.param(zkl.OP_CLOSE_SESSION, zkl.CloseSessionTxn(()), id="closeSession-empty"),
    pytest.param(zkl.OP_MULTI, zkl.MultiTxn((
        zkl.SubTxn(zkl.OP_CHECK, zkl.CheckVersionTxn("/controller_epoch", 2), b""),
        zkl.SubTxn(zkl.OP_SET_DATA, zkl.SetDataTxn("/s", b"{}", 3), b""),
        zkl.SubTxn(zkl.OP_CREATE, zkl.CreateTxn("/s/x", None, ACL, False, 1), b""),
        zkl.SubTxn(zkl.OP_DELETE, zkl.DeleteTxn("/s/y"), b""),
    )), id="multi"),
    pytest.param(zkl.OP_MULTI, zkl.MultiTxn((
        zkl.SubTxn(zkl.OP_CREATE, zkl.CreateTxn("/p", None, ACL, False, 1), b""),
        zkl.SubTxn(zkl.OP_ERROR, zkl.ErrorTxn(-103), b""),
        zkl.SubTxn(zkl.OP_ERROR, zkl.ErrorTxn(-2), b""),
    )), id="multi-failed"),
]


def _entry(zxid, txn_type, body, digest=DIGEST, **kw):
    return zkl.build_entry(client_id=SID, cxid=zxid, zxid=zxid, time=1_700_000_000_000 + zxid,
                           txn_type=txn_type, body=body, digest=digest, **kw)


def _walk(data: bytes, path="log"):
    return list(zkl.iter_txnlog(data, path=path))


def _strip_raw(body):
    if isinstance(body, zkl.MultiTxn):
        return [(t.type, t.body) for t in body.txns]
    return body


@pytest.mark.parametrize("txn_type, body", BODIES)
def test_every_type_round_trips_with_its_digest(txn_type, body):
    log = zkl.build_txnlog([_entry(0x10, txn_type, body)], preallocate=4096)
    header, entry, end = _walk(log)
    assert header.magic == zkl.LOG_MAGIC and header.dbid == 0
    assert (entry.zxid, entry.type, entry.client_id, entry.cxid) == (0x10, txn_type, SID, 0x10)
    assert entry.checksum_valid and entry.body_error is None
    assert _strip_raw(entry.body) == _strip_raw(body)
    assert entry.digest == DIGEST
    assert end.stopped_by == zkl.STOP_PREALLOCATED and end.entries == 1
    assert end.valid_bytes == 16 + entry.size and end.tail_bytes == 4096 - end.valid_bytes


def test_error_txn_has_no_digest():
    _, entry, _ = _walk(zkl.build_txnlog([_entry(3, zkl.OP_ERROR, zkl.ErrorTxn(-110), digest=None)]))
    assert entry.body == zkl.ErrorTxn(-110) and entry.digest is None


def test_close_session_without_body_but_with_digest():
    # a 3.6+ server with closeSessionTxn.enabled=false: no body, 12 digest bytes
    _, entry, _ = _walk(zkl.build_txnlog([_entry(4, zkl.OP_CLOSE_SESSION, zkl.CloseSessionTxn(None))]))
    assert entry.body == zkl.CloseSessionTxn(None) and entry.digest == DIGEST


def test_create_v0_without_parent_cversion():
    body = build_ustring("/old") + build_buffer(b"d") + build_int(-1) + b"\x00"
    payload = zkl.TXN_HEADER.pack(SID, 1, 5, 0, zkl.OP_CREATE) + body
    raw = zkl.ENTRY_PREFIX.pack(zlib.adler32(payload), len(payload)) + payload + b"B"
    _, entry, _ = _walk(zkl.build_txnlog([raw]))
    assert entry.body == zkl.CreateTxn("/old", b"d", None, False, -1)


def test_paths_of_a_multi():
    multi = BODIES[13].values[1]
    _, entry, _ = _walk(zkl.build_txnlog([_entry(9, zkl.OP_MULTI, multi)]))
    assert entry.paths == ("/controller_epoch", "/s", "/s/x", "/s/y")
    assert not entry.body.failed and BODIES[14].values[1].failed


def test_checksum_mismatch_is_a_finding_and_the_walk_goes_on():
    log = zkl.build_txnlog([_entry(1, zkl.OP_DELETE, zkl.DeleteTxn("/a"), checksum=99),
                            _entry(2, zkl.OP_DELETE, zkl.DeleteTxn("/b"))])
    items = _walk(log)
    entries = [x for x in items if isinstance(x, zkl.TxnEntry)]
    findings = [x for x in items if isinstance(x, Finding)]
    assert [e.checksum_valid for e in entries] == [False, True]
    assert [f.kind for f in findings] == ["zk_checksum_mismatch"] and findings[0].position == 16


@pytest.mark.parametrize("cut", [pytest.param(5, id="in-prefix"), pytest.param(20, id="in-body"),
                                 pytest.param(1, id="before-B")])
def test_torn_last_entry_is_a_finding(cut):
    good = _entry(1, zkl.OP_DELETE, zkl.DeleteTxn("/a"))
    torn = _entry(2, zkl.OP_SET_DATA, zkl.SetDataTxn("/b", b"v" * 40, 1))
    items = _walk(zkl.build_txnlog([good, torn[:len(torn) - cut]]))
    entries = [x for x in items if isinstance(x, zkl.TxnEntry)]
    assert [e.zxid for e in entries] == [1]
    finding = next(x for x in items if isinstance(x, Finding))
    assert finding.kind == "torn_txn_entry" and finding.position == 16 + len(good)
    assert items[-1].stopped_by == zkl.STOP_TORN and items[-1].valid_bytes == 16 + len(good)


def test_missing_end_marker_is_torn():
    bad = bytearray(_entry(1, zkl.OP_DELETE, zkl.DeleteTxn("/a")))
    bad[-1] = 0
    items = _walk(zkl.build_txnlog([bytes(bad)], preallocate=200))
    assert [x.kind for x in items if isinstance(x, Finding)] == ["torn_txn_entry"]


def test_non_zero_bytes_after_the_zero_length_are_reported():
    log = bytearray(zkl.build_txnlog([_entry(1, zkl.OP_DELETE, zkl.DeleteTxn("/a"))], preallocate=300))
    log[-3] = 7
    items = _walk(bytes(log))
    assert [x.kind for x in items if isinstance(x, Finding)] == ["zk_unread_tail"]
    assert items[-1].stopped_by == zkl.STOP_PREALLOCATED


def test_unparseable_body_keeps_the_entry():
    payload = zkl.TXN_HEADER.pack(SID, 1, 7, 0, zkl.OP_SET_DATA) + build_int(500)
    raw = zkl.ENTRY_PREFIX.pack(zlib.adler32(payload), len(payload)) + payload + b"B"
    items = _walk(zkl.build_txnlog([raw]))
    entry = items[1]
    assert entry.body is None and "path" in entry.body_error
    assert [x.kind for x in items if isinstance(x, Finding)] == ["zk_invalid_txn"]


def test_unknown_type_is_reported():
    payload = zkl.TXN_HEADER.pack(SID, 1, 7, 0, 99) + b"\x00\x01"
    raw = zkl.ENTRY_PREFIX.pack(zlib.adler32(payload), len(payload)) + payload + b"B"
    (finding,) = [x for x in _walk(zkl.build_txnlog([raw])) if isinstance(x, Finding)]
    assert finding.kind == "zk_unknown_txn_type"
    # the entry's type is its own detail, beside the envelope's "type":"finding"
    assert finding.details == {"zxid": 7, "txn_type": 99}


def test_header_errors_raise():
    with pytest.raises(Malformed):
        _walk(b"ZKSN" + bytes(12))
    with pytest.raises(FormatError):
        _walk(b"ZKLG")


def test_empty_file_is_skipped(tmp_path):
    f = tmp_path / "log.5"
    f.write_bytes(b"")
    header, entries, findings, end = zkl.read_txnlog(f)
    assert header is None and entries == [] and end.entries == 0


@pytest.mark.parametrize("name, expected", [
    pytest.param("log.a0", 0xA0, id="log"),
    pytest.param("log.a0.TxnLogToolkit.txt", None, id="tool-output"),
    pytest.param("log.", None, id="empty"),
    pytest.param("snapshot.a0", None, id="snapshot"),
])
def test_log_names(name, expected):
    assert zkl.parse_log_name(name) == expected


# -- properties -------------------------------------------------------------------------------

VALID = zkl.build_txnlog([_entry(i + 1, t, b) for i, p in enumerate(BODIES) for t, b in [p.values]],
                         preallocate=4096)


def _check(data: bytes) -> None:
    try:
        items = _walk(data, "p")
    except FormatError as exc:
        assert exc.path == "p"
        return
    assert isinstance(items[0], zkl.TxnLogHeader) and isinstance(items[-1], zkl.TxnLogEnd)
    assert all(isinstance(x, (zkl.TxnEntry, Finding)) for x in items[1:-1])
    assert items[-1].valid_bytes <= len(data)


@given(st.binary(max_size=400))
def test_any_bytes_after_a_valid_header(data):
    _check(VALID[:16] + data)


@given(st.binary(max_size=100))
def test_any_bytes(data):
    _check(data)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(16, 1500), st.integers(0, 255)), min_size=1, max_size=6),
       st.integers(16, len(VALID)))
def test_mutated_logs(patches, cut):
    data = bytearray(VALID)
    for at, value in patches:
        data[at] = value
    _check(bytes(data[:cut]))


def test_huge_declared_entry_length_does_not_allocate():
    import tracemalloc
    raw = bytearray(VALID)
    raw[16 + 8:16 + 12] = b"\x7f\xff\xff\xff"
    tracemalloc.start()
    try:
        items = _walk(bytes(raw))
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000
    assert [x.kind for x in items if isinstance(x, Finding)] == ["torn_txn_entry"]


# -- the walk's fast decoder against parse_entry, the reference --------------------------------

VALID_NO_DIGEST = zkl.build_txnlog([_entry(i + 1, t, b, digest=None) for i, p in enumerate(BODIES)
                                    for t, b in [p.values]])


def _agrees_with_reference(data: bytes) -> None:
    """Every entry the walk yields is what ``parse_entry`` decodes from its bytes (same types,
    values and body error)."""
    try:
        items = _walk(data, "p")
    except FormatError:
        return
    for e in items:
        if isinstance(e, zkl.TxnEntry):
            at = e.position + zkl.ENTRY_PREFIX.size
            header, body, digest, error = zkl.parse_entry(memoryview(data)[at:e.position + e.size - 1],
                                                          path="p", base=at)
            assert header == (e.client_id, e.cxid, e.zxid, e.time, e.type)
            assert (repr(body), repr(digest), error) == (repr(e.body), repr(e.digest), e.body_error)


def test_regular_entries_never_need_the_reference(monkeypatch):
    def refuse(*_a, **_k):
        raise AssertionError("parse_entry called for a regular entry")

    v0 = _entry(1, zkl.OP_CREATE, zkl.CreateTxn("/v0", b"", ACL, False, 0), digest=None)[:-5]
    v0 = zkl.ENTRY_PREFIX.pack(zlib.adler32(v0[12:]), len(v0) - 12) + v0[12:] + b"B"
    logs = [VALID, VALID_NO_DIGEST, zkl.build_txnlog([
        _entry(1, zkl.OP_CLOSE_SESSION, zkl.CloseSessionTxn(None)),
        _entry(2, zkl.OP_CLOSE_SESSION, zkl.CloseSessionTxn(None), digest=None), v0])]
    expected = [_walk(log) for log in logs]
    monkeypatch.setattr(zkl, "parse_entry", refuse)
    assert [_walk(log) for log in logs] == expected
    assert expected[2][3].body == zkl.CreateTxn("/v0", b"", ACL, False, -1)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([VALID, VALID_NO_DIGEST]), st.lists(st.tuples(st.integers(16, 1500), st.integers(0, 255)),
                                                           min_size=1, max_size=6))
def test_fast_decoder_agrees_with_the_reference_on_mutated_logs(log, patches):
    data = bytearray(log)
    for at, value in patches:
        data[at % len(data)] = value
    _agrees_with_reference(bytes(data))


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, len(BODIES) - 1), st.booleans(), st.integers(0, 400), st.integers(0, 400),
       st.binary(max_size=40))
def test_fast_decoder_agrees_with_the_reference_on_edited_bodies(which, with_digest, start, stop, insert):
    """Bytes of one entry's body cut out or inserted (its framing kept whole, so the entry is
    still yielded): both decoders give the same value or the same error."""
    txn_type, body = BODIES[which].values
    raw = _entry(1, txn_type, body, digest=DIGEST if with_digest else None)
    payload = raw[12:-1]
    start = zkl.TXN_HEADER.size + start % (len(payload) - zkl.TXN_HEADER.size + 1)
    stop = max(start, min(len(payload), start + stop % 16))
    payload = payload[:start] + insert + payload[stop:]
    entry = zkl.ENTRY_PREFIX.pack(zlib.adler32(payload), len(payload)) + payload + b"B"
    _agrees_with_reference(zkl.build_txnlog([entry]))


def test_entries_the_fast_path_gives_up_on_leave_nothing_behind():
    # regression (bench/fuzz, zk-txnlog): the fast path gave up by raising one shared exception
    # instance, whose traceback grew with every raise and kept every frame and input buffer alive
    import gc
    import tracemalloc

    payload = zkl.TXN_HEADER.pack(SID, 1, 7, 0, 99) + b"\x00\x01"   # an unknown type: irregular
    raw = zkl.ENTRY_PREFIX.pack(zlib.adler32(payload), len(payload)) + payload + b"B"
    log = zkl.build_txnlog([raw] * 50)

    def walk_copies(n):
        for _ in range(n):
            assert len(_walk(bytes(bytearray(log)))) == 102  # header, 50 entries, 50 findings, end
        gc.collect()

    walk_copies(5)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        walk_copies(200)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 20 * len(log)  # was 200 copies of the log and 10,000 tracebacks
