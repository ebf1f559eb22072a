"""``zk dump`` and ``zk log`` as selections of what the ZooKeeper model reads: the nodes whose
paths match ``--path`` globs (:func:`select_nodes`), the logged transactions within
``--from``/``--to`` (:func:`select_txns`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence

from kreplica.formats.zookeeper import txnlog as zkl
from kreplica.model.zookeeper import ZkNode, iter_tree


def unmatched_glob(nodes: Mapping[str, ZkNode], globs: Sequence[str]) -> str | None:
    """The first of ``globs`` that matches no node of ``nodes`` (``None``: each matches one)."""
    return next((g for g in globs if next(iter_tree(nodes, g), None) is None), None)


def select_nodes(nodes: Mapping[str, ZkNode], globs: Sequence[str] = ()) -> Iterator[tuple[str, ZkNode]]:
    """``(path, node)`` in pre-order (:func:`~kreplica.model.zookeeper.iter_tree`), every node
    with no ``globs``, else each node matching any of them, once."""
    if not globs:
        return iter_tree(nodes)
    if len(globs) == 1:
        return iter_tree(nodes, globs[0])
    wanted = {p for glob in globs for p, _ in iter_tree(nodes, glob)}
    return ((p, n) for p, n in iter_tree(nodes) if p in wanted)


def select_txns(items: Iterable, from_zxid: int | None, to_zxid: int | None) -> Iterator:
    """Drop entries outside ``[from_zxid, to_zxid]``. Headers, ends and findings always pass: as
    in ``inspect-log``, filters choose what is listed, while findings (and so the exit status)
    cover the whole of every file."""
    for item in items:
        if isinstance(item, zkl.TxnEntry):
            if (from_zxid is None or item.zxid >= from_zxid) and (to_zxid is None or item.zxid <= to_zxid):
                yield item
        else:
            yield item
