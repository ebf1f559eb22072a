"""Kafka-shaped ZooKeeper histories for tests and fixtures, written with kreplica's own writers
(``formats.zookeeper.snapshot.build_snapshot``, ``formats.zookeeper.txnlog.build_entry``).

A history is a snapshot (the skeleton Kafka's brokers create, the brokers registered, a
controller) and one log of transactions shaped the way Kafka writes them
(``../shared/specs/zookeeper-formats.md`` §7.3): a broker registers with ``multi[create
ephemeral, setData]``, every controller write is ``multi[check /controller_epoch, op]``, a
leader that changes its own ISR writes the state znode with a plain ``setData``, a session the
server expires is closed with cxid 0 and one the client closes carries the client's cxid.
"""

from __future__ import annotations

import json
from pathlib import Path

from kreplica.formats.zookeeper import snapshot as zks
from kreplica.formats.zookeeper import txnlog as zkl

T0 = 1_700_000_000_000
OPEN = (zks.Acl(31, "world", "anyone"),)
SESSION_BASE = 0x100000000000000
ADMIN = SESSION_BASE + 0xA0
SKELETON = ("/brokers", "/brokers/ids", "/brokers/topics", "/admin", "/admin/delete_topics",
            "/isr_change_notification", "/log_dir_event_notification", "/config", "/config/topics")


def state_json(leader: int, epoch: int, isr, controller_epoch: int = 1, recovering: bool = False) -> bytes:
    doc = {"controller_epoch": controller_epoch, "leader": leader, "version": 1, "leader_epoch": epoch,
           "isr": list(isr)}
    if recovering:
        doc["leader_recovery_state"] = 1
    return json.dumps(doc, separators=(",", ":")).encode()


def topic_json(assignment: dict[int, list[int]], adding=None, removing=None) -> bytes:
    return json.dumps({"partitions": {str(p): r for p, r in assignment.items()},
                       "adding_replicas": {str(p): r for p, r in (adding or {}).items()},
                       "removing_replicas": {str(p): r for p, r in (removing or {}).items()},
                       "version": 2}, separators=(",", ":")).encode()


class ZkHistory:
    """Build a history: ``brokers`` registered and ``controller`` elected in the snapshot, then
    transactions added by the methods below (each returns its zxid)."""

    def __init__(self, brokers=(1, 2, 3), controller: int | None = 1, *, step_ms: int = 1000) -> None:
        self.step_ms = step_ms
        self.nodes: dict[str, list] = {}                   # path -> [data, czxid, owner, version]
        self.sessions: dict[int, int] = {}
        self.cxids: dict[int, int] = {}
        self.zxid = 0
        self.entries: list[bytes] = []
        for p in ("/zookeeper", *SKELETON):
            self._snap_node(p, None)
        self._snap_node("/controller_epoch", b"1")
        for b in brokers:
            s = self.session_of(b)
            self.sessions[s] = 18000
            self._snap_node(f"/brokers/ids/{b}", self._registration(b), owner=s)
        if controller is not None:
            self._snap_node("/controller", self._controller(controller), owner=self.session_of(controller))
        self.snapshot_zxid = self.zxid
        self._start_snapshot = self._snapshot()

    # -- snapshot ---------------------------------------------------------------------------------
    def _snap_node(self, path: str, data, owner: int = 0) -> None:
        self.zxid += 1
        self.nodes[path] = [data, self.zxid, owner, 0]

    def _snapshot(self) -> bytes:
        children: dict[str, int] = {}
        for p in self.nodes:
            parent = p.rsplit("/", 1)[0] or "/"
            children[parent] = children.get(parent, 0) + 1
        out = [zks.ZNode("/", b"", -1, 0, 0, 0, 0, 0, children.get("/", 0), 0, 0, self.snapshot_zxid)]
        for p in sorted(self.nodes, key=lambda x: (x.count("/"), x)):   # parents first
            data, czxid, owner, version = self.nodes[p]
            out.append(zks.ZNode(p, data, 1, czxid, czxid, T0 + czxid, T0 + czxid, version,
                                 children.get(p, 0), 0, owner, czxid))
        return zks.build_snapshot(out, sessions=dict(self.sessions), acls={1: list(OPEN)})

    # -- payloads -----------------------------------------------------------------------------------
    @staticmethod
    def session_of(broker: int, incarnation: int = 0) -> int:
        return SESSION_BASE + broker + (incarnation << 8)

    @staticmethod
    def _registration(b: int) -> bytes:
        return json.dumps({"features": {}, "endpoints": [f"PLAINTEXT://kafka-{b}:9092"], "rack": None,
                           "jmx_port": -1, "port": 9092, "host": f"kafka-{b}", "version": 5,
                           "timestamp": str(T0)}, separators=(",", ":")).encode()

    @staticmethod
    def _controller(b: int) -> bytes:
        return json.dumps({"version": 2, "brokerid": b, "timestamp": str(T0), "kraftControllerEpoch": -1},
                          separators=(",", ":")).encode()

    # -- transactions -------------------------------------------------------------------------------
    def txn(self, session: int, txn_type: int, body, *, cxid: int | None = None) -> int:
        self.zxid += 1
        if cxid is None:
            cxid = self.cxids.get(session, 0) + 1
            self.cxids[session] = cxid
        self.entries.append(zkl.build_entry(client_id=session, cxid=cxid, zxid=self.zxid,
                                            time=T0 + self.zxid * self.step_ms, txn_type=txn_type, body=body))
        return self.zxid

    def _create(self, path: str, data, owner: int = 0) -> zkl.SubTxn:
        self.nodes[path] = [data, self.zxid + 1, owner, 0]
        return zkl.SubTxn(zkl.OP_CREATE, zkl.CreateTxn(path, data, OPEN, owner != 0, -1), b"")

    def _set(self, path: str, data) -> zkl.SubTxn:
        node = self.nodes[path]
        node[0], node[3] = data, node[3] + 1
        return zkl.SubTxn(zkl.OP_SET_DATA, zkl.SetDataTxn(path, data, node[3]), b"")

    def _delete(self, path: str) -> zkl.SubTxn:
        self.nodes.pop(path, None)
        return zkl.SubTxn(zkl.OP_DELETE, zkl.DeleteTxn(path), b"")

    def controller_write(self, controller: int, *ops: zkl.SubTxn) -> int:
        """``multi[check /controller_epoch, ops...]`` from the controller's session."""
        check = zkl.SubTxn(zkl.OP_CHECK, zkl.CheckVersionTxn("/controller_epoch", self.nodes["/controller_epoch"][3] + 1),
                           b"")
        return self.txn(self.session_of(controller), zkl.OP_MULTI, zkl.MultiTxn((check, *ops)))

    def create_topic(self, topic: str, assignment: dict[int, list[int]], controller: int = 1,
                     alive=None) -> None:
        """Admin creates the topic znode; the controller creates each partition with its first
        live replica leading (``alive`` defaults to every replica)."""
        self.txn(ADMIN, zkl.OP_CREATE, self._create(f"/brokers/topics/{topic}", topic_json(assignment)).body)
        self.controller_write(controller, self._create(f"/brokers/topics/{topic}/partitions", None))
        for p, replicas in assignment.items():
            live = [r for r in replicas if alive is None or r in alive]
            self.controller_write(controller, self._create(f"/brokers/topics/{topic}/partitions/{p}", None))
            self.controller_write(controller, self._create(f"/brokers/topics/{topic}/partitions/{p}/state",
                                                           state_json(live[0], 0, live)))

    def set_state(self, topic: str, p: int, leader: int, epoch: int, isr, *, controller: int | None = 1,
                  by_broker: int | None = None, recovering: bool = False) -> int:
        """The controller's guarded write, or (``by_broker``) a leader's own plain setData."""
        path = f"/brokers/topics/{topic}/partitions/{p}/state"
        data = state_json(leader, epoch, isr, int(self.nodes["/controller_epoch"][0]), recovering)
        if by_broker is not None:
            return self.txn(self.session_of(by_broker), zkl.OP_SET_DATA, self._set(path, data).body)
        return self.controller_write(controller, self._set(path, data))

    def set_topic(self, topic: str, assignment, adding=None, removing=None, controller: int = 1) -> int:
        return self.controller_write(controller, self._set(f"/brokers/topics/{topic}",
                                                           topic_json(assignment, adding, removing)))

    def admin_create(self, path: str, data) -> int:
        return self.txn(ADMIN, zkl.OP_CREATE, self._create(path, data).body)

    def admin_delete(self, path: str, controller: int = 1) -> int:
        return self.controller_write(controller, self._delete(path))

    def register(self, broker: int, incarnation: int = 0) -> int:
        s = self.session_of(broker, incarnation)
        self.sessions[s] = 18000
        self.txn(s, zkl.OP_CREATE_SESSION, zkl.CreateSessionTxn(18000), cxid=0)
        path = f"/brokers/ids/{broker}"
        create = self._create(path, None, owner=s)
        return self.txn(s, zkl.OP_MULTI, zkl.MultiTxn((create, self._set(path, self._registration(broker)))))

    def end_session(self, broker: int, *, expired: bool, incarnation: int = 0) -> int:
        """closeSession of the broker's session: cxid 0 when the server expires it."""
        s = self.session_of(broker, incarnation)
        owned = tuple(p for p, v in self.nodes.items() if v[2] == s)
        for p in owned:
            del self.nodes[p]
        self.sessions.pop(s, None)
        return self.txn(s, zkl.OP_CLOSE_SESSION, zkl.CloseSessionTxn(owned), cxid=0 if expired else None)

    def elect_controller(self, broker: int) -> int:
        """``multi[create /controller, setData /controller_epoch]`` from the broker's session."""
        epoch = int(self.nodes["/controller_epoch"][0]) + 1
        create = self._create("/controller", self._controller(broker), owner=self.session_of(broker))
        return self.txn(self.session_of(broker), zkl.OP_MULTI,
                        zkl.MultiTxn((create, self._set("/controller_epoch", str(epoch).encode()))))

    def failed_write(self, broker: int) -> int:
        """A zombie controller's guarded write: every sub-transaction an error."""
        return self.txn(self.session_of(broker), zkl.OP_MULTI, zkl.MultiTxn(
            (zkl.SubTxn(zkl.OP_ERROR, zkl.ErrorTxn(-103), b""), zkl.SubTxn(zkl.OP_ERROR, zkl.ErrorTxn(-2), b""))))

    def write(self, root: Path) -> Path:
        """``root/version-2/snapshot.<zxid>`` and ``log.<zxid + 1>``; returns ``root``."""
        d = root / "version-2"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"snapshot.{self.snapshot_zxid:x}").write_bytes(self._start_snapshot)
        (d / f"log.{self.snapshot_zxid + 1:x}").write_bytes(zkl.build_txnlog(self.entries))
        return root
