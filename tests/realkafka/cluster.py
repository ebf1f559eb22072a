"""Real Kafka clusters on 127.0.0.1: KRaft (controllers and brokers, or combined nodes) and
ZooKeeper mode (a ZooKeeper server and brokers), each node a JVM of the release's jars.

A cluster lives under one directory: ``node-<id>/`` holds the node's properties, its log dirs
(``data/``), its metadata log (``metadata/``, KRaft) and its own ``server.log``,
``state-change.log`` and ``controller.log``; ``zookeeper/`` holds ZooKeeper's data dir. Nodes
are started, stopped cleanly or killed one by one by their process id; ``close()`` stops
whatever still runs. Every wait has a timeout.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from tests.realkafka.driver import DriverSession
from tests.realkafka.jars import Release, java
from tests.realkafka.processes import Process, ProcessGroup, free_ports, wait_until

START_TIMEOUT_S = 180.0
JVM = ("-Xms64m", "-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true")

# Small segments and indexes so a scenario of a few thousand records rolls several segments and
# its evidence stays a few MB; quick failure detection so incidents happen within a test's time.
BROKER_DEFAULTS = {
    "num.partitions": "1",
    "auto.create.topics.enable": "false",
    "group.initial.rebalance.delay.ms": "0",
    "log.index.size.max.bytes": "4096",
    "log.index.interval.bytes": "1024",
    "replica.lag.time.max.ms": "6000",
    "num.recovery.threads.per.data.dir": "1",
    "num.network.threads": "2",
    "num.io.threads": "2",
    "background.threads": "2",
    "log.cleaner.threads": "1",
    "log.cleaner.dedupe.buffer.size": "2097152",
    "offsets.topic.num.partitions": "3",
    "transaction.state.log.num.partitions": "3",
}


@dataclass(frozen=True)
class NodeSpec:
    """One node's identity and ports: what its properties file says."""

    node_id: int
    roles: tuple[str, ...]
    directory: Path
    port: int | None
    controller_port: int | None

    @property
    def is_broker(self) -> bool:
        return "broker" in self.roles

    @property
    def is_controller(self) -> bool:
        return "controller" in self.roles


@dataclass
class Cluster:
    """The nodes of one cluster, which of them run, and the driver on its brokers."""

    release: Release
    root: Path
    nodes: dict[int, NodeSpec] = field(default_factory=dict)
    running: dict[int, Process] = field(default_factory=dict)
    group: ProcessGroup = field(default_factory=ProcessGroup)
    _driver: DriverSession | None = None

    # -- what a scenario uses ------------------------------------------------------------------
    def start(self, timeout_s: float = START_TIMEOUT_S) -> Cluster:
        """Every node (after what they need: ZooKeeper), until all brokers are registered; a
        start that fails stops whatever it started."""
        try:
            self._before_nodes()
            for node_id in self.nodes:
                self.start_node(node_id)
            self.wait_for_brokers(self.brokers, timeout_s)
        except BaseException:
            self.close()
            raise
        return self

    def _before_nodes(self) -> None:
        """What must run before the nodes start (nothing in KRaft mode)."""

    @property
    def brokers(self) -> list[int]:
        return sorted(n for n, spec in self.nodes.items() if spec.is_broker)

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{self.nodes[n].port}" for n in self.brokers)

    @property
    def driver(self) -> DriverSession:
        if self._driver is None:
            self._driver = DriverSession(self.release, self.bootstrap, self.root / "driver.log")
        return self._driver

    def start_node(self, node_id: int) -> Process:
        spec = self.nodes[node_id]
        process = self.group.start(f"node-{node_id}", self._node_command(spec), spec.directory / "stdout.log",
                                   cwd=spec.directory)
        self.running[node_id] = process
        return process

    def stop_node(self, node_id: int) -> int:
        """A clean shutdown (SIGTERM: controlled shutdown on a broker)."""
        return self.running.pop(node_id).stop()

    def pause_node(self, node_id: int) -> None:
        """SIGSTOP: the node stops fetching and heartbeating, as in a long GC pause."""
        self.running[node_id].pause()

    def resume_node(self, node_id: int) -> None:
        self.running[node_id].resume()

    def kill_node(self, node_id: int) -> None:
        """``kill -9``: no controlled shutdown, no flush, no clean-shutdown marker."""
        self.running.pop(node_id).kill()

    def wait_for_brokers(self, brokers: list[int], timeout_s: float = START_TIMEOUT_S) -> None:
        """Until the cluster's metadata lists exactly ``brokers`` as alive."""
        wait_until(f"brokers {brokers} registered",
                   lambda: self.driver.call("cluster", timeout_s=30)["brokers"] == sorted(brokers), timeout_s)

    def close(self) -> None:
        try:
            if self._driver is not None:
                self._driver.close()
        finally:
            self._driver = None
            brokers = [proc for node, proc in self.running.items()
                       if self.nodes[node].is_broker and not self.nodes[node].is_controller]
            self.group.close(first=brokers)
            self.running.clear()

    def __enter__(self) -> Cluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- how a node is started -----------------------------------------------------------------
    def _node_command(self, spec: NodeSpec) -> list[str]:
        return [java(), *JVM, *self._logging(spec), "-cp", self.release.classpath(), "kafka.Kafka",
                str(spec.directory / "server.properties")]

    def _logging(self, spec: NodeSpec) -> list[str]:
        if self.release.logs_with_log4j2:
            config = spec.directory / "log4j2.properties"
            config.write_text(_log4j2(spec.directory))
            return [f"-Dlog4j2.configurationFile={config}", f"-Dkafka.logs.dir={spec.directory}"]
        config = spec.directory / "log4j.properties"
        config.write_text(_log4j1(spec.directory))
        return [f"-Dlog4j.configuration=file:{config}", f"-Dkafka.logs.dir={spec.directory}"]

    def _write_properties(self, spec: NodeSpec, properties: dict[str, str]) -> None:
        spec.directory.mkdir(parents=True, exist_ok=True)
        (spec.directory / "data").mkdir(exist_ok=True)
        lines = [f"{key}={value}" for key, value in properties.items()]
        (spec.directory / "server.properties").write_text("\n".join(lines) + "\n")

    def _broker_properties(self, overrides: dict[str, str]) -> dict[str, str]:
        replication = str(min(3, len(self.brokers)))
        return {**BROKER_DEFAULTS, "offsets.topic.replication.factor": replication,
                "transaction.state.log.replication.factor": replication,
                "transaction.state.log.min.isr": "1", **overrides}


class KraftCluster(Cluster):
    """KRaft: ``controllers`` voters and ``brokers`` brokers, or ``combined`` nodes that are both."""

    def __init__(self, release: Release, root: Path, *, controllers: int = 3, brokers: int = 3,
                 combined: bool = False, config: dict[str, str] | None = None) -> None:
        super().__init__(release, root)
        count = brokers if combined else controllers + brokers
        ports = free_ports(2 * count)
        for index in range(count):
            node_id = index + 1
            if combined:
                roles: tuple[str, ...] = ("broker", "controller")
            else:
                roles = ("controller",) if index < controllers else ("broker",)
            self.nodes[node_id] = NodeSpec(node_id, roles, root / f"node-{node_id}",
                                           ports[2 * index] if "broker" in roles else None,
                                           ports[2 * index + 1] if "controller" in roles else None)
        voters = ",".join(f"{n}@127.0.0.1:{s.controller_port}" for n, s in self.nodes.items() if s.is_controller)
        for spec in self.nodes.values():
            listeners = []
            if spec.is_broker:
                listeners.append(f"PLAINTEXT://127.0.0.1:{spec.port}")
            if spec.is_controller:
                listeners.append(f"CONTROLLER://127.0.0.1:{spec.controller_port}")
            properties = {
                "process.roles": ",".join(spec.roles),
                "node.id": str(spec.node_id),
                "controller.quorum.voters": voters,
                "listeners": ",".join(listeners),
                "controller.listener.names": "CONTROLLER",
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "log.dirs": str(spec.directory / "data"),
                "metadata.log.dir": str(spec.directory / "metadata"),
            }
            if spec.is_broker:
                properties["advertised.listeners"] = f"PLAINTEXT://127.0.0.1:{spec.port}"
                properties["inter.broker.listener.name"] = "PLAINTEXT"
                properties.update(self._broker_properties(config or {}))
            self._write_properties(spec, properties)
        self.cluster_id = self._tool("kafka.tools.StorageTool", "random-uuid").strip().splitlines()[-1]
        for spec in self.nodes.values():
            self._tool("kafka.tools.StorageTool", "format", "-t", self.cluster_id,
                       "-c", str(spec.directory / "server.properties"))

    def _tool(self, main: str, *args: str) -> str:
        done = subprocess.run([java(), "-Xmx256m", "-Dlog4j2.configurationFile=/dev/null",
                               "-Dlog4j.configuration=file:/dev/null", "-cp", self.release.classpath(),
                               main, *args], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{main} {' '.join(args)}: {done.stderr.strip()[-300:]}")
        return done.stdout


class ZookeeperCluster(Cluster):
    """ZooKeeper mode (Kafka 3.9 and older): one ZooKeeper server and ``brokers`` brokers."""

    def __init__(self, release: Release, root: Path, *, brokers: int = 3,
                 config: dict[str, str] | None = None) -> None:
        super().__init__(release, root)
        ports = free_ports(brokers + 1)
        self.zookeeper_port = ports[-1]
        self.zookeeper_dir = root / "zookeeper"
        for index in range(brokers):
            node_id = index + 1
            self.nodes[node_id] = NodeSpec(node_id, ("broker",), root / f"node-{node_id}", ports[index], None)
        for spec in self.nodes.values():
            self._write_properties(spec, {
                "broker.id": str(spec.node_id),
                "listeners": f"PLAINTEXT://127.0.0.1:{spec.port}",
                "advertised.listeners": f"PLAINTEXT://127.0.0.1:{spec.port}",
                "zookeeper.connect": f"127.0.0.1:{self.zookeeper_port}",
                "zookeeper.session.timeout.ms": "6000",
                "log.dirs": str(spec.directory / "data"),
                **self._broker_properties(config or {}),
            })
        self.zookeeper: Process | None = None

    def _before_nodes(self) -> None:
        self.start_zookeeper()

    def start_zookeeper(self) -> Process:
        self.zookeeper_dir.mkdir(parents=True, exist_ok=True)
        config = self.zookeeper_dir / "zoo.cfg"
        config.write_text(f"dataDir={self.zookeeper_dir / 'data'}\nclientPort={self.zookeeper_port}\n"
                          "clientPortAddress=127.0.0.1\nadmin.enableServer=false\ntickTime=2000\n"
                          "4lw.commands.whitelist=*\npreAllocSize=128\n")
        (self.zookeeper_dir / "log4j.properties").write_text(_log4j1(self.zookeeper_dir, zookeeper=True))
        self.zookeeper = self.group.start(
            "zookeeper", [java(), *JVM, f"-Dlog4j.configuration=file:{self.zookeeper_dir / 'log4j.properties'}",
                          "-Dzookeeper.admin.enableServer=false", "-cp", self.release.classpath(),
                          "org.apache.zookeeper.server.quorum.QuorumPeerMain", str(config)],
            self.zookeeper_dir / "stdout.log", cwd=self.zookeeper_dir)
        return self.zookeeper


INDEX_ENTRY_BYTES = {".index": 8, ".timeindex": 12}


def copy_evidence(cluster: Cluster, destination: Path) -> dict[str, int]:
    """What a responder copies off the machines: every node's log dirs, metadata log and logs,
    and ZooKeeper's data dir; the harness's own files (properties, stdout) stay behind.

    One change, so a recording stays a few MB: an index file's zero-filled preallocated tail (10 MiB
    for the metadata log, whatever ``log.index.size.max.bytes`` sets) is cut after its last entry,
    as Kafka's own ``trimToValidSize`` does when it closes a segment. Returns each cut file's
    original size by its path under ``destination``, for the recording to state."""
    trimmed: dict[str, int] = {}

    def copy(source: str, target: str) -> None:
        # a live broker renames its checkpoints' ``.tmp`` files over the real ones while the copy
        # walks the directory: a file listed and gone before it is read was not there to copy
        try:
            shutil.copy2(source, target)
        except FileNotFoundError:
            if Path(source).exists():
                raise
            return
        entry = INDEX_ENTRY_BYTES.get(Path(target).suffix)
        if entry:
            size = _trim_preallocated(Path(target), entry)
            if size is not None:
                trimmed[str(Path(target).relative_to(destination))] = size

    for node_id, spec in cluster.nodes.items():
        target = destination / f"node-{node_id}"
        for name in ("data", "metadata"):
            if (spec.directory / name).is_dir():
                shutil.copytree(spec.directory / name, target / name, copy_function=copy)
        for name in ("server.log", "state-change.log", "controller.log"):
            if (spec.directory / name).is_file():
                target.mkdir(parents=True, exist_ok=True)
                shutil.copy2(spec.directory / name, target / name)
    if isinstance(cluster, ZookeeperCluster) and (cluster.zookeeper_dir / "data").is_dir():
        shutil.copytree(cluster.zookeeper_dir / "data", destination / "zookeeper")
    return trimmed


def _trim_preallocated(path: Path, entry: int) -> int | None:
    """Cut the whole zero entries after an index's last non-zero byte; the original size, or None."""
    data = path.read_bytes()
    used = len(data.rstrip(b"\0"))
    keep = -(-used // entry) * entry
    if keep >= len(data):
        return None
    with path.open("r+b") as handle:
        handle.truncate(keep)
    return len(data)


def _log4j2(directory: Path) -> str:
    """Kafka 4's logging as its distribution's log4j2.yaml lays it out, in the node's directory."""
    lines = ["status = warn", "name = kreplica-harness"]
    for name, file in (("server", "server.log"), ("stateChange", "state-change.log"),
                       ("controller", "controller.log")):
        lines += [f"appender.{name}.type = File", f"appender.{name}.name = {name}",
                  f"appender.{name}.fileName = {directory / file}",
                  f"appender.{name}.layout.type = PatternLayout",
                  f"appender.{name}.layout.pattern = [%d] %p %m (%c)%n"]
    lines += ["rootLogger.level = INFO", "rootLogger.appenderRef.server.ref = server",
              "logger.stateChange.name = state.change.logger", "logger.stateChange.level = TRACE",
              "logger.stateChange.additivity = false", "logger.stateChange.appenderRef.a.ref = stateChange",
              "logger.controller.name = kafka.controller", "logger.controller.level = TRACE",
              "logger.controller.additivity = false", "logger.controller.appenderRef.a.ref = controller",
              "logger.quorum.name = org.apache.kafka.controller", "logger.quorum.level = INFO",
              "logger.quorum.appenderRef.a.ref = controller"]
    return "\n".join(lines) + "\n"


def _log4j1(directory: Path, *, zookeeper: bool = False) -> str:
    """Kafka 2.x and 3.x (and ZooKeeper) logging, as their distributions' log4j.properties."""
    def appender(name: str, file: str) -> list[str]:
        return [f"log4j.appender.{name}=org.apache.log4j.FileAppender",
                f"log4j.appender.{name}.File={directory / file}",
                f"log4j.appender.{name}.layout=org.apache.log4j.PatternLayout",
                f"log4j.appender.{name}.layout.ConversionPattern=[%d] %p %m (%c)%n"]
    if zookeeper:
        return "\n".join(["log4j.rootLogger=INFO, server", *appender("server", "zookeeper.log")]) + "\n"
    lines = ["log4j.rootLogger=INFO, server", *appender("server", "server.log"),
             *appender("stateChange", "state-change.log"), *appender("controller", "controller.log"),
             "log4j.logger.state.change.logger=TRACE, stateChange", "log4j.additivity.state.change.logger=false",
             "log4j.logger.kafka.controller=TRACE, controller", "log4j.additivity.kafka.controller=false",
             "log4j.logger.org.apache.kafka.controller=INFO, controller"]
    return "\n".join(lines) + "\n"
