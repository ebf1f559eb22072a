"""Where Kafka's znodes are in a ZooKeeper tree: at the root, or under the chroot of
``zookeeper.connect=host:2181/some-path``.

Sources: Kafka ``core/src/main/scala/kafka/zk/KafkaZkClient.scala`` (``createTopLevelPaths``:
every broker creates ``/brokers/ids`` and ``/brokers/topics`` under its chroot when it starts,
creating the chroot first) and ``ZkData.scala``. A tree holding Kafka's ``/brokers`` under one
chroot only is read from there; a tree holding it in several places, or nowhere, is refused
with what it does hold, so no command reports an empty cluster as a healthy one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from kreplica.formats.errors import FormatError
from kreplica.formats.usage import UsageError

#: the znodes every Kafka broker creates under its chroot at start-up
KAFKA_MARKERS = ("/brokers/ids", "/brokers/topics")
#: how many top-level znodes a message names
_NAMED = 8


def normalize_chroot(text: str) -> str:
    """``--chroot`` as Kafka's ``zookeeper.connect`` writes it (``/kafka``, ``/a/b/``) to the
    prefix the model uses (``"/kafka"``; ``""`` for the root ``/``); anything not starting with
    ``/`` is a one-line :class:`UsageError`."""
    t = text.strip()
    if not t.startswith("/"):
        raise UsageError(f"expected a znode path such as /kafka (the part of zookeeper.connect after the "
                         f"port), got {text!r}", option="--chroot")
    return t.rstrip("/")


def kafka_roots(paths: Iterable[str]) -> tuple[str, ...]:
    """Every chroot (``""`` for the root) under which the tree holds one of :data:`KAFKA_MARKERS`,
    sorted."""
    roots = set()
    for p in paths:
        for marker in KAFKA_MARKERS:
            if p.endswith(marker):
                roots.add(p[:-len(marker)])
    return tuple(sorted(roots))


def shown(root: str) -> str:
    """A chroot as a person writes it (``/`` for the root)."""
    return root or "/"


def describe_tree(paths: Iterable[str]) -> str:
    """What a tree without Kafka's znodes holds: its node count and top-level znodes."""
    paths = list(paths)
    top = sorted({"/" + p.split("/")[1] for p in paths if p.count("/") >= 1 and p != "/"})
    names = ", ".join(top[:_NAMED]) + (f" and {len(top) - _NAMED} more" if len(top) > _NAMED else "")
    return f"{len(paths)} znodes" + (f", top-level {names}" if top else "")


def resolve_chroot(nodes: Mapping[str, object], chroot: str | None, *, where: str,
                   required: bool = True, source: str | None = None) -> str | None:
    """The chroot Kafka's znodes are read from: ``chroot`` (as :func:`normalize_chroot` gives it)
    when Kafka's ``/brokers`` is there, else the one place the tree holds it. ``where`` names the
    point (``"zxid 0x1a"``) and ``source`` the evidence for the messages. Raises :class:`UsageError`
    (exit 2) when the chroot given holds no Kafka znodes or the tree holds them in several places
    (choose with ``--chroot``), and :class:`FormatError` (exit 2) when it holds them nowhere (the message says what the tree holds instead; with ``required``
    false this is ``None``: a history may create them later)."""
    roots = kafka_roots(nodes)
    if chroot is not None:
        root = chroot
        if root in roots or not required:
            return root
        found = (f"Kafka's znodes are under {', '.join(shown(r) for r in roots)}" if roots
                 else f"the tree holds no Kafka znodes at all ({describe_tree(nodes)})")
        raise UsageError(f"no Kafka znodes ({KAFKA_MARKERS[0]}) under --chroot {shown(root)} at {where}; "
                         f"{found}", option="--chroot")
    if len(roots) == 1:
        return roots[0]
    if roots:
        raise UsageError(f"the ZooKeeper tree at {where} holds Kafka's znodes in {len(roots)} places "
                         f"({', '.join(shown(r) for r in roots)}): choose one with --chroot", path=source)
    if not required:
        return None
    raise FormatError(f"no Kafka metadata in the ZooKeeper tree at {where}: no {' or '.join(KAFKA_MARKERS)} at / "
                      f"or under any chroot ({describe_tree(nodes)})", path=source)
