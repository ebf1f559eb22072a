"""Either control plane: which one a SOURCE holds evidence of, and its cluster state.

:func:`load_cluster_state` is what ``cluster-state`` calls: it detects ZooKeeper or KRaft files
(:func:`detect_source_kind`) and hands them to :mod:`~kreplica.model.zookeeper` and
:mod:`~kreplica.model.cluster.from_zookeeper`, or to :mod:`~kreplica.model.cluster.from_kraft`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from kreplica.formats.kraft import records as kraft
from kreplica.formats.errors import FormatError
from kreplica.formats.logdir.naming import parse_partition_dir
from kreplica.formats.mapped import refuse_special
from kreplica.model.cluster.from_kraft import load_kraft_state
from kreplica.model.cluster.from_zookeeper import cluster_state_from_zk
from kreplica.model.cluster.state import ClusterState
from kreplica.model.cluster.zk_chroot import resolve_chroot, shown
from kreplica.model.zookeeper import load_zk_state

METADATA_DIR = "__cluster_metadata-0"


def _refuse_data_partition(source: str) -> None:
    """Segments of a topic's partition directory are data, not the metadata log: say so instead
    of reading them as an empty KRaft history."""
    directory = source if os.path.isdir(source) else os.path.dirname(os.path.abspath(source))
    parsed = parse_partition_dir(os.path.basename(os.path.normpath(directory)))
    if parsed is not None and parsed.topic != METADATA_DIR.rsplit("-", 1)[0]:
        what = "a partition directory" if directory == source else "in a partition directory"
        raise FormatError(f"is {what} of topic {parsed.topic!r}, not cluster metadata: give a "
                          f"ZooKeeper data directory or KRaft's {METADATA_DIR} (or the log directory holding it); "
                          "for a partition's segments use inspect-log or inspect-dir", path=source)


def detect_source_kind(sources: Iterable[str | os.PathLike]) -> tuple[str, list[str]]:
    """``("zookeeper" | "kraft", sources)``: which control plane SOURCE holds evidence of.

    A Kafka log directory holding ``__cluster_metadata-0`` is replaced by that directory.
    KRaft is recognised by ``*.checkpoint`` and 20-digit ``*.log`` names, ZooKeeper by
    ``snapshot.*``/``log.*`` names or a ``version-2`` directory. Raises :class:`FormatError`
    when nothing is recognised or both kinds are mixed.
    """
    kinds = set()
    resolved = []
    for src in sources:
        s = os.fspath(src)
        refuse_special(s)
        if os.path.isdir(os.path.join(s, METADATA_DIR)):
            s = os.path.join(s, METADATA_DIR)
        resolved.append(s)
        names = sorted(os.listdir(s)) if os.path.isdir(s) else [os.path.basename(s)]
        if os.path.isdir(os.path.join(s, "version-2")):
            kinds.add("zookeeper")
        for n in names:
            if kraft.parse_checkpoint_name(n) or kraft.parse_segment_name(n) is not None:
                _refuse_data_partition(s)
                kinds.add("kraft")
            elif n.startswith(("snapshot.", "log.")):
                kinds.add("zookeeper")
    if len(kinds) != 1:
        what = "both ZooKeeper and KRaft files" if kinds else "no ZooKeeper or KRaft metadata files"
        raise FormatError(f"cannot tell the control plane: SOURCE holds {what}",
                          path=", ".join(resolved) or None)
    return kinds.pop(), resolved


def load_cluster_state(sources: Iterable[str | os.PathLike], *, at_zxid: int | None = None,
                       at_time: int | None = None, at_offset: int | None = None,
                       chroot: str | None = None) -> ClusterState:
    """The cluster state of SOURCE, ZooKeeper or KRaft (detected), at the requested point.

    ``at_zxid`` and ``chroot`` (Kafka's ZooKeeper chroot; ``None``: found in the tree, see
    :func:`~kreplica.model.cluster.zk_chroot.resolve_chroot`) apply to ZooKeeper only and
    ``at_offset`` to KRaft only (``ValueError`` for the other kind, so a command can reject the
    option); ``at_time`` (epoch ms) to both. Raises :class:`FormatError` when the evidence holds
    no cluster at that point (:func:`refuse_empty`): an empty cluster is no evidence of a
    healthy one.
    """
    kind, resolved = detect_source_kind(sources)
    if kind == "zookeeper":
        if at_offset is not None:
            raise ValueError("--at-offset applies to KRaft metadata; this SOURCE is ZooKeeper (use --at-zxid)")
        zk = load_zk_state(resolved, at_zxid=at_zxid, at_time=at_time)
        root = resolve_chroot(zk.nodes, chroot, where=f"zxid {zk.zxid:#x}", source=zk.source or None)
        return refuse_empty(cluster_state_from_zk(zk, chroot=root), shown(root))
    if at_zxid is not None:
        raise ValueError("--at-zxid applies to ZooKeeper; this SOURCE is KRaft metadata (use --at-offset)")
    if chroot is not None:
        raise ValueError("--chroot applies to ZooKeeper; this SOURCE is KRaft metadata")
    return refuse_empty(load_kraft_state(resolved, at_offset=at_offset, at_time=at_time))


def refuse_empty(state: ClusterState, chroot: str | None = None) -> ClusterState:
    """``state``, unless it registers no broker and no topic: then a :class:`FormatError`
    (exit 2) saying what the evidence holds instead. A control plane without brokers or topics
    has nothing to judge, and "OK, 0 brokers" would read as a healthy cluster."""
    if state.brokers or state.topics:
        return state
    if state.source_kind == "kraft" and state.position.get("offset", -1) < 0:
        raise FormatError("no KRaft metadata records: the snapshots and segments are empty or absent, "
                          "so there is no cluster state to report", path=state.source or None)
    where = (f"zxid {state.position['zxid']:#x}" if state.source_kind == "zookeeper"
             else f"offset {state.position['offset']}")
    held = [f"cluster id {state.cluster_id}"] if state.cluster_id else []
    if state.controller.broker_id is not None:
        held.append(f"controller {state.controller.broker_id}")
    if state.features:
        held.append(", ".join(f"{k} {v}" for k, v in sorted(state.features.items())))
    what = f"Kafka's znodes under {chroot} register" if chroot is not None else "the metadata registers"
    raise FormatError(f"{what} no broker and no topic at {where}"
                      + (f" (only {'; '.join(held)})" if held else "") + ": no cluster state to report",
                      path=state.source or None)
