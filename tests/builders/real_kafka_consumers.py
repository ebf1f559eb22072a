"""kreplica's consumer impact against what real consumers did (``consumer-after-unclean``
recordings, ``tests/realkafka/scenarios.py``): after the unclean election, the new leader's writes
and the old leader's rejoin, a consumer of each client generation resumed each group under each
``auto.offset.reset`` (``tests/realkafka/probe.py``, kept as ``probes.json``). kreplica's
prediction, from the evidence copied before the old leader restarted, is the behaviour of that
client's generation and policy: where the consumer resumes (``resumes_at``), the exception its
poll raises, or that it stalls (its polls raise nothing and return nothing, and ``position()``
times out), whether ``auto.offset.reset`` moved it (``resets``) and whether KIP-320's validation
found the truncation (cause ``log_truncation``). Where the two disagree the client is right.

Two of kreplica's commands give consumer_impact for the incident: ``truncate-plan`` of the old
leader against the new one with ``--groups`` (the new leader as its files are, its 100 new records
included: what the probes met), and ``timeline --log-dirs`` on the copy taken after the election
(the unclean election it finds in the metadata, against the new leader's log end at the election,
its 100 records as the later copy; a reset to latest lands on the log end when the consumer
fetches, which the probes saw after the writes, where kreplica gives the log end at the election
and no bound on what it skips). ``plan-elect --unclean-election`` on the copy taken while the
partition was offline gives none: the partition had no leader (-1) to take records from.

Where the race between the consumer's first fetch and new writes decides (``when``), the probes'
race is known: producers wrote up to the log end the probes met, past the committed offset or
not."""

from __future__ import annotations

import json
from dataclasses import dataclass

from tests.builders.real_kafka import Recording
from tests.builders.real_kafka_checks import kafka_version, objects

TOPIC_PARTITION = "orders-0"


@dataclass(frozen=True)
class Outcome:
    """What a consumer's next fetch did: where it resumed (``None``: it failed or stalled), the
    exception its poll raised, whether it stalled (no exception, no record, no position), whether
    ``auto.offset.reset`` chose the position, whether KIP-320 validation detected a truncation."""

    resumes_at: int | None
    exception: str | None
    stalled: bool
    reset: bool
    truncation_detected: bool


def probes(recording: Recording) -> list[dict]:
    return json.loads((recording.root / "probes.json").read_text())


def observed(probe: dict) -> Outcome:
    """The probe's answer: the exception its poll raised; else the first record's offset, or its
    position() when it read none (a reset to the log end with nothing written since); a consumer
    that read nothing, raised nothing and has no position (position() timed out) stalled."""
    flags = probe["reset"], probe["truncation_detected"]
    if probe.get("exception"):
        return Outcome(None, probe["exception"], False, *flags)
    if probe.get("first_offset") is not None:
        return Outcome(probe["first_offset"], None, False, *flags)
    if probe.get("position") is not None:
        return Outcome(probe["position"], None, False, *flags)
    assert probe.get("position_exception") == "TimeoutException", probe
    return Outcome(None, None, True, *flags)


def _version(text: str | None) -> tuple[int, ...] | None:
    return None if text is None else tuple(int(p) for p in text.split("."))


def behaviour(impact: dict, client: str, policy: str, race: str) -> dict:
    """kreplica's behaviour row for a client of version ``client`` under ``policy``."""
    version = _version(client)
    rows = [b for b in impact["behaviours"]
            if (b["clients_from"] is None or _version(b["clients_from"]) <= version)
            and (b["clients_before"] is None or version < _version(b["clients_before"]))
            and policy in b["auto_offset_reset"] and b["when"] in (None, race)]
    assert len(rows) == 1, (impact["group"], client, policy, rows)
    return rows[0]


def predicted(row: dict) -> Outcome:
    return Outcome(row["resumes_at"], row["exception"], row["action"] == "stalls", row["action"] == "resets",
                   row["cause"] == "log_truncation")


def impacts_of_truncate_plan(recording: Recording, point: str = "after-unclean") -> dict[str, dict]:
    """``truncate-plan`` of the old leader against the new one at ``point``, every broker's log
    directory as group evidence: its consumer_impact objects by group."""
    old = recording.step("isr shrunk")["isr"][0]
    new = next(s for s in recording.steps if s["step"] == "elected")["leader"]
    dirs = [recording.log_dir(point, b) for b in recording.description["brokers"]]
    found = objects("truncate-plan", "--leader", recording.log_dir(point, new), "--follower",
                    recording.log_dir(point, old), "-p", TOPIC_PARTITION, "--kafka-version",
                    kafka_version(recording), *[a for d in dirs for a in ("--groups", d)])
    return {o["group"]: o for o in found if o["type"] == "consumer_impact"}


def impacts_of_timeline(recording: Recording, point: str = "after-unclean") -> dict[str, dict]:
    """``timeline --log-dirs`` on the metadata and every broker's log directory copied at
    ``point``: the consumer_impact objects of the unclean election it finds, by group."""
    dirs = [f"{b}={recording.log_dir(point, b)}" for b in recording.description["brokers"]]
    found = objects("timeline", recording.metadata(point), *[a for d in dirs for a in ("--log-dirs", d)])
    impacts = [o for o in found if o["type"] == "consumer_impact"]
    assert {o["event"] for o in impacts} and all("unclean election" in o["event"] for o in impacts), impacts
    return {o["group"]: o for o in impacts}


def disagreements(recording: Recording, impacts: dict[str, dict], *, latest_at_fetch: bool = False) -> list[str]:
    """Each probe whose outcome is not kreplica's prediction for its group, client and policy.
    ``latest_at_fetch``: a reset to latest is judged as "the log end when it fetched" (the
    prediction was made before the writes that moved it)."""
    end_at_probe = recording.partition_account("after-rejoin")["latest"]
    wrong = []
    for probe in probes(recording):
        impact = impacts.get(probe["group"])
        if impact is None:
            wrong.append(f"{probe['group']}: no consumer_impact")
            continue
        race = "writes_first" if end_at_probe >= impact["committed_offset"] else "fetches_first"
        row = behaviour(impact, probe["client_version"], probe["auto_offset_reset"], race)
        expected, actual = predicted(row), observed(probe)
        if latest_at_fetch and row["action"] == "resets" and probe["auto_offset_reset"] == "latest":
            expected = Outcome(end_at_probe, None, False, True, expected.truncation_detected)
        if expected != actual:
            wrong.append(f"{probe['group']} clients {probe['client_version']} {probe['auto_offset_reset']}: "
                         f"kreplica {expected} ({row['action']}, {row['cause']}), client {actual} {probe['log']}")
    return wrong


def consumers_resume_where_truncate_plan_says(recording: Recording) -> None:
    """truncate-plan's consumer_impact, per group, client generation and auto.offset.reset, is
    what the consumer of that generation did."""
    wrong = disagreements(recording, impacts_of_truncate_plan(recording))
    assert not wrong, "\n".join(wrong)


def consumers_resume_where_timeline_says(recording: Recording) -> None:
    """timeline's consumer_impact for the unclean election it finds is what the consumers did (a
    reset to latest: the log end at the fetch)."""
    wrong = disagreements(recording, impacts_of_timeline(recording), latest_at_fetch=True)
    assert not wrong, "\n".join(wrong)


def probes_cover_every_generation_and_policy(recording: Recording) -> None:
    """Every group was probed by a client of each generation the brokers accept, under each
    policy, and no probe committed (the groups' offsets after the probes are those before)."""
    from tests.realkafka.probe import RESETS

    found = probes(recording)
    versions = sorted({p["client_version"] for p in found})
    groups = sorted({p["group"] for p in found})
    assert {(p["group"], p["client_version"], p["auto_offset_reset"]) for p in found} == {
        (g, v, r) for g in groups for v in versions for r in RESETS}
    generations = {_generation(v) for v in versions}
    assert generations == {"before 2.3", "2.3-2.5", "2.6+"}, versions
    # Admin's listing before the leader died (after it, the __consumer_offsets partitions it led
    # alone are offline until it rejoins)
    before = recording.account("before-incident")["groups"]
    after = json.loads((recording.root / "groups-after-probes.json").read_text())
    assert {g: before[g]["offsets"] for g in groups} == {g: after[g]["offsets"] for g in groups}


def _generation(version: str) -> str:
    v = _version(version)
    return "before 2.3" if v < (2, 3) else "2.3-2.5" if v < (2, 6) else "2.6+"
