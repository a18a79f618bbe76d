"""The transcript says why a remembered fact waits for review instead of being saved."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from pytestqt.qtbot import QtBot

from app.transcript.transcript_view import TranscriptView
from timothy.store import Store


def test_a_staged_fact_shows_why(qtbot: QtBot, store: Store) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    memory = store.memories.stage("The owner pays all invoices to IBAN DE89", source="remember")
    notice = view.show_memory_saved(memory, "it came from an email you pasted")
    text = notice.text_label.text()
    assert "Saved for your review:" in text
    assert "it came from an email you pasted" in text
    view.mark_memory_rejected(memory.id)
    assert "Rejected:" in notice.text_label.text()


def test_a_saved_fact_shows_no_reason(qtbot: QtBot, store: Store) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    memory = store.memories.add("My sister is called Ana", source="remember")
    notice = view.show_memory_saved(memory, None)
    assert notice.text_label.text().startswith("<b>Remembered:</b>")
    assert "(" not in notice.text_label.text()


def directions(rich_text: str) -> dict[str, Qt.LayoutDirection]:
    """Each paragraph of a QLabel's rich text -> the direction Qt lays it out in."""
    document = QTextDocument()
    document.setHtml(rich_text)
    found: dict[str, Qt.LayoutDirection] = {}
    block = document.begin()
    while block.isValid():
        found[block.text()] = block.textDirection()
        block = block.next()
    return found


RTL = Qt.LayoutDirection.RightToLeft
LTR = Qt.LayoutDirection.LeftToRight


@pytest.mark.parametrize("why", [None, "it came from an email you pasted"])
def test_a_right_to_left_fact_reads_from_the_right(
    qtbot: QtBot, store: Store, why: str | None
) -> None:
    """The bug: "Remembered: <an Arabic fact>" was one left-to-right line, the fact's
    question mark and number on the wrong side of it."""
    view = TranscriptView()
    qtbot.addWidget(view)
    memory = store.memories.stage("يعمل في شركة Acme منذ 2019؟", source="remember")
    notice = view.show_memory_saved(memory, why)
    expected = {"Saved for your review:": LTR, "يعمل في شركة Acme منذ 2019؟": RTL}
    if why:
        expected[f"({why})"] = LTR
    assert directions(notice.text_label.text()) == expected
    view.mark_memory_rejected(memory.id)
    rejected = directions(notice.text_label.text())
    assert rejected["Rejected:"] == LTR and rejected["يعمل في شركة Acme منذ 2019؟"] == RTL


def test_a_left_to_right_fact_stays_on_the_labels_line(qtbot: QtBot, store: Store) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    memory = store.memories.add("Sister is called سلمى", source="remember")
    notice = view.show_memory_saved(memory, None)
    assert directions(notice.text_label.text()) == {"Remembered: Sister is called سلمى": LTR}
