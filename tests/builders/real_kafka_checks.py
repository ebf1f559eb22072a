"""The judgments of kreplica against what real Kafka did, one per decision, on one recording
(``tests/builders/real_kafka.py``): from the evidence copied before an event kreplica predicts;
the evidence after it, the brokers' own ``server.log`` and Admin's answers (``account.json``)
say what Kafka actually did. ``tests/interop/test_real_kafka.py`` runs them on the committed
corpus, ``tests/realkafka/test_harness.py`` on a recording made in the test.

Kafka's version is given to kreplica as the recording's, capped at the newest it emulates (4.0:
4.4's rules for these decisions are 4.0's)."""

from __future__ import annotations

import json
import re
from collections import Counter

from tests.builders.real_kafka import Recording, restarts
from tests.builders.usage import run

EMULATED = "4.0"


def kafka_version(recording: Recording) -> str:
    major, minor = map(int, recording.kafka_version.split(".")[:2])
    return EMULATED if (major, minor) > (4, 0) else f"{major}.{minor}"


def objects(*args: object) -> list[dict]:
    """``kreplica ARGS --format ndjson``'s objects; it must have completed (exit 0 or 1)."""
    result = run(*args, "--format", "ndjson")
    assert result.exit_code in (0, 1), (result.exit_code, result.stdout[-500:], result.stderr[-500:])
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def one(found: list[dict], kind: str) -> dict:
    matching = [o for o in found if o["type"] == kind]
    assert len(matching) == 1, [o["type"] for o in found]
    return matching[0]


def _truncation(recording: Recording, point: str, leader: int, follower: int) -> dict:
    return one(objects("truncate-plan", "--leader", recording.log_dir(point, leader),
                       "--follower", recording.log_dir(point, follower), "-p", "orders-0",
                       "--kafka-version", kafka_version(recording)), "truncation")


def _partition_of_dir(recording: Recording, point: str, broker: int) -> dict:
    found = objects("inspect-dir", recording.log_dir(point, broker), "--kafka-version", kafka_version(recording))
    return next(o for o in found if o["type"] == "partition" and o["name"] == "orders-0")


def truncation_after_a_kill(recording: Recording) -> None:
    """truncate-plan of the killed old leader against its successor, from the copies taken before
    it restarted, is the truncation its restart logged (ReplicaFetcherThread → UnifiedLog.truncateTo),
    and the new epoch starts there in the rejoined broker's own cache."""
    old = recording.step("killed")["broker"]
    new = recording.step("elected")["leader"]
    plan = _truncation(recording, "after-election", new, old)
    restart = restarts(recording.server_log("after-rejoin", old), "orders-0")[-1]
    assert restart.truncations, "the old leader never truncated orders-0 after its restart"
    assert plan["truncate_to"] == restart.truncations[0]
    assert plan["discarded"]["first_offset"] == restart.truncations[0]
    assert plan["discarded"]["last_offset"] == plan["follower_log_end_before"] - 1
    rejoined = one(objects("epochs", recording.log_dir("after-rejoin", old), "-p", "orders-0"), "epochs")
    assert rejoined["checkpoint"][-1] == [recording.partition_account("after-election")["leader_epoch"],
                                          plan["truncate_to"]]


def acks1_losses_are_discarded(recording: Recording) -> None:
    """An offset the acks=1 producer saw acknowledged twice was written by the old leader, lost
    when it truncated and reused by the new one: every such offset is in the discarded range, and
    nothing acks=all acknowledged (offsets 0-399) is."""
    old = recording.step("killed")["broker"]
    new = recording.step("elected")["leader"]
    plan = _truncation(recording, "after-election", new, old)
    acked = Counter(json.loads((recording.root / "acks1-acked.json").read_text())["acked"]["0"])
    twice = sorted(o for o, n in acked.items() if n == 2)
    assert twice, "the scenario lost no acknowledged record"
    first, last = plan["discarded"]["first_offset"], plan["discarded"]["last_offset"]
    assert first <= twice[0] and twice[-1] <= last
    assert first > 399 and plan["committed_loss"] is False


def recovery_after_a_kill(recording: Recording) -> None:
    """inspect-dir's restart verdict on the killed broker's directory, copied before it restarted,
    is that restart's LogLoader lines: the segments recovered and the log end loaded."""
    old = recording.step("killed")["broker"]
    partition = _partition_of_dir(recording, "after-election", old)
    restart = restarts(recording.server_log("after-rejoin", old), "orders-0")[-1]
    predicted = partition["restart"]
    assert predicted["shutdown"] == "unclean"
    bases = sorted(int(path.rsplit("/", 1)[1].split(".")[0]) for path in predicted["recovered_segments"])
    assert bases == sorted(restart.recovered_bases)
    assert predicted["log_end_offset"] == restart.loaded_log_end


def election_after_a_kill(recording: Recording) -> None:
    """plan-elect --fail of the leader, on the metadata copied before the incident, names the
    leader, ISR and epoch the controller gave the partition."""
    old = recording.step("killed")["broker"]
    election = one(objects("plan-elect", recording.metadata("before-incident"), "--fail", old,
                           "--kafka-version", kafka_version(recording)), "election")
    after = recording.partition_account("after-election")
    assert election["after"]["leader"] == after["leader"]
    assert sorted(election["after"]["isr"]) == sorted(after["isr"])
    assert election["after"]["leader_epoch"] == after["leader_epoch"]
    assert election["unclean"] is False


def election_after_a_controlled_shutdown(recording: Recording) -> None:
    old = recording.step("stopped")["broker"]
    election = one(objects("plan-elect", recording.metadata("before-shutdown"), "--controlled-shutdown", old,
                           "--kafka-version", kafka_version(recording)), "election")
    after = recording.partition_account("after-shutdown")
    assert election["after"]["leader"] == after["leader"]
    assert election["after"]["leader_epoch"] == after["leader_epoch"]


def rejoin_after_a_controlled_shutdown(recording: Recording) -> None:
    """A broker back from a controlled shutdown discards nothing (kreplica's plan) and Kafka
    truncated nothing (any truncation it logged is at or past the log end it loaded); its log
    had the clean-shutdown marker and needed no recovery."""
    old = recording.step("stopped")["broker"]
    new = recording.step("elected")["leader"]
    plan = _truncation(recording, "after-shutdown", new, old)
    restart = restarts(recording.server_log("after-rejoin", old), "orders-0")[-1]
    assert plan["discarded"]["records"] == 0
    assert all(offset >= restart.loaded_log_end for offset in restart.truncations)
    partition = _partition_of_dir(recording, "after-shutdown", old)
    assert partition["restart"]["shutdown"] == "clean"
    assert restart.recovered_bases == ()
    assert partition["log_end_offset"] == restart.loaded_log_end


def cluster_state_is_described(recording: Recording, point: str) -> None:
    """cluster-state on the metadata copied at the point is what Admin described then."""
    state = one(objects("cluster-state", recording.metadata(point)), "cluster_state")
    topic = next(t for t in state["topics"] if t["name"] == "orders")
    partition = next(p for p in topic["partitions"] if p["partition"] == 0)
    described = recording.partition_account(point)
    assert partition["leader"] == described["leader"]
    assert sorted(partition["isr"]) == sorted(described["isr"])
    assert partition["replicas"] == described["replicas"]
    if "elr" in described:   # KIP-966 (4.x clients and brokers): the eligible leader replicas
        assert (sorted(partition.get("elr", [])), sorted(partition.get("last_known_elr", []))) == (
            sorted(described["elr"]), sorted(described["last_known_elr"])), (point, partition)
    if "leader_epoch" in described:  # listOffsets' answer; an offline partition gives none
        assert partition["leader_epoch"] == described["leader_epoch"]
    else:
        assert described["leader"] == -1 and "offsets_error" in described
    alive = sorted(b["id"] for b in state["brokers"] if b["alive"])
    assert alive == recording.account(point)["cluster"]["brokers"]


def election_unclean(recording: Recording) -> None:
    """plan-elect --unclean-election (what the script's Admin electLeaders UNCLEAN asked), on the
    metadata copied while the partition was offline, names the stale follower the controller
    elected, at the epoch it gave (ZooKeeper: one write, no OfflineReplica step first), unclean."""
    election = one(objects("plan-elect", recording.metadata("offline"), "--unclean-election", "orders-0",
                           "--kafka-version", kafka_version(recording)), "election")
    after = recording.partition_account("after-unclean")
    assert election["before"]["leader"] == -1
    assert election["after"]["leader"] == after["leader"]
    assert election["after"]["leader_epoch"] == after["leader_epoch"]
    assert election["unclean"] is True


def losses_of_the_unclean_election(recording: Recording) -> None:
    """plan-elect --unclean-election with the brokers' log directories copied while the partition
    was offline ranks the candidates: the one the controller elected loses the old leader exactly
    the offsets the old leader truncated away when it rejoined (its server.log), all committed:
    a stale follower elected at a newer epoch (Partition.makeLeader) than the old leader's."""
    old = recording.step("isr shrunk")["isr"][0]
    new = next(s for s in recording.steps if s["step"] == "elected")["leader"]
    dirs = [x for b in recording.description["brokers"] for x in ("--log-dirs", f"{b}={recording.log_dir('offline', b)}")]
    found = objects("plan-elect", recording.metadata("offline"), "--unclean-election", "orders-0", *dirs,
                    "--kafka-version", kafka_version(recording))
    ranking = one(found, "election_candidates")
    chosen = next(c for c in ranking["candidates"] if c["broker"] == new)
    (loss,) = [x for x in chosen["losses"] if x["broker"] == old]
    restart = restarts(recording.server_log("after-rejoin", old), "orders-0")[-1]
    plan = _truncation(recording, "after-unclean", new, old)
    assert loss["ranges"][0][0] == restart.truncations[0] == plan["truncate_to"]
    assert loss["records"] == plan["discarded"]["records"] and loss["committed"] is True


def truncation_after_unclean(recording: Recording) -> None:
    """The old leader, back after an unclean election, truncates where kreplica says, and what it
    discards holds every record acks=all acknowledged while the ISR was the leader alone: a
    committed loss, which the plan reports."""
    old = recording.step("isr shrunk")["isr"][0]
    new = next(s for s in recording.steps if s["step"] == "elected")["leader"]
    plan = _truncation(recording, "after-unclean", new, old)
    restart = restarts(recording.server_log("after-rejoin", old), "orders-0")[-1]
    assert restart.truncations, "the old leader never truncated orders-0 after its restart"
    assert plan["truncate_to"] == restart.truncations[0]
    acked = json.loads((recording.root / "leader-only-acked.json").read_text())["acked"]["0"]
    assert plan["discarded"]["first_offset"] <= acked[0] and acked[-1] <= plan["discarded"]["last_offset"]
    assert plan["committed_loss"] is True


def groups_are_what_admin_lists(recording: Recording, point: str = "committed") -> None:
    """kreplica groups on every broker's log directory gives each group's committed offsets
    (offset and leader epoch) as Admin listConsumerGroupOffsets does, and its protocol as
    describeConsumerGroups' type (Classic, Consumer); a share group (4.x) with the state, group
    epoch and members describeShareGroups gives."""
    dirs = [recording.log_dir(point, b) for b in recording.description["brokers"]]
    found = objects("groups", *dirs, "--kafka-version", kafka_version(recording))
    ours = {(o["group"], f"{o['topic']}-{o['partition']}"): (o["offset"], o["leader_epoch"])
            for o in found if o["type"] == "group_offset"}
    listed = recording.account(point)["groups"]
    assert listed, "Admin listed no consumer group"
    # share groups (KIP-932, 4.x) are not consumer groups: Admin lists them apart (listGroups,
    # describeShareGroups); kreplica gives them with protocol share and their group epoch;
    # streams groups (KIP-1071, 4.1+) likewise (listGroups, describeStreamsGroups and
    # listStreamsGroupOffsets), judged whole by streams_groups_are_what_admin_describes
    shared = recording.account(point).get("share_groups") or {}
    streams = recording.account(point).get("streams_groups") or {}
    theirs = {(g, tp): (o["offset"], o["leader_epoch"])
              for g, row in (*listed.items(), *streams.items()) for tp, o in row["offsets"].items()}
    assert ours == theirs
    groups = {o["group"]: o for o in found if o["type"] == "group"}
    assert set(groups) == set(listed) | set(shared) | set(streams)
    for group, row in shared.items():
        assert (groups[group]["protocol"], groups[group]["generation"], groups[group]["state"].lower(),
                len(groups[group]["members"])) == ("share", row["group_epoch"], row["state"].lower(), row["members"])
    for group, row in listed.items():
        ours_ = groups[group]
        if ours_["protocol"] is None:
            # a group known only by its offset commits (Admin's, or a simple consumer's): no
            # membership record says its protocol, and kreplica does not guess one
            assert ours_["generation"] == 0 and not ours_["members"], ours_
        elif row["type"] is not None:  # describeConsumerGroups' type: 3.8+ clients
            assert ours_["protocol"] == row["type"].lower(), (group, row, ours_)
    assert not [o for o in found if o["type"] == "finding" and o["severity"] == "error"]


def streams_groups_are_what_admin_describes(recording: Recording) -> None:
    """At every point, kreplica groups gives each streams group (KIP-1071) as
    describeStreamsGroups does: its state, group, target assignment and topology epochs, its
    subtopologies with their source, changelog and repartition topics, each member's epoch,
    process, topology epoch and active, standby and warm-up tasks, and its committed offsets as
    listStreamsGroupOffsets gives them; a release without streams groups has none in either."""
    for point in recording.description["points"]:
        dirs = [recording.log_dir(point, b) for b in recording.description["brokers"]]
        found = objects("groups", *dirs, "--kafka-version", kafka_version(recording))
        theirs = recording.account(point).get("streams_groups") or {}
        ours = {o["group"]: o for o in found if o["type"] == "group" and o["protocol"] == "streams"}
        assert set(ours) == set(theirs), (point, sorted(ours), sorted(theirs))
        for group, row in theirs.items():
            g = ours[group]
            assert (g["state"], g["generation"], g["assignment_epoch"], g["topology"]["epoch"]) == \
                (row["state"], row["group_epoch"], row["target_assignment_epoch"], row["topology_epoch"]), (point, group)
            assert {s["subtopology_id"]: {"source_topics": s["source_topics"],
                                          "repartition_sink_topics": s["repartition_sink_topics"],
                                          "state_changelog_topics": s["state_changelog_topics"],
                                          "repartition_source_topics": s["repartition_source_topics"]}
                    for s in g["topology"]["subtopologies"]} == row["subtopologies"], (point, group)
            members = {m["member_id"]: {"member_epoch": m["member_epoch"], "client_id": m["client_id"],
                                        "process_id": m["process_id"], "topology_epoch": m["topology_epoch"],
                                        "assignment": {kind: {t["subtopology"]: t["partitions"] for t in tasks}
                                                       for kind, tasks in m["tasks"].items()}}
                       for m in g["members"]}
            assert members == {m: {k: v for k, v in d.items() if k != "target_assignment"}
                               for m, d in row["members"].items()}, (point, group)
            committed = {f"{o['topic']}-{o['partition']}": {"offset": o["offset"], "leader_epoch": o["leader_epoch"]}
                         for o in found if o["type"] == "group_offset" and o["group"] == group and not o["pending"]}
            assert committed == row["offsets"], (point, group)
    if tuple(map(int, recording.kafka_version.split(".")[:2])) < (4, 1):
        assert not any(recording.account(p).get("streams_groups") for p in recording.description["points"])


def transactions_are_what_admin_describes(recording: Recording, point: str = "open") -> None:
    """kreplica transactions on every broker's log directory: each transactional id's state,
    producer id and epoch and partitions as describeTransactions gives them; the transactions
    open on the data partition as describeProducers' currentTransactionStartOffset; and no
    hanging transaction, as kafka-transactions find-hanging found none on any broker."""
    dirs = [recording.log_dir(point, b) for b in recording.description["brokers"]]
    found = objects("transactions", *dirs)
    account = json.loads((recording.root / point / "transactions.json").read_text())
    ours = {o["transactional_id"]: (o["state"], o["producer_id"], o["producer_epoch"],
                                    sorted(f"{p['topic']}-{p['partition']}" for p in o["partitions"]))
            for o in found if o["type"] == "transaction"}
    theirs = {t: (d["state"], d["producer_id"], d["producer_epoch"], d["partitions"])
              for t, d in account["transactions"].items()}
    assert ours == theirs
    open_ours = {(o["producer_id"], o["producer_epoch"], o["first_offset"])
                 for o in found if o["type"] == "open_transaction" and o["topic"] == "orders"}
    open_theirs = {(p["producer_id"], p["producer_epoch"], p["current_transaction_start_offset"])
                   for p in account["producers"]["orders-0"] if p["current_transaction_start_offset"] is not None}
    assert open_theirs and open_ours == open_theirs
    assert not [o for o in found if o["type"] == "hanging_transaction"]
    for broker in recording.description["brokers"]:
        rows = (recording.root / point / f"find-hanging-broker-{broker}.txt").read_text().strip().splitlines()
        assert rows and rows[0].startswith("Topic") and len(rows) == 1, rows


def transactions_after_the_timeout(recording: Recording) -> None:
    """The transaction whose producer died with a one-minute timeout: open at ``open`` and, once
    the coordinator aborted it at its timeout, ended at ``timed-out``, as describeTransactions
    and describeProducers say there (transactions_are_what_admin_describes at that point); the
    other abandoned one is still open."""
    transactions_are_what_admin_describes(recording, "timed-out")
    found = {p: {o["transactional_id"]: o["state"] for o in objects("transactions", *[
        recording.log_dir(p, b) for b in recording.description["brokers"]]) if o["type"] == "transaction"}
        for p in ("open", "timed-out")}
    assert found["open"]["timed-out"].lower() == "ongoing"
    assert found["timed-out"]["timed-out"].lower() in ("completeabort", "complete_abort")
    assert found["timed-out"]["abandoned"].lower() == "ongoing"


def controller_is_the_one_kafka_reports(recording: Recording) -> None:
    """cluster-state's controller at each point is Kafka's: KRaft's quorum leader and its epoch
    (describeMetadataQuorum), ZooKeeper mode's controller broker (describeCluster); after the kill
    it is another node."""
    seen = []
    for point in recording.description["points"]:
        state = one(objects("cluster-state", recording.metadata(point)), "cluster_state")
        account = recording.account(point)
        if recording.mode == "kraft":
            assert (state["controller"]["broker_id"], state["controller"]["epoch"]) == (
                account["quorum"]["leader"], account["quorum"]["leader_epoch"]), (point, state["controller"])
        else:
            assert state["controller"]["broker_id"] == account["cluster"]["controller"], (point, state["controller"])
        seen.append(state["controller"]["broker_id"])
    assert seen[1] != seen[0] == recording.step("killed")["node"]


def _moving_broker(recording: Recording) -> int:
    step = recording.step("reassignment started")
    (removed,) = set(step["replicas"]) - set(step["target"])
    return removed


def _throttles(topic: dict, brokers: dict) -> tuple[dict, dict]:
    """The throttle entries of a topic's config and of each broker's (brokers without one left
    out), the rates as ints: Admin's answer and cluster-state's read alike."""
    per_broker = {b: {k: int(v) for k, v in c.items() if "throttled" in k} for b, c in brokers.items()}
    return {k: v for k, v in topic.items() if "throttled" in k}, {b: c for b, c in per_broker.items() if c}


def _throttle_configs(recording: Recording, point: str) -> tuple[dict, dict]:
    """The throttle entries of the topic and broker configs Admin described at ``point``."""
    configs = recording.account(point)["configs"]
    return _throttles(configs["topics"]["orders"], configs["brokers"])


def throttles_are_what_kafka_reassign_partitions_set(recording: Recording) -> None:
    """plan-reassign decommission of the replaced broker, at the rate the script gave
    kafka-reassign-partitions --throttle, on the metadata copied before the reassignment: the
    move Kafka's tool was asked to make (the removed broker's slot to the fourth broker), and the
    throttle configs that tool set (ReassignPartitionsCommand.calculateLeaderThrottles /
    calculateFollowerThrottles on the topic, the rate on every broker of the move), as Admin
    describeConfigs showed them while it ran."""
    step = recording.step("reassignment started")
    rate_mb = step["throttle_bytes_s"] / 1_000_000
    found = objects("plan-reassign", recording.metadata("before-reassignment"), "decommission",
                    str(_moving_broker(recording)), "--throttle", str(rate_mb), "--kafka-version", kafka_version(recording))
    move = one(found, "move")
    assert (move["from"], move["to"]) == (_moving_broker(recording), (set(step["target"]) - set(step["replicas"])).pop())
    throttle = one(found, "throttle")
    topic, brokers = _throttle_configs(recording, "in-flight")
    assert throttle["topics"]["orders"] == topic
    assert throttle["brokers"] == brokers
    assert throttle["rate"] == step["throttle_bytes_s"]


def reassignment_in_flight_is_what_kafka_lists(recording: Recording) -> None:
    """cluster-state on the metadata copied while the new replica caught up: the replicas being
    added and removed are listPartitionReassignments' (KIP-455: in the partition's state, ZooKeeper
    and KRaft alike), the throttles the topic and brokers carry are describeConfigs', the partition
    is reassigning and, its ISR holding every replica but the one being added, not
    under-replicated (Kafka's replication factor leaves adding replicas out)."""
    state = one(objects("cluster-state", recording.metadata("in-flight")), "cluster_state")
    topic = next(t for t in state["topics"] if t["name"] == "orders")
    partition = topic["partitions"][0]
    listed = recording.account("in-flight")["reassignments"]["orders-0"]
    assert (partition["replicas"], partition["adding_replicas"], partition["removing_replicas"]) == (
        listed["replicas"], listed["adding"], listed["removing"])
    assert _throttles(topic["config"], state["broker_configs"]) == _throttle_configs(recording, "in-flight")
    assert state["health"]["reassigning"] == ["orders-0"]
    assert "orders-0" not in state["health"]["under_replicated"]
    assert set(partition["isr"]) >= set(listed["replicas"]) - set(listed["adding"])


def verify_is_what_kafka_reassign_partitions_verify_said(recording: Recording) -> None:
    """plan-reassign verify with the executed reassignment's file: in flight, the partition in
    progress with the throttles left (exit 1), as Kafka's --verify said "still in progress"; after
    it completed and Kafka's --verify cleared the throttles, completed with nothing left (exit 0)."""
    plan = str(recording.root / "reassignment.json")
    verdicts = {}
    for point in ("in-flight", "completed"):
        result = run("plan-reassign", recording.metadata(point), "verify", "--reassignment-json-file", plan,
                     "--format", "ndjson")
        found = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
        status = one(found, "reassignment_status")["status"]
        summary = one(found, "verify")
        said = (recording.root / point / "reassign-verify.txt").read_text()
        verdicts[point] = (result.exit_code, status, summary["throttles_left"] > 0)
        if point == "in-flight":
            assert "Reassignment of partition orders-0 is still in progress." in said
        else:
            assert "Reassignment of partition orders-0 is completed." in said and "Clearing" in said
    assert verdicts == {"in-flight": (1, "in_progress", True), "completed": (0, "completed", False)}


def leader_after_reassignment_is_the_controllers(recording: Recording) -> None:
    """plan-reassign's controller steps for the move end with the leader and leader epoch the
    controller gave the partition when the reassignment completed (the removed leader's
    successor: the target's first replica, in the ISR), and its leader_change says so."""
    found = objects("plan-reassign", recording.metadata("before-reassignment"), "decommission",
                    str(_moving_broker(recording)), "--kafka-version", kafka_version(recording))
    rows = one(found, "transitions")["rows"]
    after = recording.partition_account("completed")
    assert (rows[-1]["leader"], rows[-1]["leader_epoch"], sorted(rows[-1]["isr"]), rows[-1]["replicas"]) == (
        after["leader"], after["leader_epoch"], sorted(after["isr"]), after["replicas"])
    change = one(found, "leader_change")
    assert (change["from"], change["to"]) == (_moving_broker(recording), after["leader"])


def _inspected(recording: Recording, point: str, broker: int) -> list[dict]:
    return objects("inspect-dir", recording.log_dir(point, broker), "--kafka-version", kafka_version(recording))


def log_start_is_what_kafka_lists(recording: Recording) -> None:
    """inspect-dir's log start of orders-0 on every replica, after DeleteRecords and after time
    retention, is listOffsets' earliest: what a restart would load (the log-start-offset
    checkpoint when past the first segment, else the first segment's base; LogLoader)."""
    for point in ("after-delete-records", "after-retention"):
        earliest = recording.partition_account(point)["earliest"]
        for broker in recording.partition_account(point)["replicas"]:
            partition = next(o for o in _inspected(recording, point, broker)
                             if o["type"] == "partition" and o["name"] == "orders-0")
            assert partition["log_start_offset"] == earliest, (point, broker, partition["log_start_offset"])
    assert recording.partition_account("after-delete-records")["earliest"] == recording.step("deleted records")[
        "low_watermark"]


def no_alarm_on_what_kafka_wrote_in_health(recording: Recording) -> None:
    """Nothing here was damaged: every broker's log directory at every point, copied from a
    running broker (DeleteRecords, retention and compaction done, .deleted files awaiting
    file.delete.delay.ms, indexes of active segments, a reassignment's added and removed
    replicas, a broker stopped cleanly and back, consumer groups' and transactions' internal
    partitions, a controller killed while a producer wrote), gets no warning and no error from
    inspect-dir: normal state Kafka writes is information at most."""
    for point in recording.description["points"]:
        for broker in recording.description["brokers"]:
            if not recording.log_dir(point, broker).is_dir():
                continue
            alarms = [(o["kind"], o["message"][:120]) for o in _inspected(recording, point, broker)
                      if o["type"] == "finding" and o["severity"] in ("warning", "error")]
            assert not alarms, (point, broker, alarms)


def compacted_log_is_what_dump_log_lists(recording: Recording) -> None:
    """The compacted topic, on every replica after the cleaner ran: the offsets inspect-log walks
    (records, markers included) are the ones kafka-dump-log --deep-iteration printed, so the
    cleaner's removals (superseded keys, tombstones past delete.retention.ms, the aborted
    transaction's records) are seen as Kafka sees them; and its log start is listOffsets'."""
    point = "compacted"
    for broker in recording.partition_account(point, topic="ledger")["replicas"]:
        directory = recording.log_dir(point, broker) / "ledger-0"
        segments = sorted(str(p) for p in directory.glob("*.log"))
        ours = [o["offset"] for o in objects("inspect-log", *segments, "--records", "--payload", "none")
                if o["type"] == "record"]
        dump = (recording.root / point / "dump-log" / f"node-{broker}" / "data" / "ledger-0.txt").read_text()
        theirs = [int(m) for m in re.findall(r"^\| offset: (\d+)", dump, re.M)]
        assert theirs and ours == theirs, (broker, len(ours), len(theirs))
        partition = next(o for o in _inspected(recording, point, broker)
                         if o["type"] == "partition" and o["name"] == "ledger-0")
        assert partition["log_start_offset"] == recording.partition_account(point, topic="ledger")["earliest"]


def election_when_the_last_isr_member_dies(recording: Recording) -> None:
    """plan-elect --fail of the leader, on the metadata copied while the ISR was the leader alone
    and the other follower an eligible leader replica (KIP-966), gives what the controller wrote:
    no leader (the ELR member is down too), the ISR emptied into the ELR
    (``PartitionChangeBuilder`` with ELR on: a fenced last ISR member joins the ELR) and the last
    known ELR, at the epoch Admin described."""
    leader = [s for s in recording.steps if s["step"] == "killed"][-1]["broker"]
    election = one(objects("plan-elect", recording.metadata("elr-formed"), "--fail", str(leader),
                           "--kafka-version", kafka_version(recording)), "election")
    after = recording.partition_account("offline")
    assert (election["after"]["leader"], sorted(election["after"]["isr"]), sorted(election["after"]["elr"]),
            sorted(election["after"]["last_known_elr"])) == (
        after["leader"], sorted(after["isr"]), sorted(after["elr"]), sorted(after["last_known_elr"]))
    assert election["elected"] is False and election["unclean"] is False
    assert recording.partition_account("elr-formed")["elr"], "no eligible leader replica before the kill"


def min_isr_change_clears_the_elr(recording: Recording) -> None:
    """Changing the topic's min.insync.replicas makes the controller write a ClearElrRecord for it
    (KIP-966): cluster-state after it has no ELR and no last known ELR for the partition, as Admin
    described, where it had them before; the restarted follower, no longer eligible, is not
    elected (the partition stays offline: unclean election is off)."""
    before = one(objects("cluster-state", recording.metadata("offline")), "cluster_state")
    after = one(objects("cluster-state", recording.metadata("min-isr-changed")), "cluster_state")
    p_before = before["topics"][0]["partitions"][0]
    p_after = after["topics"][0]["partitions"][0]
    assert p_before["elr"] and (p_after["elr"], p_after["last_known_elr"]) == ([], [])
    back = recording.partition_account("follower-back")
    assert back["leader"] == -1 and not back["elr"]


#: the judgments each scenario's recordings get, besides cluster_state_is_described at every point
BY_SCENARIO = {
    "leader-killed-acks1": (truncation_after_a_kill, acks1_losses_are_discarded, recovery_after_a_kill,
                            election_after_a_kill),
    "clean-failover": (election_after_a_controlled_shutdown, rejoin_after_a_controlled_shutdown,
                       no_alarm_on_what_kafka_wrote_in_health),
    "unclean-election": (election_unclean, truncation_after_unclean, losses_of_the_unclean_election),
    "consumer-groups": (groups_are_what_admin_lists, streams_groups_are_what_admin_describes,
                        no_alarm_on_what_kafka_wrote_in_health),
    "transactions": (transactions_are_what_admin_describes, transactions_after_the_timeout,
                     no_alarm_on_what_kafka_wrote_in_health),
    "controller-failover": (controller_is_the_one_kafka_reports, no_alarm_on_what_kafka_wrote_in_health),
    "reassignment-throttled": (throttles_are_what_kafka_reassign_partitions_set, reassignment_in_flight_is_what_kafka_lists,
                               verify_is_what_kafka_reassign_partitions_verify_said,
                               leader_after_reassignment_is_the_controllers, no_alarm_on_what_kafka_wrote_in_health),
    "log-start": (log_start_is_what_kafka_lists, no_alarm_on_what_kafka_wrote_in_health,
                  compacted_log_is_what_dump_log_lists),
    "elr-min-isr": (election_when_the_last_isr_member_dies, min_isr_change_clears_the_elr),
}
