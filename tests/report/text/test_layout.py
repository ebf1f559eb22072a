"""The text layout every report shares (issue 20): prose wrapped at spaces under a hanging
indent, numbers kept with their nouns, a token folded only when it alone is wider than a line;
tables that wrap between whole units and then leave out their least important columns, saying
which; numbers and plurals written one way."""

from __future__ import annotations

import pytest
from rich import box

from kreplica.report.text.numbers import count, number, plural
from kreplica.report.text.layout import Column, Units, clip, fit_table, print_table, wrap_plain
from tests.builders.text_width import render

VERDICT = ("DAMAGED fixtures/damaged/crc-flip-0/00000000000000000000.log: 4 batches, 17 records, offsets 0-16, "
           "1,852 bytes; 1 problem; recovery truncates 1,333 bytes at byte 519")


def test_prose_wraps_at_spaces_under_a_hanging_indent() -> None:
    assert wrap_plain(VERDICT, 80) == [
        "DAMAGED fixtures/damaged/crc-flip-0/00000000000000000000.log: 4 batches,",
        "  17 records, offsets 0-16, 1,852 bytes; 1 problem; recovery truncates",
        "  1,333 bytes at byte 519",
    ]
    assert wrap_plain("    ERROR " + VERDICT, 80, 6)[1].startswith("      ")
    assert wrap_plain(VERDICT, 200) == [VERDICT]


def test_a_number_stays_with_the_word_after_it() -> None:
    lines = wrap_plain("offsets: log start 0, log end 16, high watermark ?, recovery point ?; 1 segment, 1,827 bytes", 72)
    assert lines[1].strip().startswith("1 segment")


def test_a_token_wider_than_the_line_is_folded_after_a_slash() -> None:
    path = "../shared/oracle/zookeeper/snapshot-plus-logs/snapshot.b6"
    lines = wrap_plain(f"as {path} holds it", 30)
    assert all(len(line) <= 30 for line in lines)
    assert [line.strip() for line in lines] == ["as", "../shared/oracle/zookeeper/", "snapshot-plus-logs/",
                                                "snapshot.b6 holds it"]


def test_wide_characters_count_two_cells() -> None:
    lines = wrap_plain("注文 " * 20, 20)
    from rich.cells import cell_len

    assert max(map(cell_len, lines)) <= 20 and "".join(lines).replace(" ", "") == "注文" * 20


def test_clip_marks_what_it_leaves_out() -> None:
    assert clip("abcdef", 6) == "abcdef"
    assert clip("abcdefg", 6) == "abcde…"
    assert clip("注文注文", 5) == "注文…"


COLUMNS = [Column("partition"), Column("leader", 6), Column("epoch", 3), Column("replicas", 5), Column("isr", 4),
           Column("version", 1), Column("problems", 7)]
ROWS = [["orders-0", "-1", "1", "1,2,3", "1", "2",
         Units(("OFFLINE", "MIN-ISR", "no-leader", "isr-empty", "urp", "not-preferred"), " ")]]


def _table(width: int, columns=COLUMNS, rows=ROWS) -> str:
    return render(lambda c: print_table(c, columns, rows, box=box.SIMPLE, pad_edge=False), width)


def test_a_table_wraps_between_units_before_it_drops_columns() -> None:
    text = _table(80)
    assert text.splitlines()[1].split() == ["partition", "leader", "epoch", "replicas", "isr", "version", "problems"]
    assert [line.strip().split("   ")[-1].strip() for line in text.splitlines()[3:6]] == [
        "OFFLINE MIN-ISR", "no-leader isr-empty", "urp not-preferred"]
    assert "left out" not in text


def test_a_table_too_wide_leaves_out_the_least_important_columns_and_says_so() -> None:
    text = _table(50)
    assert text.splitlines()[1].split() == ["partition", "leader", "replicas", "problems"]
    assert "(left out at 50 columns: epoch, isr, version; a wider terminal or -f json shows them)" in " ".join(
        line.strip() for line in text.splitlines())
    assert all(len(line) <= 50 for line in text.splitlines())


def test_a_unit_is_never_split_and_a_wide_terminal_keeps_a_row_on_one_line() -> None:
    endpoints = Units(("PLAINTEXT://kafka-1.kafka.svc.example:9092", "SSL://kafka-1.kafka.svc.example:9093"), " ")
    columns = [Column("id"), Column("rack", 2), Column("broker epoch", 1, wrap=True), Column("endpoints", 4)]
    rows = [["1", "use1-az1", "23", endpoints]]
    narrow = _table(60, columns, rows)
    assert "PLAINTEXT://kafka-1.kafka.svc.example:9092" in narrow and "SSL://kafka-1.kafka.svc.example:9093" in narrow
    assert "left out at 60 columns: broker epoch;" in narrow
    wide = _table(160, columns, rows)
    assert len(wide.splitlines()) == 5 and "9092 SSL://" in wide


def test_fitted_table_names_no_hidden_column_when_it_fits() -> None:
    fitted = render(lambda c: c.print(fit_table(c, COLUMNS, ROWS).table), 200)
    assert "OFFLINE MIN-ISR no-leader isr-empty urp not-preferred" in fitted


@pytest.mark.parametrize("n, noun, shown", [
    pytest.param(1, "batch", "1 batch", id="one"),
    pytest.param(16659, "batch", "16,659 batches", id="many-sibilant"),
    pytest.param(0, "entry", "0 entries", id="zero-y"),
    pytest.param(2, "open session", "2 open sessions", id="two-words"),
    pytest.param(1333, "byte", "1,333 bytes", id="separators"),
    pytest.param(2, "day", "2 days", id="vowel-y"),
])
def test_counts_agree_with_their_nouns(n: int, noun: str, shown: str) -> None:
    assert count(n, noun) == shown


def test_numbers_and_irregular_plurals() -> None:
    assert number(1073741824) == "1,073,741,824"
    assert plural("index") == "indexes"
    assert count(3, "child", "children") == "3 children"


def test_a_column_whose_header_is_a_long_path_stays_and_breaks_after_slashes() -> None:
    # epochs of one replica under a deep path at 80 columns: leaving the replica's column out left
    # a table of row names alone; the path breaks after a slash, never inside a name
    from io import StringIO

    from rich.console import Console

    from kreplica.report.text.layout import Column, fit_table

    path = "/tmp/pytest-of-root/pytest-999/test_text_shows_the_names_bytes_escaped_epochs_0/bad-name-0"
    console = Console(width=80, file=StringIO(), color_system=None)
    fitted = fit_table(console, [Column(""), Column(path, wrap=True)], [["log start / end", "0 / 4"]])
    console.print(fitted.table)
    out = console.file.getvalue()
    assert fitted.hidden == ()
    assert "bad-name-0" in out and "0 / 4" in out
    assert all(len(line) <= 80 for line in out.splitlines())
    assert "test_text_shows_the_names_bytes_escaped_epochs_0/" in out   # broken after the slash
