"""The results of ``zk dump`` (the replayed state and the nodes selected, streamed) and ``zk
log`` (the logs' entries, streamed; their findings counted on the way)."""

from __future__ import annotations

from collections.abc import Iterable

from kreplica.model.zookeeper import ZkNode, ZkState
from kreplica.report.output.emitter import Emitter
from kreplica.report.output.formats import Payload
from kreplica.report.output.seam import Report, StreamedReport
from kreplica.report.schemas.zk import emit_dump, emit_log


class ZkDumpReport(Report):
    """The nodes ``tree`` of the state ZooKeeper restores (``state``), then its findings and
    summary."""

    def __init__(self, state: ZkState, tree: Iterable[tuple[str, ZkNode]], payload: Payload) -> None:
        self._state = state
        self._tree = tree
        self._payload = payload

    def emit(self, emitter: Emitter) -> None:
        emit_dump(self._state, self._tree, emitter, self._payload)

    def render_text(self, console) -> None:
        from kreplica.report.text.zk import render_dump

        render_dump(self._state, self._tree, console, self._payload)

    def has_problems(self) -> bool:
        """An error finding of the replay (a digest mismatch...)."""
        return any(f.is_error for f in self._state.findings)


class ZkLogReport(StreamedReport):
    """The items of :func:`~kreplica.model.zookeeper.iter_zk_log` (files, entries, findings, ends),
    rendered once."""

    def __init__(self, items: Iterable, payload: Payload) -> None:
        self._items = items
        self._payload = payload

    def emit_stream(self, emitter: Emitter) -> int:
        return emit_log(self._items, emitter, self._payload)

    def render_stream(self, console) -> int:
        from kreplica.report.text.zk import render_log

        return render_log(self._items, console, self._payload)
