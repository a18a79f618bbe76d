"""The transcript says why a remembered fact waits for review instead of being saved."""

from __future__ import annotations

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
