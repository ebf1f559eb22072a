"""The timeline's text report: the streamed event table rendered to a fixed-width console and
compared whole (rich's practice), its columns across blocks, its layouts from 80 columns up,
wide characters, styles, and evidence text made safe for a terminal."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from kreplica.analysis.timeline.events import BrokerEvent, LeaderIsr, PartitionEvent
from kreplica.report.text import timeline as timeline_text
from kreplica.report.schemas.timeline import event_to_dict
from kreplica.report.text.timeline import EventTable

T0 = 1_700_000_000_000


def _events(topic: str = "orders") -> list[dict]:
    a = LeaderIsr(1, 0, (1, 2, 3))
    b = LeaderIsr(1, 0, (1,))
    c = LeaderIsr(2, 1, (2,))
    return [event_to_dict(ev, "zookeeper") for ev in (
        BrokerEvent(1, "registered", 0x11, T0, 0x11, 0x100),
        PartitionEvent(topic, 0, 0x13, T0 + 1, 1, None, a, "created", "controller",
                       "state created: leader 1, ISR [1, 2, 3]", (1, 2, 3)),
        PartitionEvent(topic, 0, 0x14, T0 + 1002, 1, a, b, "isr_shrink", "leader", "leader 1 removed [2,3]", (1, 2, 3)),
        PartitionEvent(topic, 0, 0x1b2, T0 + 5000, 2, b, c, "unclean_leader_election", "controller",
                       "new leader 2 was not in the ISR [1]; the leader is RECOVERING and this note is long enough "
                       "to be folded", (1, 2, 3)),
    )]


def _render(objs: list[dict], width: int = 120, **console) -> str:
    out = io.StringIO()
    table = EventTable(Console(file=out, width=width, highlight=False, **{"color_system": None, **console}))
    for o in objs:
        table.add(o)
    table.close()
    return out.getvalue()


EXPECTED = """\

 time (UTC)                position   what       cause / event             leader   epoch   isr       evidence
 ────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────────
 2023-11-14 22:13:20.000   0x11       broker 1   registered                                           broker epoch 17
 2023-11-14 22:13:20.001   0x13       orders-0   created                   1        0       1,2,3     state created: leader 1,
                                                                                                      ISR [1, 2, 3]
 2023-11-14 22:13:21.002   0x14       orders-0   isr_shrink (leader)       1        0       1,2,3→1   leader 1 removed [2,3]
 2023-11-14 22:13:25.000   0x1b2      orders-0   unclean_leader_election   1→2      1       1→2       new leader 2 was not in the
                                                                                                      ISR [1]; the leader is
                                                                                                      RECOVERING and this note is
                                                                                                      long enough to be folded

"""


NARROW = """\

 time (UTC)                position   what       cause / event
 ───────────────────────────────────────────────────────────────────────
 2023-11-14 22:13:20.000   0x11       broker 1   registered
    broker epoch 17
 2023-11-14 22:13:20.001   0x13       orders-0   created
    leader 1, epoch 0, isr 1,2,3; state created: leader 1, ISR [1, 2, 3]
 2023-11-14 22:13:21.002   0x14       orders-0   isr_shrink (leader)
    leader 1, epoch 0, isr 1,2,3→1; leader 1 removed [2,3]
 2023-11-14 22:13:25.000   0x1b2      orders-0   unclean_leader_election
    leader 1→2, epoch 1, isr 1→2; new leader 2 was not in the ISR [1]; the
      leader is RECOVERING and this note is long enough to be folded

"""


def test_event_table_rendered_whole():
    assert _render(_events(), width=130) == EXPECTED


def test_an_80_column_table_puts_what_does_not_fit_under_each_row():
    """Time, position, what and cause stay on the row; leader, epoch, ISR and the evidence go on
    the lines under it, wrapped at spaces, when the terminal is too narrow for them."""
    assert _render(_events(), width=80) == NARROW


@pytest.mark.parametrize("width, on_the_row", [
    pytest.param(86, ["leader"], id="86"),
    pytest.param(90, ["leader", "epoch"], id="90"),
    pytest.param(100, ["leader", "epoch", "isr"], id="100"),
])
def test_columns_leave_the_row_isr_first(width, on_the_row):
    header = _render(_events(), width=width).splitlines()[1].split()
    assert header[header.index("event") + 1:] == on_the_row
    assert max(map(len, _render(_events(), width=width).splitlines())) <= width


def test_the_cause_goes_under_the_row_last_when_even_four_columns_are_too_wide():
    """``__consumer_offsets-49`` and ``unclean_leader_election`` do not fit 80 columns beside the
    time and position (a real KRaft history's did not): the cause leads the lines under the row."""
    text = _render(_events("__consumer_offsets"), width=80)
    assert text.splitlines()[1].split() == ["time", "(UTC)", "position", "what"]
    assert "\n    unclean_leader_election; leader 1→2, epoch 1, isr 1→2; new leader 2" in text
    assert max(map(len, text.splitlines())) <= 80


def test_a_block_that_no_longer_fits_starts_a_narrower_table(monkeypatch):
    """A later block with a partition name too long for the layout chosen so far moves columns
    under the rows from there on, under a header of its own; nothing goes past the width."""
    monkeypatch.setattr(timeline_text, "BLOCK", 2)
    text = _render(_events("a") + _events("a-much-longer-topic-name"), width=110)
    headers = [line.split() for line in text.splitlines() if line.startswith(" time (UTC)")]
    assert len(headers) == 2 and "isr" in headers[0] and "isr" not in headers[1]
    assert max(map(len, text.splitlines())) <= 110


def test_evidence_wider_than_its_column_goes_under_the_row():
    """A path in the evidence is never cut to fit the evidence column: the evidence goes under the
    row instead, where it has the width."""
    objs = _events()
    objs[1]["evidence"] = "as ../shared/oracle/zookeeper/snapshot-plus-logs/snapshot.b6 holds it"
    text = _render(objs, width=150)
    assert "../shared/oracle/zookeeper/snapshot-plus-logs/snapshot.b6" in text
    assert "evidence" not in text.splitlines()[1]


def test_columns_widen_from_one_block_to_the_next(monkeypatch):
    """Rows are written a block at a time; a later block that needs a wider column widens it from
    there on (the rows already written keep theirs)."""
    monkeypatch.setattr(timeline_text, "BLOCK", 2)
    lines = _render(_events("a") + _events("a-much-longer-topic-name"), width=300).splitlines()
    rows = [line for line in lines if line.startswith(" 2023")]
    assert len(rows) == 8
    cut = [row.index("created") for row in rows if "created" in row]
    assert cut[0] < cut[1]                                            # widened for the second block
    assert rows[0].index("registered") == rows[1].index("created")    # within a block the columns line up
    assert rows[4].index("registered") == rows[5].index("created")


def test_wide_characters_are_padded_by_terminal_cells():
    text = _render(_events("注文"), width=300)
    rows = [line for line in text.splitlines() if "created" in line or "isr_shrink" in line]
    # "注文-0" is 4 characters but 6 cells wide: the columns after it still line up on screen
    from rich.cells import cell_len

    assert {cell_len(row[:row.index("1,2,3")]) for row in rows} == {cell_len(rows[0][:rows[0].index("1,2,3")])}
    assert "注文-0     " in rows[0]   # padded to "what" (8 cells): 6 + 2, then the gap


def test_styles_reach_a_colour_terminal_only():
    plain = _render(_events(), width=300)
    assert "\x1b" not in plain
    coloured = _render(_events(), width=300, color_system="standard", force_terminal=True)
    unclean = next(line for line in coloured.splitlines() if "unclean_leader_election" in line)
    broker = next(line for line in coloured.splitlines() if "registered" in line)
    assert unclean.startswith("\x1b[1;31m") and unclean.endswith("\x1b[0m")
    assert broker.startswith("\x1b[2m")
    assert coloured.replace("\x1b[1;31m", "").replace("\x1b[2m", "").replace("\x1b[0m", "") == plain


@pytest.mark.parametrize("topic, shown", [
    pytest.param("evil\x1b[31m", "evil\\x1b[31m-0", id="escape-sequence"),
    pytest.param("rtl\u202eabc", "rtl\\u202eabc-0", id="bidi-override"),
    pytest.param("[bold]x", "[bold]x-0", id="markup-is-text"),
])
def test_evidence_is_made_safe_for_a_terminal(topic, shown):
    text = _render(_events(topic), width=300)
    assert shown in text and "\x1b" not in text and "\u202e" not in text


def test_an_empty_table_still_has_its_header():
    assert _render([]).splitlines()[1].split() == ["time", "(UTC)", "position", "what", "cause", "/", "event",
                                                   "leader", "epoch", "isr", "evidence"]


def test_the_starting_states_source_is_said_once():
    """The snapshot rows (the state the history starts from) share one source: the first row
    says it, the others do not repeat it; a later event's own evidence is kept."""
    a = LeaderIsr(1, 0, (1, 2, 3))
    held = "as zk/snapshot.b6 holds it"
    objs = [event_to_dict(ev, "zookeeper") for ev in (
        PartitionEvent("orders", 0, 0x13, T0, 1, None, a, "snapshot", None, held, (1, 2, 3)),
        PartitionEvent("orders", 1, 0x14, T0, 1, None, a, "snapshot", None, held, (1, 2, 3)),
        PartitionEvent("orders", 1, 0x20, T0 + 5, 1, a, LeaderIsr(1, 0, (1,)), "isr_shrink", "leader",
                       held, (1, 2, 3)),
    )]
    text = _render(objs, width=150)
    assert text.count(held) == 2     # the first snapshot row, and the ISR shrink's own evidence
    rows = [line for line in text.splitlines() if "0x" in line]
    assert held in rows[0] and held not in rows[1] and held in rows[2]
