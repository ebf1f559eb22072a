"""The ``cluster-state`` overview at 80 columns (issue 20): the partitions table fits, a broker's
endpoints are never cut inside (one a line when they do not fit side by side), counts agree with
their nouns, and a column with nothing to say (no reassignment) is left out."""

from __future__ import annotations

from kreplica.report.text.cluster_state import render_text
from tests.builders.text_width import UNWRAPPED, assert_readable, render

ENDPOINTS = ["PLAINTEXT://kafka-1.kafka.svc.cluster.example.internal:9092",
             "SSL://kafka-1.kafka.svc.cluster.example.internal:9093"]


def _state(*, reassigning: bool = False) -> dict:
    partition = {"partition": 0, "leader": -1, "leader_epoch": 1, "replicas": [1, 2, 3], "isr": [1],
                 "adding_replicas": [4] if reassigning else [], "removing_replicas": [], "version": 2}
    health = {name: [] for name in ("offline", "under_min_isr", "no_leader", "leader_not_alive", "live_isr_empty",
                                    "under_replicated", "reassigning", "preferred_leader_not_leader")}
    for name in ("offline", "under_min_isr", "no_leader", "live_isr_empty", "under_replicated",
                 "preferred_leader_not_leader"):
        health[name] = ["orders-0"]
    return {"cluster_id": "kreplica-test", "source_kind": "zookeeper", "position": {"zxid": 0x17},
            "controller": {"broker_id": 3, "epoch": 2},
            "brokers": [{"id": 1, "alive": True, "rack": "use1-az1", "broker_epoch": 23, "endpoints": ENDPOINTS}],
            "topics": [{"name": "orders", "partitions": [partition]}],
            "health": health, "pending": {}}


def test_the_overview_fits_80_columns_and_keeps_endpoints_whole() -> None:
    narrow = render(lambda c: render_text(_state(), [], c), 80)
    assert_readable(narrow, render(lambda c: render_text(_state(), [], c), UNWRAPPED), 80)
    assert all(endpoint in narrow for endpoint in ENDPOINTS)
    assert narrow.startswith("PROBLEMS cluster kreplica-test (zookeeper, zxid 0x17): 1 broker, 1 topic,")
    assert "reassign" not in narrow


def test_a_reassignment_brings_its_column_back() -> None:
    assert " reassign " in render(lambda c: render_text(_state(reassigning=True), [], c), 160)
