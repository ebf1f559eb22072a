"""The output of ``kreplica zk dump`` and ``kreplica zk log``: schema version 1; the text report
is :mod:`kreplica.report.text.zk`.

The machine objects are built here and nowhere else. ``zk dump`` writes one ``znode`` per node
(pre-order, children sorted by name), the findings of the replay, then one ``zk_summary``::

    znode       {type:"znode", path, stat:{czxid, mzxid, ctime, mtime, version, cversion,
                 client_cversion, aversion, ephemeral_owner, pzxid, data_length, num_children},
                 data: str|null, data_json?: <any JSON value>, acl: [{perms, scheme, id}]|null}
    finding     {type:"finding", path, position, kind, severity, message, ...}
    zk_summary  {type:"zk_summary", source, zxid, time, snapshot, snapshot_zxid, logs:[str],
                 applied, digest, nodes, listed, sessions:[{session, timeout}]}

``data`` is the node's bytes encoded per ``--payload`` (base64 by default, ``hex``, ``utf8`` or,
for ``none``, always null): ``null`` means the node has null data, ``""`` zero-length data, so
the two never look alike (SnapshotFormatter prints both as nothing). ``data_json`` is present
only when the bytes are strict UTF-8 holding one JSON value (Kafka's znodes: objects, and
numbers such as ``/controller_epoch``); it is left out for ``--payload none``, and also when the
value could not be written losslessly (``NaN``/``Infinity``, integers beyond 64 bits, nesting
deeper than 100). So ``"data_json" in obj`` is the test for "this is JSON", and ``data`` always
round-trips the bytes.
``stat`` is ``StatPersisted`` as SnapshotFormatter prints it: ``cversion`` is the persisted
count and ``ephemeral_owner`` the stored owner (container/TTL markers included);
``client_cversion`` is what a client (zkCli) sees, ``2 * cversion - num_children``;
``data_length`` is 0 for null data, as in ZooKeeper's ``Stat``. ``acl`` null is a node without
an ACL-cache entry (id -1). Timestamps are epoch milliseconds; zxids and session ids are plain
integers (write them in hex yourself: ``jq 'printf'`` has none, so the text format does it).

``zk log`` writes, for each log file in zxid order, a ``zk_log_file``, each entry as a
``zk_txn`` with any finding about it right after, then a ``zk_log_end``::

    zk_log_file {type:"zk_log_file", path, version, dbid}
    zk_txn      {type:"zk_txn", file, position, size, zxid, time, session, cxid,
                 txn_type: str|int, checksum_valid, paths:[str], body: {...}|null,
                 body_error: str|null, digest: {version, tree_digest}|null}
    zk_log_end  {type:"zk_log_end", path, file_size, entries, valid_bytes, stopped_by,
                 tail_bytes, first_zxid, last_zxid}

``txn_type`` is ZooKeeper's ``OpCode`` name (``create``, ``setData``, ``multi``, …) or the raw
integer when the code is unknown. ``body`` by type: create/create2/createContainer/createTTL
``{path, data, data_json?, acl, ephemeral, parent_cversion, ttl}``; delete/deleteContainer
``{path}``; setData/reconfig ``{path, data, data_json?, version}``; setACL ``{path, acl,
version}``; check ``{path, version}``; createSession ``{timeout}``; closeSession ``{paths}``
(null when the server logged no list); error ``{err, error}`` (the ``KeeperException.Code``
name or null); multi ``{failed, txns:[{txn_type, body, raw}]}`` where ``raw`` (the
sub-record's bytes per ``--payload``) is given only when the body could not be decoded.
``body`` is null for a type without a body or a body that did not parse (``body_error`` says
why). ``data`` fields follow the ``znode`` rules above.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable


from kreplica.formats.findings import Finding
from kreplica.formats.zookeeper import txnlog as zkl
from kreplica.model.zookeeper import ZkNode, ZkState
from kreplica.report.output.emitter import Emitter
from kreplica.report.output.encoding import dumps
from kreplica.report.output.findings import finding_object
from kreplica.report.output.formats import OutputFormat, Payload
from kreplica.report.output.payload import encoder

SCHEMA_VERSION = 1

Encoder = Callable[[bytes | None], str | None]

_INT64 = (-(1 << 63), (1 << 64) - 1)   # what msgpack can carry
MAX_JSON_DEPTH = 100                   # msgpack.Packer stops at 511 levels of nesting


def _reject_constant(name: str):
    raise ValueError(name)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def _fits(value) -> bool:
    """True when every integer in ``value`` fits msgpack's 64 bits and nesting stays within
    ``MAX_JSON_DEPTH`` (msgpack's packer refuses deeper), so json/ndjson/msgpack all carry it."""
    stack = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, bool) or v is None or isinstance(v, (str, float)):
            continue
        if isinstance(v, int):
            if not _INT64[0] <= v <= _INT64[1]:
                return False
        elif depth >= MAX_JSON_DEPTH:
            return False
        elif isinstance(v, dict):
            stack.extend((x, depth + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, depth + 1) for x in v)
    return True


_NOT_JSON = object()


def json_value(data: bytes | None):
    """The JSON value ``data`` holds, or ``_NOT_JSON``: strict UTF-8, one value, no NaN/Infinity,
    integers within 64 bits (so every machine format carries it unchanged)."""
    if not data:
        return _NOT_JSON
    try:
        value = json.loads(bytes(data).decode("utf-8"), parse_constant=_reject_constant, parse_float=_finite)
    except (ValueError, RecursionError):
        return _NOT_JSON
    return value if _fits(value) else _NOT_JSON


def _put_data(obj: dict, data: bytes | None, enc: Encoder, payload: Payload) -> None:
    obj["data"] = enc(data)
    if payload is not Payload.none:
        value = json_value(data)
        if value is not _NOT_JSON:
            obj["data_json"] = value


def acl_list(acl) -> list[dict] | None:
    if acl is None:
        return None
    return [{"perms": a.perms, "scheme": a.scheme, "id": a.id} for a in acl]


# -- zk dump --------------------------------------------------------------------------------


def znode_object(path: str, n: ZkNode, enc: Encoder, payload: Payload) -> dict:
    czxid, mzxid, ctime, mtime, version, cversion, aversion, owner, pzxid = n.stat_values()
    num_children = n.num_children
    obj = {
        "type": "znode", "path": path,
        "stat": {
            "czxid": czxid, "mzxid": mzxid, "ctime": ctime, "mtime": mtime,
            "version": version, "cversion": cversion, "client_cversion": 2 * cversion - num_children,
            "aversion": aversion, "ephemeral_owner": owner, "pzxid": pzxid,
            "data_length": len(n.data) if n.data is not None else 0, "num_children": num_children,
        },
    }
    _put_data(obj, n.data, enc, payload)
    obj["acl"] = acl_list(n.acl)
    return obj


#: ``znode_object`` as one ndjson line (the same text ``dumps`` writes for it).
_ZNODE_LINE = ('{"type":"znode","path":%s,"stat":{"czxid":%d,"mzxid":%d,"ctime":%d,"mtime":%d,'
               '"version":%d,"cversion":%d,"client_cversion":%d,"aversion":%d,"ephemeral_owner":%d,'
               '"pzxid":%d,"data_length":%d,"num_children":%d},"data":%s%s,"acl":%s}\n')


def _emit_znode_lines(tree: Iterable[tuple[str, ZkNode]], emitter: Emitter, enc: Encoder, payload: Payload) -> int:
    """ndjson: each node's line from a template rather than a dict through the JSON encoder.

    NOTE: the dump's hot path (one line per znode; figures in bench/README.md, "ZooKeeper").
    ACL lists are shared by many nodes, so each list's JSON is made once.
    """
    quote = dumps
    acl_json: dict = {}
    line = _ZNODE_LINE
    write = emitter.write_line
    with_json = payload is not Payload.none
    listed = 0
    for path, n in tree:
        data = n.data
        czxid, mzxid, ctime, mtime, version, cversion, aversion, owner, pzxid = n.stat_values()
        num_children = n.num_children
        acl = n.acl
        acl_text = acl_json.get(acl)
        if acl_text is None:
            acl_text = acl_json[acl] = quote(acl_list(acl))
        text = enc(data)
        extra = ""
        if with_json:
            value = json_value(data)
            if value is not _NOT_JSON:
                extra = ',"data_json":' + quote(value)
        write(line % (quote(path), czxid, mzxid, ctime, mtime, version, cversion, 2 * cversion - num_children,
                      aversion, owner, pzxid, len(data) if data is not None else 0, num_children,
                      "null" if text is None else quote(text), extra, acl_text))
        listed += 1
    return listed


def zk_summary_object(state: ZkState, listed: int) -> dict:
    return {
        "type": "zk_summary", "source": state.source, "zxid": state.zxid, "time": state.time,
        "snapshot": state.snapshot, "snapshot_zxid": state.snapshot_zxid, "logs": list(state.logs),
        "applied": state.applied, "digest": state.digest, "nodes": len(state.nodes), "listed": listed,
        "sessions": [{"session": s, "timeout": t} for s, t in sorted(state.sessions.items())],
    }


def emit_dump(state: ZkState, tree: Iterable[tuple[str, ZkNode]], emitter: Emitter, payload: Payload) -> int:
    """Write the nodes, the findings and the summary; returns the number of error findings."""
    enc = encoder(payload)
    listed = 0
    if emitter.format is OutputFormat.ndjson:
        listed = _emit_znode_lines(tree, emitter, enc, payload)
    else:
        for path, node in tree:
            emitter.emit(znode_object(path, node, enc, payload))
            listed += 1
    for f in state.findings:
        emitter.emit(finding_object(f))
    emitter.emit(zk_summary_object(state, listed))
    return sum(1 for f in state.findings if f.is_error)


# -- zk log ---------------------------------------------------------------------------------


def txn_type_name(code: int) -> str | int:
    return zkl.OPCODE_NAMES.get(code, code)


def body_object(txn_type: int, body, enc: Encoder, payload: Payload) -> dict | None:
    """The JSON form of a decoded txn body (see the module docstring); ``None`` stays null."""
    if body is None:
        return None
    if isinstance(body, zkl.CreateTxn):
        obj = {"path": body.path}
        _put_data(obj, body.data, enc, payload)
        obj.update(acl=acl_list(body.acl), ephemeral=body.ephemeral, parent_cversion=body.parent_cversion,
                   ttl=body.ttl)
        return obj
    if isinstance(body, zkl.SetDataTxn):
        obj = {"path": body.path}
        _put_data(obj, body.data, enc, payload)
        obj["version"] = body.version
        return obj
    if isinstance(body, zkl.DeleteTxn):
        return {"path": body.path}
    if isinstance(body, zkl.SetACLTxn):
        return {"path": body.path, "acl": acl_list(body.acl), "version": body.version}
    if isinstance(body, zkl.CheckVersionTxn):
        return {"path": body.path, "version": body.version}
    if isinstance(body, zkl.CreateSessionTxn):
        return {"timeout": body.timeout}
    if isinstance(body, zkl.CloseSessionTxn):
        return {"paths": list(body.paths) if body.paths is not None else None}
    if isinstance(body, zkl.ErrorTxn):
        return {"err": body.err, "error": zkl.ERROR_CODES.get(body.err)}
    if isinstance(body, zkl.MultiTxn):
        return {"failed": body.failed, "txns": [
            {"txn_type": txn_type_name(t.type), "body": body_object(t.type, t.body, enc, payload),
             "raw": enc(bytes(t.raw)) if t.body is None and t.raw is not None else None}
            for t in body.txns]}
    return None


def txn_object(e: zkl.TxnEntry, enc: Encoder, payload: Payload) -> dict:
    return {
        "type": "zk_txn", "file": e.path, "position": e.position, "size": e.size, "zxid": e.zxid,
        "time": e.time, "session": e.client_id, "cxid": e.cxid, "txn_type": txn_type_name(e.type),
        "checksum_valid": e.checksum_valid, "paths": list(e.paths),
        "body": body_object(e.type, e.body, enc, payload), "body_error": e.body_error,
        "digest": ({"version": e.digest.version, "tree_digest": e.digest.tree_digest}
                   if e.digest is not None else None),
    }


def log_file_object(h: zkl.TxnLogHeader) -> dict:
    return {"type": "zk_log_file", "path": h.path, "version": h.version, "dbid": h.dbid}


def log_end_object(end: zkl.TxnLogEnd) -> dict:
    return {"type": "zk_log_end", "path": end.path, "file_size": end.file_size, "entries": end.entries,
            "valid_bytes": end.valid_bytes, "stopped_by": end.stopped_by, "tail_bytes": end.tail_bytes,
            "first_zxid": end.first_zxid, "last_zxid": end.last_zxid}


def emit_log(items: Iterable, emitter: Emitter, payload: Payload) -> int:
    """Write a :func:`~kreplica.model.zookeeper.iter_zk_log` stream; returns the error-finding count."""
    enc = encoder(payload)
    errors = 0
    emit = emitter.emit
    for item in items:
        if isinstance(item, zkl.TxnEntry):
            emit(txn_object(item, enc, payload))
        elif isinstance(item, Finding):
            errors += item.is_error
            emit(finding_object(item))
        elif isinstance(item, zkl.TxnLogHeader):
            emit(log_file_object(item))
        elif isinstance(item, zkl.TxnLogEnd):
            emit(log_end_object(item))
    return errors
