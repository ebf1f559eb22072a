"""ZooKeeper snapshot reader: layout, seals, trailers, compression by suffix, damage as findings,
and the property that any bytes give values, findings or a FormatError."""

from __future__ import annotations

import struct
import zlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kreplica.formats.zookeeper import snapshot as zks
from kreplica.formats.errors import FormatError, Malformed, UnsupportedVersion
from kreplica.formats.findings import Finding
from kreplica.formats.zookeeper.snapshot import Acl, SnapshotDigest, ZNode

OPEN = {2: [Acl(31, "world", "anyone")], 1: [Acl(1, "world", "anyone")]}


def _node(path, data=None, acl=2, czxid=1, owner=0, cversion=0, pzxid=None):
    return ZNode(path, data, acl, czxid, czxid, 1_700_000_000_000 + czxid, 1_700_000_000_000 + czxid,
                 0, cversion, 0, owner, pzxid if pzxid is not None else czxid)


NODES = [
    _node("/", b"", acl=-1, czxid=0, cversion=2, pzxid=5),
    _node("/zookeeper", b"", acl=-1, czxid=0),
    _node("/brokers", None, czxid=3, cversion=1),
    _node("/brokers/ids", None, czxid=4, cversion=1),
    _node("/brokers/ids/1", b'{"version":5}', czxid=5, owner=0x1000001),
]


def _items(buf, path="snap"):
    return list(zks.iter_snapshot(buf, path=path))


def test_round_trip_with_sessions_acls_and_digest():
    raw = zks.build_snapshot(NODES, sessions={0x1000001: 18000}, acls=OPEN,
                             digest=SnapshotDigest(5, 2, 12345))
    items = _items(raw)
    pre, *nodes, end = items
    assert pre.magic == zks.SNAP_MAGIC and pre.version == 2 and pre.dbid == -1
    assert pre.sessions == {0x1000001: 18000}
    assert pre.acls == {k: tuple(v) for k, v in OPEN.items()}
    assert [n[:12] for n in nodes] == [tuple(n[:12]) for n in NODES]
    assert nodes[0].path == "/" and nodes[2].data is None and nodes[1].data == b""
    assert end.complete and end.seals_valid and len(end.seals) == 2
    assert end.digest == SnapshotDigest(5, 2, 12345)
    assert end.last_processed_zxid is None


def test_root_is_stored_with_empty_path_and_slash_ends_the_list():
    raw = zks.build_snapshot(NODES[:1])
    header_sessions_acls = zks.FILE_HEADER.size + 4 + 4
    # root path: int length 0; then after the 60-byte stat, the "/" terminator
    assert raw[header_sessions_acls:header_sessions_acls + 4] == b"\x00\x00\x00\x00"
    assert b"\x00\x00\x00\x01/" in raw


def test_seal_covers_every_byte_before_it():
    raw = zks.build_snapshot(NODES, acls=OPEN)
    seal_at = len(raw) - zks.SEAL_SIZE
    (stored,) = struct.unpack_from(">q", raw, seal_at)
    assert stored == zlib.adler32(raw[:seal_at])


def test_seal_mismatch_is_a_finding_and_nodes_still_come():
    raw = bytearray(zks.build_snapshot(NODES, acls=OPEN))
    i = raw.index(b'{"version":5}')
    raw[i + 2] ^= 0x20
    items = _items(bytes(raw))
    findings = [x for x in items if isinstance(x, Finding)]
    assert [f.kind for f in findings] == ["zk_checksum_mismatch"]
    assert findings[0].details["seal"] == 1
    assert sum(isinstance(x, ZNode) for x in items) == len(NODES)
    assert items[-1].seals_valid is False and items[-1].complete


@pytest.mark.parametrize("digest, lpz, seals", [
    pytest.param(None, None, 1, id="pre-3.6"),
    pytest.param(SnapshotDigest(9, 2, 777), None, 2, id="3.6-digest"),
    pytest.param(None, 0x42, 2, id="3.9-digest-disabled"),
    pytest.param(SnapshotDigest(9, 2, 777), 0x42, 3, id="3.9-both"),
    pytest.param(SnapshotDigest(9, 1, "ab12"), None, 2, id="digest-v1-hex-string"),
])
def test_trailers_are_decided_by_bytes_left(digest, lpz, seals):
    raw = zks.build_snapshot(NODES, acls=OPEN, digest=digest, last_processed_zxid=lpz)
    end = _items(raw)[-1]
    assert end.digest == digest and end.last_processed_zxid == lpz
    assert len(end.seals) == seals and end.seals_valid


def test_second_seal_covers_the_first():
    raw = bytearray(zks.build_snapshot(NODES, acls=OPEN, digest=SnapshotDigest(9, 2, 777)))
    first = len(raw) - zks.DIGEST_TRAILER - zks.SEAL_SIZE
    raw[first + 7] ^= 1    # damage seal #1 only
    kinds = [(x.kind, x.details["seal"]) for x in _items(bytes(raw)) if isinstance(x, Finding)]
    assert kinds == [("zk_checksum_mismatch", 1), ("zk_checksum_mismatch", 2)]


def test_truncated_snapshot_yields_nodes_then_a_finding():
    raw = zks.build_snapshot(NODES, acls=OPEN)
    cut = raw.index(b"/brokers/ids/1") + 5
    items = _items(raw[:cut])
    nodes = [x for x in items if isinstance(x, ZNode)]
    assert [n.path for n in nodes] == [n.path for n in NODES[:4]]
    finding = next(x for x in items if isinstance(x, Finding))
    assert finding.kind == "zk_truncated_snapshot" and finding.position == cut - 9
    assert items[-1].complete is False


def test_node_before_its_parent_is_a_finding():
    raw = zks.build_snapshot([NODES[0], NODES[3], NODES[2]], acls=OPEN)
    kinds = [x.kind for x in _items(raw) if isinstance(x, Finding)]
    assert kinds == ["zk_orphan_znode"]


def test_bad_magic_and_version_raise():
    raw = zks.build_snapshot(NODES)
    with pytest.raises(Malformed) as info:
        _items(b"ZKLG" + raw[4:])
    assert info.value.field == "magic" and info.value.position == 0
    with pytest.raises(UnsupportedVersion):
        _items(raw[:4] + b"\x00\x00\x00\x03" + raw[8:])


def test_null_acl_list_in_cache_is_malformed():
    raw = bytearray(zks.build_snapshot(NODES[:1], acls={1: [Acl(1, "world", "anyone")]}))
    at = zks.FILE_HEADER.size + 4 + 4 + 8
    raw[at:at + 4] = b"\xff\xff\xff\xff"
    with pytest.raises(FormatError):
        _items(bytes(raw))


@pytest.mark.parametrize("suffix, wrap", [
    pytest.param("", lambda b: b, id="plain"),
    pytest.param(".gz", zks.build_gzip_stream, id="gz"),
    pytest.param(".snappy", zks.build_snappy_stream, id="snappy"),
])
def test_compression_is_chosen_by_suffix(tmp_path, suffix, wrap):
    stream = zks.build_snapshot(NODES * 1 + [_node(f"/n{i}", bytes(1000), czxid=10 + i) for i in range(60)],
                                acls=OPEN, digest=SnapshotDigest(70, 2, 1))
    f = tmp_path / f"snapshot.46{suffix}"
    f.write_bytes(wrap(stream))
    assert zks.is_valid_snapshot_file(f.read_bytes(), zks.compression_of(f))
    snap = zks.read_snapshot(f)
    assert snap.preamble.compression == (suffix[1:] or "none")
    assert len(snap.nodes) == len(NODES) + 60 and snap.findings == ()
    assert snap.end.stream_size == len(stream)


def test_compressed_file_without_its_magic_raises(tmp_path):
    f = tmp_path / "snapshot.5.gz"
    f.write_bytes(zks.build_snapshot(NODES))
    with pytest.raises(Malformed) as info:
        zks.read_snapshot(f)
    assert info.value.field == "gzip magic"


def test_broken_gzip_keeps_the_nodes_before_the_break(tmp_path):
    stream = zks.build_snapshot(NODES + [_node(f"/n{i}", bytes(range(256)) * 8, czxid=10 + i) for i in range(40)])
    gz = zks.build_gzip_stream(stream)
    f = tmp_path / "snapshot.9.gz"
    f.write_bytes(gz[: len(gz) // 2])
    snap = zks.read_snapshot(f)
    kinds = [x.kind for x in snap.findings]
    assert kinds[0] == "decompression_error" and "zk_truncated_snapshot" in kinds
    assert 0 < len(snap.nodes) < len(NODES) + 40


@pytest.mark.parametrize("name, expected", [
    pytest.param("snapshot.b6", (0xB6, "none"), id="plain"),
    pytest.param("snapshot.100000000.gz", (0x100000000, "gz"), id="gz"),
    pytest.param("snapshot.0.snappy", (0, "snappy"), id="snappy"),
    pytest.param("snapshot.b6.SnapshotFormatter-d.txt", None, id="tool-output"),
    pytest.param("snapshot.xyz", None, id="not-hex"),
    pytest.param("log.b6", None, id="log"),
])
def test_snapshot_names(name, expected):
    assert zks.parse_snapshot_name(name) == expected


def test_plain_validity_check_wants_the_seal_tail():
    raw = zks.build_snapshot(NODES)
    assert zks.is_valid_snapshot_file(raw, "none")
    assert not zks.is_valid_snapshot_file(raw[:-1], "none")


def test_container_and_ttl_owners_are_not_sessions():
    assert zks.client_ephemeral_owner(zks.CONTAINER_EPHEMERAL_OWNER) == 0
    ttl_owner = ((0xFF << 56) | 5000) - (1 << 64)
    assert zks.client_ephemeral_owner(ttl_owner) == 0
    assert zks.is_session_owner(0x100002228F70001)
    assert not zks.is_session_owner(0)


# -- properties -------------------------------------------------------------------------------

VALID = zks.build_snapshot(NODES, sessions={0x1000001: 18000}, acls=OPEN,
                           digest=SnapshotDigest(5, 2, 12345), last_processed_zxid=5)


def _walk(data: bytes) -> None:
    try:
        items = list(zks.iter_snapshot(data, path="p"))
    except FormatError as exc:
        assert exc.path == "p"
        return
    assert isinstance(items[0], zks.SnapshotPreamble)
    assert isinstance(items[-1], zks.SnapshotEnd)
    assert all(isinstance(x, (ZNode, Finding)) for x in items[1:-1])


@given(st.binary(max_size=512))
def test_any_bytes_give_values_findings_or_format_error(data):
    _walk(data)


@given(st.binary(max_size=256))
def test_any_bytes_after_a_valid_header(data):
    _walk(VALID[:16] + data)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, len(VALID) - 1), st.integers(0, 255)), min_size=1, max_size=8),
       st.integers(0, len(VALID)))
def test_mutated_snapshots(patches, cut):
    data = bytearray(VALID)
    for at, value in patches:
        data[at] = value
    _walk(bytes(data[:cut]))


@given(st.binary(max_size=300))
def test_random_bytes_in_compressed_containers(data):
    for compression, magic in (("gz", zks.GZIP_MAGIC), ("snappy", zks.SNAPPY_MAGIC)):
        try:
            stream, _finding = zks.inflate(magic + data, compression, path="p", limit=1 << 20)
        except FormatError:
            continue
        assert len(stream) <= 1 << 20
        _walk(stream)


@pytest.mark.parametrize("patch_field", [pytest.param("data", id="node-data"), pytest.param("path", id="node-path"),
                                         pytest.param("sessions", id="session-count")])
def test_huge_declared_lengths_do_not_allocate(patch_field):
    import tracemalloc
    raw = bytearray(VALID)
    if patch_field == "sessions":
        at = zks.FILE_HEADER.size
    elif patch_field == "path":
        at = raw.index(b"/brokers") - 4
    else:
        at = raw.index(b'{"version":5}') - 4
    raw[at:at + 4] = b"\x7f\xff\xff\xff"
    tracemalloc.start()
    try:
        _walk(bytes(raw))
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000


def test_snappy_block_declaring_gigabytes_does_not_allocate_them():
    import tracemalloc
    from kreplica.formats.varint import build_unsigned_varint
    block = build_unsigned_varint(0xFFFFFFF0) + b"\x00a"     # declares ~4 GiB, holds one literal
    framed = zks.SNAPPY_MAGIC + b"\x00\x00\x00\x01\x00\x00\x00\x01" + len(block).to_bytes(4, "big") + block
    tracemalloc.start()
    try:
        data, finding = zks.inflate(framed, "snappy", path="p")
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert data == b"" and finding.kind == "decompression_error"
    assert peak < 1_000_000


# -- a gz snapshot may inflate to 256 times its size (issue 14) --------------------------------


def test_a_gz_snapshot_inflating_past_256_times_its_size_is_a_bomb_finding(tmp_path, monkeypatch):
    # a node holding 8 MiB of zeros deflates about 1000:1, deflate's ceiling: once allowed (1032x),
    # now past MAX_INFLATION_RATIO; the nodes before it are read, and nothing near 8 MiB is held
    import tracemalloc

    monkeypatch.setattr(zks, "MIN_INFLATION_ALLOWANCE", 1 << 20)
    before = [_node(f"/n{i}", b"x" * 100, czxid=10 + i) for i in range(20)]
    stream = zks.build_snapshot(NODES + before + [_node("/bomb", bytes(8 << 20), czxid=99)], acls=OPEN)
    gz = zks.build_gzip_stream(stream)
    limit = max(1 << 20, zks.MAX_INFLATION_RATIO * len(gz))
    assert len(stream) > 3 * limit and zks.inflation_limit(len(gz), "gz") == limit
    f = tmp_path / "snapshot.63.gz"
    f.write_bytes(gz)
    tracemalloc.start()
    try:
        snap = zks.read_snapshot(f)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    bomb = snap.findings[0]
    assert bomb.kind == "decompression_error" and "decompression bomb" in bomb.message
    assert bomb.details == {"uncompressed_bytes": limit, "limit": limit, "compressed_bytes": len(gz)}
    assert [n.path for n in snap.nodes] == [n.path for n in NODES + before]
    assert peak < 4 * limit


def test_a_gz_snapshot_within_the_ratio_inflates_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(zks, "MIN_INFLATION_ALLOWANCE", 1 << 16)
    nodes = NODES + [_node(f"/n{i}", b"%d" % i * 50, czxid=10 + i) for i in range(2000)]
    stream = zks.build_snapshot(nodes, acls=OPEN)
    gz = zks.build_gzip_stream(stream)
    assert zks.MAX_INFLATION_RATIO * len(gz) > len(stream) > 1 << 16
    f = tmp_path / "snapshot.7d7.gz"
    f.write_bytes(gz)
    snap = zks.read_snapshot(f)
    assert snap.findings == () and len(snap.nodes) == len(nodes)
