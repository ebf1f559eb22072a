"""The judgments of kreplica against what real Kafka did, one per decision, on one recording
(``tests/builders/real_kafka.py``): from the evidence copied before an event kreplica predicts;
the evidence after it, the brokers' own ``server.log`` and Admin's answers (``account.json``)
say what Kafka actually did. ``tests/interop/test_real_kafka.py`` runs them on the committed
corpus, ``tests/realkafka/test_harness.py`` on a recording made in the test.

Kafka's version is given to kreplica as the recording's, capped at the newest it emulates (4.0:
4.4's rules for these decisions are 4.0's)."""

from __future__ import annotations

import json
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
    describeConsumerGroups' type (Classic, Consumer)."""
    dirs = [recording.log_dir(point, b) for b in recording.description["brokers"]]
    found = objects("groups", *dirs, "--kafka-version", kafka_version(recording))
    ours = {(o["group"], f"{o['topic']}-{o['partition']}"): (o["offset"], o["leader_epoch"])
            for o in found if o["type"] == "group_offset"}
    listed = recording.account(point)["groups"]
    assert listed, "Admin listed no consumer group"
    theirs = {(g, tp): (o["offset"], o["leader_epoch"]) for g, row in listed.items() for tp, o in row["offsets"].items()}
    assert ours == theirs
    groups = {o["group"]: o for o in found if o["type"] == "group"}
    assert set(groups) == set(listed)
    for group, row in listed.items():
        ours_ = groups[group]
        if ours_["protocol"] is None:
            # a group known only by its offset commits (Admin's, or a simple consumer's): no
            # membership record says its protocol, and kreplica does not guess one
            assert ours_["generation"] == 0 and not ours_["members"], ours_
        elif row["type"] is not None:  # describeConsumerGroups' type: 3.8+ clients
            assert ours_["protocol"] == row["type"].lower(), (group, row, ours_)
    assert not [o for o in found if o["type"] == "finding" and o["severity"] == "error"]


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


#: the judgments each scenario's recordings get, besides cluster_state_is_described at every point
BY_SCENARIO = {
    "leader-killed-acks1": (truncation_after_a_kill, acks1_losses_are_discarded, recovery_after_a_kill,
                            election_after_a_kill),
    "clean-failover": (election_after_a_controlled_shutdown, rejoin_after_a_controlled_shutdown),
    "unclean-election": (election_unclean, truncation_after_unclean),
    "consumer-groups": (groups_are_what_admin_lists,),
    "transactions": (transactions_are_what_admin_describes,),
    "controller-failover": (controller_is_the_one_kafka_reports,),
}
