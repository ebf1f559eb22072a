"""Scripted incidents on a real cluster, each recorded with Kafka's own account of it.

A scenario takes a started cluster and a recording, causes its incident step by step (every
step in the script's log) and records the points a responder's evidence would come from. The
partition's leader is never the controller (a ZooKeeper controller broker, or a KRaft
controller in combined mode), so killing the leader is one incident, not two.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.realkafka.cluster import Cluster, KraftCluster, ZookeeperCluster
from tests.realkafka.driver import DriverError
from tests.realkafka.jars import Release
from tests.realkafka.processes import Process, wait_until
from tests.realkafka.recording import Recording

TOPIC = "orders"
ELECTION_TIMEOUT_S = 90.0
REJOIN_TIMEOUT_S = 180.0
# shorter than replica.lag.time.max.ms (the leader would shrink the ISR) and than KRaft's
# broker.session.timeout.ms (the controller would fence the paused followers)
PAUSE_S = 2.0


@dataclass(frozen=True)
class Scenario:
    """A named incident: what cluster it needs and the script that causes it."""

    name: str
    summary: str
    script: Callable[[Cluster, Recording], None]
    kraft_controllers: int = 3
    brokers: int = 3
    #: broker configs the incident needs besides the harness's (``cluster.BROKER_DEFAULTS``)
    config: tuple[tuple[str, str], ...] = ()


def small_segments(release: Release) -> dict[str, str]:
    """Topic configs that roll a segment every 16 KiB: ``segment.bytes`` until 4.0 raised its
    minimum to 1 MiB, then the ``internal.segment.bytes`` Kafka keeps for its own tests."""
    name = "internal.segment.bytes" if release.major >= 4 else "segment.bytes"
    return {name: "16384"}


def partition_state(cluster: Cluster, partition: int = 0) -> dict:
    rows = cluster.driver.call("describe", topics=[TOPIC], offsets=False)
    return next(row for row in rows if row["partition"] == partition)


def create_topic(cluster: Cluster, recording: Recording, replicas: list[int], topic: str = TOPIC,
                 **configs: str) -> None:
    configs = {**small_segments(cluster.release), **configs}
    cluster.driver.call("create_topic", topic=topic, assignment={"0": replicas}, configs=configs)
    recording.topics.append(topic)
    wait_until(f"{topic}-0 has a leader", lambda: partition_offsets(cluster, topic)["leader"] == replicas[0], 60)
    recording.log("created topic", topic=topic, replicas=replicas, configs=configs)


def replicas_away_from_controller(cluster: Cluster) -> list[int]:
    """Three brokers, the first (the preferred leader) not the active controller."""
    controller = cluster.driver.call("cluster")["controller"]
    brokers = cluster.brokers
    return sorted(brokers, key=lambda b: (b == controller, b))[:3]


def produce(cluster: Cluster, recording: Recording, count: int, prefix: str, acks: str = "all",
            topic: str = TOPIC, **keyed: object) -> dict:
    """``count`` records, every acknowledgement awaited; the script's log says which offsets.
    ``keyed``: the driver's ``keys`` (cycle that many keys) and ``tombstone`` (null values)."""
    acked = cluster.driver.call("produce", topic=topic, count=count, acks=acks, prefix=prefix, **keyed)
    recording.log("produced", topic=topic, acks=acks, records=count, **keyed, acked=_ranges(acked),
                  failures=acked["failures"])
    return acked


def rejoin(cluster: Cluster, recording: Recording, broker: int, point: str = "after-rejoin") -> None:
    """Restart ``broker``, wait until it is back in the ISR of orders-0, record ``point``."""
    cluster.start_node(broker)
    recording.log("restarted", broker=broker)
    wait_until(f"broker {broker} back in the ISR of orders-0",
               lambda: broker in partition_state(cluster)["isr"], REJOIN_TIMEOUT_S)
    recording.log("rejoined", broker=broker, isr=partition_state(cluster)["isr"])
    recording.point(point)


def await_leader(cluster: Cluster, recording: Recording, acceptable, what: str, **details) -> dict:
    """Until orders-0's leader is one ``acceptable(leader)`` admits; logged as ``elected``."""
    state = wait_until(what, lambda: (s := partition_state(cluster)) and acceptable(s["leader"]) and s,
                       ELECTION_TIMEOUT_S)
    recording.log("elected", leader=state["leader"], isr=state["isr"], **details)
    return state


def leader_killed_under_acks1(cluster: Cluster, recording: Recording) -> None:
    """kill -9 of the leader while an acks=1 producer writes and both followers are paused (as in
    a long GC pause: still in the ISR, fetching nothing); a new leader from the ISR; the old leader
    restarts, recovers its log and truncates the acknowledged records the new leader never had."""
    replicas = replicas_away_from_controller(cluster)
    create_topic(cluster, recording, replicas, **{"min.insync.replicas": "1",
                                                 "unclean.leader.election.enable": "false"})
    produce(cluster, recording, 400, "committed")
    cluster.driver.call("produce_start", topic=TOPIC, acks="1", prefix="acks1", interval_ms=10, name="acks1")
    recording.log("producer started", acks="1", name="acks1")
    time.sleep(1)
    recording.point("before-incident")
    leader, followers = replicas[0], replicas[1:]
    for follower in followers:
        cluster.pause_node(follower)
    recording.log("paused", brokers=followers, signal="SIGSTOP")
    time.sleep(PAUSE_S)
    cluster.kill_node(leader)
    recording.log("killed", broker=leader, signal="SIGKILL", was="leader of orders-0")
    for follower in followers:
        cluster.resume_node(follower)
    recording.log("resumed", brokers=followers, signal="SIGCONT")
    await_leader(cluster, recording, lambda b: b not in (-1, leader), "a new leader for orders-0")
    time.sleep(1)
    acked = cluster.driver.call("produce_stop", name="acks1")
    recording.log("producer stopped", acks="1", acked=_ranges(acked), failures=acked["failures"])
    recording.keep("acks1-acked.json", acked)
    recording.point("after-election")
    rejoin(cluster, recording, leader)


def clean_failover(cluster: Cluster, recording: Recording) -> None:
    """Controlled shutdown of the leader: leadership moves first, nothing is lost, the broker
    restarts from its clean-shutdown marker and rejoins without truncating."""
    replicas = replicas_away_from_controller(cluster)
    create_topic(cluster, recording, replicas, **{"min.insync.replicas": "2"})
    produce(cluster, recording, 600, "committed")
    recording.point("before-shutdown")
    old = partition_state(cluster)["leader"]
    code = cluster.stop_node(old)
    recording.log("stopped", broker=old, signal="SIGTERM", exit=code, was="leader of orders-0")
    await_leader(cluster, recording, lambda b: b not in (-1, old), "a new leader for orders-0")
    produce(cluster, recording, 200, "after")
    recording.point("after-shutdown")
    rejoin(cluster, recording, old)


def isr_to_the_leader(cluster: Cluster, recording: Recording, replicas: list[int]) -> tuple[int, list[int]]:
    """Both followers killed, until the ISR of orders-0 is its leader alone, which then takes 200
    acks=all writes only it has; the leader and the followers."""
    leader, followers = replicas[0], replicas[1:]
    for follower in followers:
        cluster.kill_node(follower)
    recording.log("killed", brokers=followers, signal="SIGKILL", was="followers of orders-0")
    wait_until("the ISR of orders-0 shrunk to its leader",
               lambda: partition_state(cluster)["isr"] == [leader], ELECTION_TIMEOUT_S)
    recording.log("isr shrunk", isr=[leader])
    recording.keep("leader-only-acked.json", produce(cluster, recording, 200, "leader-only"))
    return leader, followers


def unclean_election_and_rejoin(cluster: Cluster, recording: Recording, leader: int, followers: list[int]) -> None:
    """The leader (the whole ISR) killed and the followers restarted: orders-0 offline (point
    ``offline``) until an Admin unclean election makes a follower leader, which takes 100 writes
    (point ``after-unclean``); then the old leader rejoins and truncates."""
    cluster.kill_node(leader)
    recording.log("killed", broker=leader, signal="SIGKILL", was="leader of orders-0, the whole ISR")
    for follower in followers:
        cluster.start_node(follower)
    recording.log("restarted", brokers=followers)
    cluster.wait_for_brokers(followers)
    wait_until("orders-0 offline", lambda: partition_state(cluster)["leader"] == -1, ELECTION_TIMEOUT_S)
    recording.log("offline", partition="orders-0")
    recording.point("offline")
    # Admin sends the election to the controller it knows: after a ZooKeeper controller moved,
    # the first answer may be NotControllerException until its metadata catches up
    result = wait_until("an unclean election accepted",
                        lambda: (r := cluster.driver.call("elect", type="unclean", partitions=[[TOPIC, 0]]))
                        and r[f"{TOPIC}-0"] is None and r, ELECTION_TIMEOUT_S, every_s=2)
    recording.log("elect", type="unclean", result=result)
    await_leader(cluster, recording, lambda b: b in followers, "an unclean leader for orders-0",
                 unclean=True)
    produce(cluster, recording, 100, "after-unclean")
    recording.point("after-unclean")
    rejoin(cluster, recording, leader)


def unclean_election(cluster: Cluster, recording: Recording) -> None:
    """Both followers killed, the ISR shrinks to the leader, which goes on taking writes; the
    leader killed, the followers restarted: the partition is offline until an unclean election
    (Admin electLeaders UNCLEAN) makes a stale follower leader; the old leader rejoins and
    truncates records that were committed."""
    replicas = replicas_away_from_controller(cluster)
    create_topic(cluster, recording, replicas, **{"min.insync.replicas": "1",
                                                 "unclean.leader.election.enable": "false"})
    produce(cluster, recording, 300, "all-three")
    leader, followers = isr_to_the_leader(cluster, recording, replicas)
    recording.point("before-incident")
    unclean_election_and_rejoin(cluster, recording, leader, followers)


#: the topic a streams group's application writes its counts to
STREAMS_OUTPUT = "orders-counts"


def consumer_groups(cluster: Cluster, recording: Recording) -> None:
    """Committed offsets as Kafka's clients write them: a classic group's commitSync with the
    leader epoch of the record it read, a KIP-848 consumer group's and a KIP-932 share group's
    acknowledgements (4.x), a KIP-1071 streams group's application (4.1+: recorded running, then
    after it left the group), and an Admin alterConsumerGroupOffsets commit without a leader
    epoch."""
    replicas = replicas_away_from_controller(cluster)
    create_topic(cluster, recording, replicas, **{"min.insync.replicas": "1"})
    produce(cluster, recording, 300, "records")
    read = cluster.driver.call("consume", group="classic", topic=TOPIC, count=120)
    recording.log("consumed", group="classic", protocol="classic", **read)
    if cluster.release.major >= 4:
        read = cluster.driver.call("consume", group="consumer-protocol", topic=TOPIC, count=200,
                                   props={"group.protocol": "consumer"})
        recording.log("consumed", group="consumer-protocol", protocol="consumer", **read)
        # a share group starts at the log end unless told otherwise (share.auto.offset.reset, a
        # group config): from the start, so that it reads and acknowledges records already written
        cluster.driver.call("alter_config", type="group", name="share", configs={"share.auto.offset.reset": "earliest"})
        read = cluster.driver.call("share_consume", group="share", topic=TOPIC, count=100)
        recording.log("consumed", group="share", protocol="share", **read)
    streams = cluster.release.minor >= (4, 1)
    if streams:
        # a KIP-1071 streams group: a Kafka Streams application counting by key, running while
        # the point is recorded (its members, tasks and topology in Admin's answers)
        create_topic(cluster, recording, replicas, topic=STREAMS_OUTPUT, **{"min.insync.replicas": "1"})
        running = cluster.driver.call("streams_start", group="streams", topic=TOPIC, output=STREAMS_OUTPUT)
        recording.log("streams application running", group="streams", protocol="streams", state=running["state"],
                      committed=running["offsets"])
    cluster.driver.call("alter_offsets", group="admin-set", topic=TOPIC, partition=0, offset=42)
    recording.log("altered offsets", group="admin-set", partition=f"{TOPIC}-0", offset=42)
    recording.point("committed")
    if streams:
        # closed with leaveGroup: the member's tombstones, an empty group with its offsets
        state = cluster.driver.call("streams_stop", group="streams")
        wait_until("the streams group has no member",
                   lambda: not cluster.driver.call("streams_groups")["streams"]["members"], 60)
        recording.log("streams application closed", group="streams", state=state)
        recording.point("streams-left")


# long enough that the point before it is recorded whole (evidence and Admin's answers) first
TIMED_OUT_MS = 60_000


def transactions(cluster: Cluster, recording: Recording) -> None:
    """Four transactional producers: one commits, one aborts, and two are left inside their
    transactions as clients that died (they send nothing more): one with a ten-minute timeout,
    still open at the end, and one with a one-minute timeout, which the coordinator aborts
    (``abortTimedOutTransactions``, every transaction.abort.timed.out.transaction.cleanup
    .interval.ms) between the points ``open`` and ``timed-out``."""
    replicas = replicas_away_from_controller(cluster)
    create_topic(cluster, recording, replicas, **{"min.insync.replicas": "1"})
    for transactional_id, count, end, timeout_ms in (("committer", 50, "commit", None), ("aborter", 30, "abort", None),
                                                     ("abandoned", 20, "open", None),
                                                     ("timed-out", 10, "open", TIMED_OUT_MS)):
        extra = {"timeout_ms": str(timeout_ms)} if timeout_ms else {}
        acked = cluster.driver.call("txn", transactional_id=transactional_id, topic=TOPIC, count=count, end=end,
                                    **extra)
        recording.log("transaction", transactional_id=transactional_id, records=count, end=end,
                      acked=_ranges(acked), **extra)
    _transactions_point(cluster, recording, "open")
    wait_until("the coordinator aborted the timed-out transaction",
               lambda: cluster.driver.call("transactions")["transactions"].get("timed-out", {}).get("state")
               in ("CompleteAbort", "COMPLETE_ABORT"), ELECTION_TIMEOUT_S, every_s=2)
    recording.log("timed out", transactional_id="timed-out", timeout_ms=TIMED_OUT_MS)
    _transactions_point(cluster, recording, "timed-out")


def _transactions_point(cluster: Cluster, recording: Recording, point: str) -> None:
    """The point, with describeTransactions / describeProducers and each broker's
    kafka-transactions find-hanging kept beside it."""
    answer = cluster.driver.call("transactions", partitions=[[TOPIC, 0]])
    recording.point(point)
    recording.keep(f"{point}/transactions.json", answer)
    for broker in cluster.brokers:
        recording.tool(point, f"find-hanging-broker-{broker}", "org.apache.kafka.tools.TransactionsCommand",
                       "--bootstrap-server", cluster.bootstrap, "find-hanging", "--broker-id", str(broker))


def controller_failover(cluster: Cluster, recording: Recording) -> None:
    """The active controller killed while a producer writes: KRaft's quorum leader (a controller
    node), or ZooKeeper mode's controller broker; a new controller takes over, the old one
    restarts and rejoins."""
    replicas = replicas_away_from_controller(cluster)
    create_topic(cluster, recording, replicas, **{"min.insync.replicas": "1"})
    produce(cluster, recording, 200, "before")
    recording.point("before-failover")
    controller = _active_controller(cluster)
    cluster.driver.call("produce_start", topic=TOPIC, acks="all", prefix="during", interval_ms=10, name="during")
    cluster.kill_node(controller)
    recording.log("killed", node=controller, signal="SIGKILL", was="the active controller")
    new = wait_until("a new active controller",
                     lambda: (c := _active_controller(cluster)) not in (None, controller) and c, ELECTION_TIMEOUT_S)
    recording.log("controller elected", node=new)
    time.sleep(1)
    acked = cluster.driver.call("produce_stop", name="during")
    recording.log("producer stopped", acks="all", acked=_ranges(acked), failures=acked["failures"])
    recording.point("after-failover")
    cluster.start_node(controller)
    recording.log("restarted", node=controller)
    if cluster.nodes[controller].is_broker:
        wait_until(f"broker {controller} back in the ISR of orders-0",
                   lambda: controller in partition_state(cluster)["isr"], REJOIN_TIMEOUT_S)
    else:
        wait_until(f"controller {controller} caught up", lambda: _voter_caught_up(cluster, controller), REJOIN_TIMEOUT_S)
    recording.log("rejoined", node=controller)
    recording.point("after-rejoin")


REASSIGN_TOOL = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand"
REASSIGNED_RECORDS = 1000
# bytes/s, kafka-reassign-partitions --throttle: with replica.fetch.max.bytes at 2 KiB (the
# scenario's config) the new replica's ~40 KB take half a minute to copy, long enough to record
# the reassignment in flight
THROTTLE_BYTES_S = 1000


def reassignment_throttled(cluster: Cluster, recording: Recording) -> None:
    """orders-0's first replica (its leader) replaced by a fourth broker with Kafka's own
    kafka-reassign-partitions --throttle: in flight while the new replica copies the log at the
    throttled rate, then complete (the controller moves leadership to the new first replica;
    --verify clears the throttles); the replaced broker is then decommissioned: stopped and, in
    KRaft, unregistered (Admin unregisterBroker)."""
    replicas = replicas_away_from_controller(cluster)
    spare = next(b for b in cluster.brokers if b not in replicas)
    create_topic(cluster, recording, replicas, **{"min.insync.replicas": "1"})
    produce(cluster, recording, REASSIGNED_RECORDS, "before")
    recording.point("before-reassignment")
    target = [spare, *replicas[1:]]
    recording.keep("reassignment.json", {"version": 1, "partitions": [
        {"topic": TOPIC, "partition": 0, "replicas": target}]})

    def reassign(point: str, name: str, *args: str) -> str:
        return recording.tool(point, name, REASSIGN_TOOL, "--bootstrap-server", cluster.bootstrap,
                              "--reassignment-json-file", str(recording.root / "reassignment.json"), *args)

    reassign("in-flight", "reassign-execute", "--execute", "--throttle", str(THROTTLE_BYTES_S))
    recording.log("reassignment started", partition=f"{TOPIC}-0", replicas=replicas, target=target,
                  throttle_bytes_s=THROTTLE_BYTES_S)
    reassign("in-flight", "reassign-verify", "--verify")
    recording.point("in-flight")
    if f"{TOPIC}-0" not in recording.account_at("in-flight").get("reassignments", {}):
        raise RuntimeError("the reassignment completed before it could be recorded in flight")
    wait_until("the reassignment of orders-0 complete",
               lambda: not cluster.driver.call("reassignments") and partition_state(cluster)["replicas"] == target,
               REJOIN_TIMEOUT_S)
    recording.log("reassignment completed", partition=f"{TOPIC}-0", replicas=target)
    reassign("completed", "reassign-verify", "--verify")
    await_leader(cluster, recording, lambda b: b == spare, "the new first replica leads orders-0")
    recording.point("completed")
    removed = replicas[0]
    code = cluster.stop_node(removed)
    recording.log("stopped", broker=removed, signal="SIGTERM", exit=code, was="the replica the reassignment removed")
    remaining = [b for b in cluster.brokers if b != removed]
    if isinstance(cluster, KraftCluster):
        wait_until(f"broker {removed} unregistered",
                   lambda: _unregistered(cluster, removed), ELECTION_TIMEOUT_S, every_s=2)
        recording.log("unregistered", broker=removed)
    cluster.wait_for_brokers(remaining)
    recording.point("decommissioned")


def _unregistered(cluster: Cluster, broker: int) -> bool:
    """Admin unregisterBroker; refused while the broker's session has not yet ended."""
    try:
        cluster.driver.call("unregister_broker", broker=broker)
    except DriverError:
        return False
    return True


DELETED_BEFORE = 500
RETENTION_MS = 4000


def log_start_moved(cluster: Cluster, recording: Recording) -> None:
    """The log start moved the three ways Kafka moves it: Admin deleteRecords; time retention
    deleting whole segments; and the log cleaner compacting a second topic (``ledger``) with
    keys, tombstones, an aborted and a committed transaction. Each point waits until every
    replica has checkpointed what it did, so the evidence says what the brokers know."""
    replicas = replicas_away_from_controller(cluster)
    create_topic(cluster, recording, replicas, **{"min.insync.replicas": "1"})
    produce(cluster, recording, 1200, "records")
    low = cluster.driver.call("delete_records", topic=TOPIC, partition=0, offset=DELETED_BEFORE)
    recording.log("deleted records", partition=f"{TOPIC}-0", before_offset=DELETED_BEFORE, low_watermark=low)
    _await_log_start(cluster, TOPIC, replicas, lambda start: start == DELETED_BEFORE)
    recording.point("after-delete-records")
    cluster.driver.call("alter_config", type="topic", name=TOPIC, configs={"retention.ms": str(RETENTION_MS)})
    recording.log("altered config", topic=TOPIC, configs={"retention.ms": str(RETENTION_MS)})
    _await_log_start(cluster, TOPIC, replicas, lambda start: start > DELETED_BEFORE)
    recording.log("retention deleted segments", partition=f"{TOPIC}-0",
                  log_start=partition_offsets(cluster, TOPIC)["earliest"])
    recording.point("after-retention")
    create_topic(cluster, recording, replicas, topic=COMPACTED, **{
        "cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.01", "delete.retention.ms": "0",
        "min.insync.replicas": "1"})
    produce(cluster, recording, 1500, "k", topic=COMPACTED, keys=40)
    produce(cluster, recording, 10, "k", topic=COMPACTED, keys=10, tombstone=True)
    for transactional_id, count, end in (("ledger-aborter", 30, "abort"), ("ledger-committer", 20, "commit")):
        acked = cluster.driver.call("txn", transactional_id=transactional_id, topic=COMPACTED, count=count,
                                    end=end, prefix="k", keys=40)
        recording.log("transaction", transactional_id=transactional_id, records=count, end=end, acked=_ranges(acked))
    produce(cluster, recording, 1500, "k", topic=COMPACTED, keys=40)
    dirty_end = partition_offsets(cluster, COMPACTED)["latest"] - 1500
    wait_until(f"{COMPACTED}-0 cleaned past offset {dirty_end} on every replica",
               lambda: all(_cleaned_to(cluster, b, COMPACTED) >= dirty_end for b in replicas), REJOIN_TIMEOUT_S)
    recording.log("compacted", partition=f"{COMPACTED}-0",
                  cleaned_to={b: _cleaned_to(cluster, b, COMPACTED) for b in replicas})
    recording.point("compacted")


COMPACTED = "ledger"


def partition_offsets(cluster: Cluster, topic: str, partition: int = 0) -> dict:
    rows = cluster.driver.call("describe", topics=[topic])
    return next(row for row in rows if row["partition"] == partition)


def _checkpointed(cluster: Cluster, broker: int, name: str, topic: str, partition: int = 0) -> int | None:
    """The offset a broker's checkpoint file ``name`` holds for the partition (Kafka's
    OffsetCheckpointFile: version, count, then ``topic partition offset`` lines), or None."""
    path = cluster.nodes[broker].directory / "data" / name
    try:
        lines = path.read_text().splitlines()[2:]
    except OSError:
        return None
    for line in lines:
        fields = line.split()
        if len(fields) == 3 and fields[0] == topic and int(fields[1]) == partition:
            return int(fields[2])
    return None


def _cleaned_to(cluster: Cluster, broker: int, topic: str) -> int:
    return _checkpointed(cluster, broker, "cleaner-offset-checkpoint", topic) or -1


def _disk_log_start(cluster: Cluster, broker: int, topic: str) -> int | None:
    """The log start a restart of ``broker`` would load for ``topic``-0: its first segment's base
    offset, or the log-start-offset checkpoint where that is higher (the checkpoint holds a
    partition only while its log start is past its first segment: LogManager
    ``checkpointLogStartOffsetsInDir``)."""
    bases = [int(f.name.split(".")[0]) for f in (cluster.nodes[broker].directory / "data" / f"{topic}-0").glob("*.log")]
    if not bases:
        return None
    return max(min(bases), _checkpointed(cluster, broker, "log-start-offset-checkpoint", topic) or 0)


def _await_log_start(cluster: Cluster, topic: str, replicas: list[int], reached) -> None:
    """Until listOffsets' earliest passes ``reached`` and every replica's files say it (the
    checkpoint is written every log.flush.start.offset.checkpoint.interval.ms)."""
    start = wait_until(f"the log start of {topic}-0 moved",
                       lambda: (e := partition_offsets(cluster, topic)["earliest"]) is not None and reached(e) and e,
                       ELECTION_TIMEOUT_S)
    wait_until(f"every replica of {topic}-0 has log start {start} on disk",
               lambda: all(_disk_log_start(cluster, b, topic) == start for b in replicas), ELECTION_TIMEOUT_S)


def elr_min_isr_changed(cluster: Cluster, recording: Recording) -> None:
    """KIP-966 on a 4.x cluster (eligible leader replicas on): min.insync.replicas 2, both
    followers killed one after the other, so the second leaves an ISR below it and becomes an
    eligible leader replica; the leader killed (the partition offline, its ISR empty); then
    min.insync.replicas changed, which makes the controller clear the topic's ELR
    (ClearElrRecord); the follower from the ELR restarted, no longer eligible. A fourth broker,
    no replica of orders-0, keeps the cluster answering Admin throughout."""
    replicas = replicas_away_from_controller(cluster)
    create_topic(cluster, recording, replicas, **{"min.insync.replicas": "2",
                                                 "unclean.leader.election.enable": "false"})
    produce(cluster, recording, 300, "all-three")
    leader, first, second = replicas
    cluster.kill_node(first)
    recording.log("killed", broker=first, signal="SIGKILL", was="a follower of orders-0")
    wait_until("the ISR of orders-0 without the first follower",
               lambda: first not in partition_state(cluster)["isr"], ELECTION_TIMEOUT_S)
    cluster.kill_node(second)
    recording.log("killed", broker=second, signal="SIGKILL", was="the other follower of orders-0")
    wait_until("the second follower an eligible leader replica of orders-0",
               lambda: second in (partition_state(cluster).get("elr") or ()), ELECTION_TIMEOUT_S)
    recording.log("elr", isr=partition_state(cluster)["isr"], elr=partition_state(cluster).get("elr"))
    recording.point("elr-formed")
    cluster.kill_node(leader)
    recording.log("killed", broker=leader, signal="SIGKILL", was="leader of orders-0, the whole ISR")
    wait_until("orders-0 offline", lambda: partition_state(cluster)["leader"] == -1, ELECTION_TIMEOUT_S)
    state = partition_state(cluster)
    recording.log("offline", partition="orders-0", isr=state["isr"], elr=state.get("elr"),
                  last_known_elr=state.get("last_known_elr"))
    recording.point("offline")
    cluster.driver.call("alter_config", type="topic", name=TOPIC, configs={"min.insync.replicas": "1"})
    recording.log("altered config", topic=TOPIC, configs={"min.insync.replicas": "1"})
    wait_until("the ELR of orders-0 cleared", lambda: not partition_state(cluster).get("elr"), ELECTION_TIMEOUT_S)
    recording.point("min-isr-changed")
    cluster.start_node(second)
    recording.log("restarted", broker=second)
    cluster.wait_for_brokers([b for b in cluster.brokers if b in cluster.running])
    time.sleep(5)   # a controller that would elect it does so within its next write
    state = partition_state(cluster)
    recording.log("after restart", broker=second, leader=state["leader"], isr=state["isr"], elr=state.get("elr"))
    recording.point("follower-back")


def _active_controller(cluster: Cluster) -> int | None:
    """KRaft: the quorum's leader (describeMetadataQuorum); ZooKeeper mode: describeCluster's controller."""
    if isinstance(cluster, KraftCluster):
        return cluster.driver.call("quorum", timeout_s=30)["leader"]
    return cluster.driver.call("cluster", timeout_s=30)["controller"]


def _voter_caught_up(cluster: Cluster, node: int) -> bool:
    quorum = cluster.driver.call("quorum", timeout_s=30)
    ends = {v["id"]: v["log_end_offset"] for v in quorum["voters"]}
    return ends.get(node, -1) >= quorum["high_watermark"] > 0


#: consumer-after-unclean's groups and the offsets they commit: within the records all three
#: replicas have, inside the leader's own records below the new leader's end after its 100
#: writes, and above that end
CONSUMER_GROUPS = {"all-three": 200, "below-new-end": 350, "above-new-end": 450}


def consumer_after_unclean(cluster: Cluster, recording: Recording) -> None:
    """unclean-election with consumer groups: each commits (commitSync, the leader epoch of the
    record it read) before the leader dies, two of them inside the 200 records only the leader had;
    after the unclean election, the new leader's 100 records and the old leader's rejoin (it led
    the __consumer_offsets partitions alone: their commits come back with it), a consumer of each
    client generation resumes each group under each auto.offset.reset (``probe.py``), its
    answers kept as ``probes.json``."""
    from tests.realkafka.probe import generations, probe_all

    replicas = replicas_away_from_controller(cluster)
    create_topic(cluster, recording, replicas, **{"min.insync.replicas": "1",
                                                 "unclean.leader.election.enable": "false"})
    produce(cluster, recording, 300, "all-three")
    # the first group creates __consumer_offsets while its three replicas are up
    read = cluster.driver.call("consume", group="all-three", topic=TOPIC, count=CONSUMER_GROUPS["all-three"])
    recording.log("consumed", group="all-three", protocol="classic", **read)
    leader, followers = isr_to_the_leader(cluster, recording, replicas)
    wait_until("the ISR of every __consumer_offsets partition shrunk to the leader",
               lambda: all(row["isr"] == [leader] for row in
                           cluster.driver.call("describe", topics=["__consumer_offsets"], offsets=False)),
               ELECTION_TIMEOUT_S)
    for group, count in CONSUMER_GROUPS.items():
        if group != "all-three":
            read = cluster.driver.call("consume", group=group, topic=TOPIC, count=count)
            recording.log("consumed", group=group, protocol="classic", **read)
    recording.point("before-incident")
    unclean_election_and_rejoin(cluster, recording, leader, followers)
    versions = generations(cluster.release)
    recording.log("probing", clients=versions, groups=list(CONSUMER_GROUPS))
    probes = probe_all(versions, cluster.bootstrap, list(CONSUMER_GROUPS), TOPIC)
    for answer in probes:
        recording.log("probed", **{k: v for k, v in answer.items() if k != "log"})
    recording.keep("probes.json", probes)
    # the probes commit nothing: the groups' offsets are still those committed before the incident
    recording.keep("groups-after-probes.json", cluster.driver.call("groups"))


SCENARIOS = {s.name: s for s in (
    Scenario("leader-killed-acks1", "kill -9 of the leader under an acks=1 producer while both "
             "followers are paused; the old leader rejoins and truncates", leader_killed_under_acks1),
    Scenario("clean-failover", "controlled shutdown of the leader, leadership moves, the broker "
             "rejoins", clean_failover),
    Scenario("unclean-election", "followers killed, the ISR shrinks to the leader, which takes more "
             "writes and is killed; an unclean election elects a stale follower; the old leader "
             "rejoins and truncates committed records", unclean_election),
    Scenario("consumer-groups", "a classic group, a KIP-848 consumer group, a share group (4.x), a "
             "streams group (4.1+) running and after it left, and an Admin offset commit without a "
             "leader epoch", consumer_groups),
    Scenario("transactions", "transactions committed, aborted, and two left open by producers that "
             "died, one until the coordinator aborts it at its timeout", transactions),
    Scenario("controller-failover", "the active controller killed while a producer writes; a new "
             "one takes over, the old one rejoins", controller_failover),
    Scenario("reassignment-throttled", "the leader's replica moved to a fourth broker by "
             "kafka-reassign-partitions --throttle, recorded in flight and complete; the removed broker "
             "then decommissioned", reassignment_throttled, brokers=4,
             config=(("replica.fetch.max.bytes", "2048"),)),
    Scenario("log-start", "the log start moved by DeleteRecords and by time retention; a compacted "
             "topic with tombstones and an aborted transaction cleaned", log_start_moved,
             config=(("log.retention.check.interval.ms", "1000"),
                     ("log.flush.start.offset.checkpoint.interval.ms", "1000"),
                     ("log.cleaner.backoff.ms", "1000"))),
    Scenario("elr-min-isr", "min.insync.replicas 2, both followers killed (the second an eligible "
             "leader replica), then the leader; min.insync.replicas changed, which clears the ELR; the "
             "follower restarted", elr_min_isr_changed, brokers=4),
    Scenario("consumer-after-unclean", "unclean-election with classic groups that committed before "
             "the leader died, two inside the records only it had; a consumer of each client "
             "generation (2.2, 2.5, the release's) resumes each group under each auto.offset.reset",
             consumer_after_unclean),
)}


def run(scenario: Scenario, release: Release, mode: str, workdir: Path, out: Path) -> list[Process]:
    """Start the cluster the scenario needs, run it, record it under ``out``; always stop it.
    Returns every process the cluster started (all ended by then)."""
    cluster: Cluster
    config = dict(scenario.config)
    if mode == "kraft":
        cluster = KraftCluster(release, workdir, controllers=scenario.kraft_controllers, brokers=scenario.brokers,
                               config=config)
    else:
        cluster = ZookeeperCluster(release, workdir, brokers=scenario.brokers, config=config)
    with cluster:
        cluster.start()
        recording = Recording(out, scenario.name, cluster)
        try:
            recording.log("cluster started", mode=mode, kafka_version=release.version,
                          brokers=cluster.brokers, controller=cluster.driver.call("cluster")["controller"])
            scenario.script(cluster, recording)
        finally:
            recording.close()
        started = list(cluster.group.processes)
    return started


def _ranges(acked: dict) -> dict[str, list[int]]:
    """Acknowledged offsets per partition as [first, last, count]: the log keeps them short."""
    return {p: [offsets[0], offsets[-1], len(offsets)] for p, offsets in acked["acked"].items() if offsets}
