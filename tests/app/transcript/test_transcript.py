"""The transcript renders a streamed reply from plain provider events: Markdown, code blocks in
monospace with a copy button, repaints on a timer rather than per token."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontInfo, QGuiApplication, QTextDocument, QTextOption
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.transcript.code_block import CodeBlock
from app.transcript.markdown_blocks import PROSE_PART_CHARS, Segment, split_markdown
from app.transcript.prose_view import ProseView
from app.transcript.transcript_view import TranscriptView
from timothy.providers.base import TextDelta
from timothy.store import Store

REPLY = (
    "Here is how to read a file:\n\n"
    "```python\n"
    "with open('notes.txt') as handle:\n"
    "    for line in handle:\n"
    "        print(line)\n"
    "```\n\n"
    "It **streams** the file.\n"
)


def stream(view: TranscriptView, text: str, size: int = 3) -> int:
    """Feed `text` as TextDelta events, as the chat turn would; returns the event count."""
    events = [TextDelta(text[i : i + size]) for i in range(0, len(text), size)]
    for event in events:
        view.append_text(event.text)
    return len(events)


def test_markdown_splits_prose_and_fenced_code() -> None:
    assert split_markdown(REPLY) == [
        Segment("prose", "Here is how to read a file:"),
        Segment(
            "code",
            "with open('notes.txt') as handle:\n    for line in handle:\n        print(line)",
            "python",
        ),
        Segment("prose", "It **streams** the file."),
    ]


def test_an_unclosed_fence_is_code_still_arriving() -> None:
    assert split_markdown("Look:\n```sh\nls -l") == [
        Segment("prose", "Look:"),
        Segment("code", "ls -l", "sh", closed=False),
    ]
    assert split_markdown("inline ```not a fence``` here") == [
        Segment("prose", "inline ```not a fence``` here")
    ]


def test_long_prose_is_cut_into_parts_only_where_a_paragraph_starts_anew() -> None:
    paragraph = "Some words with **bold** and `code` in them, said at length.\n\n"
    opening = paragraph * (PROSE_PART_CHARS // len(paragraph) + 1)
    rest = "- an item\n\n- a loose item\n\n  indented, still the item\n\n> quoted\n\nAfter.\n"
    segments = split_markdown(opening + rest)
    assert [s.kind for s in segments] == ["prose", "prose"]
    # not inside the list or before the quote: at the first fresh paragraph after the length
    assert segments[0].text == (opening + rest[: rest.index("After.")]).strip("\n")
    assert segments[1].text == "After."
    short = paragraph * 10
    assert split_markdown(short) == [Segment("prose", short.strip("\n"))]
    # Parts keep their text as more arrives: a streaming reply re-renders only its last part.
    longer = split_markdown((opening + rest) * 3)
    assert longer[0] == segments[0]
    assert all(len(s.text) < 2 * PROSE_PART_CHARS for s in longer)


def test_streamed_reply_is_rendered_as_markdown_with_a_code_block(qtbot: QtBot) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    view.add_user_message("How do I read a file?")
    view.begin_reply()
    deltas = stream(view, REPLY)
    qtbot.waitUntil(lambda: view.messages[-1].content == REPLY, timeout=3000)
    view.end_reply()
    reply = view.messages[-1]
    assert reply.role == "assistant"
    parts = reply.markdown.parts
    assert [type(part) for part in parts] == [ProseView, CodeBlock, ProseView]
    code = parts[1]
    assert isinstance(code, CodeBlock)
    assert code.language_label.text() == "python"
    assert code.body.toPlainText().startswith("with open('notes.txt')")
    assert QFontInfo(code.body.font()).fixedPitch()
    prose = parts[2]
    assert isinstance(prose, ProseView)
    assert "streams" in prose.toPlainText() and "**" not in prose.toPlainText()
    # Painted on the repaint timer, not once per delta.
    assert 1 <= view.flushes < deltas


def test_code_copy_button_puts_the_code_on_the_clipboard(qtbot: QtBot) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.begin_reply()
    view.append_text(REPLY)
    view.end_reply()
    code = view.messages[-1].markdown.code_blocks()[0]
    with qtbot.waitSignal(code.code_copied):
        code.copy_button.click()
    assert QGuiApplication.clipboard().text() == code.code
    assert code.copy_button.text() == "Copied"


def test_copy_message_copies_the_markdown_source(qtbot: QtBot) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.begin_reply()
    view.append_text(REPLY)
    view.end_reply()
    reply = view.messages[-1]
    with qtbot.waitSignal(view.message_copied) as copied:
        reply.copy_button.click()
    assert copied.args == [REPLY]
    assert QGuiApplication.clipboard().text() == REPLY


def test_user_and_assistant_turns_look_different(qtbot: QtBot) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    user = view.add_user_message("Hello there")
    view.begin_reply()
    view.append_text("Hi!")
    reply = view.end_reply()
    assert reply is not None
    assert user.bubble.objectName() == "UserBubble"
    assert not hasattr(reply, "bubble")
    QApplication.processEvents()
    # The owner's bubble sits on the right, the reply starts on the left.
    assert (
        user.bubble.mapTo(view.column, user.bubble.rect().topLeft()).x()
        > reply.markdown.mapTo(view.column, reply.markdown.rect().topLeft()).x()
    )


def test_a_long_word_in_the_owners_message_wraps_inside_its_bubble(qtbot: QtBot) -> None:
    """A pasted token with no place to break (a hash, a key) is shown whole on several
    lines, never cut off at the bubble's edge, and is copied back as it was written."""
    token = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08" * 3
    view = TranscriptView()
    qtbot.addWidget(view)
    view.resize(700, 600)
    view.show()
    user = view.add_user_message(f"My key is {token} please keep it")
    qtbot.waitExposed(view)
    QApplication.processEvents()
    label = user.text_label
    room = label.contentsRect().width()
    laid_out = QTextDocument()  # as the label lays it out: lines break between words only
    laid_out.setDefaultTextOption(QTextOption(Qt.AlignmentFlag.AlignLeft))
    laid_out.setDefaultFont(label.font())
    laid_out.setDocumentMargin(0)
    laid_out.setPlainText(label.text())
    laid_out.setTextWidth(room)
    assert laid_out.idealWidth() <= room
    assert user.bubble.geometry().right() <= view.column.width()

    label.setFocus()
    label.setSelection(0, len(label.text()))
    qtbot.keyClick(label, Qt.Key.Key_C, Qt.KeyboardModifier.ControlModifier)
    assert QGuiApplication.clipboard().text() == f"My key is {token} please keep it"


def test_a_stopped_reply_keeps_its_text_and_says_so(qtbot: QtBot) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    view.begin_reply()
    view.append_text("The first half")
    reply = view.end_reply("Stopped. What arrived is kept.")
    assert reply is not None
    assert reply.content == "The first half"
    assert not reply.note_label.isHidden()
    assert "Stopped" in reply.note_label.text()


def test_only_the_last_finished_reply_offers_regenerate(qtbot: QtBot) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    for text in ("one", "two"):
        view.add_user_message(text)
        view.begin_reply()
        view.append_text(f"reply {text}")
        assert view.messages[-1].regenerate_button.isHidden(), "no regenerate while streaming"
        view.end_reply()
    first, second = (w for w in view.messages if w.role == "assistant")
    assert first.regenerate_button.isHidden()
    assert not second.regenerate_button.isHidden()
    with qtbot.waitSignal(view.regenerate_requested):
        second.regenerate_button.click()


def test_remembered_notice_offers_undo(qtbot: QtBot, store: Store) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    memory = store.memories.add("My sister is called Ana", source="remember")
    view.begin_reply()
    view.append_text("Noted.")
    view.end_reply()
    notice = view.show_memory_saved(memory)
    assert "Remembered:" in notice.text_label.text()
    assert "My sister is called Ana" in notice.text_label.text()
    with qtbot.waitSignal(view.memory_undo_requested) as undo:
        notice.action_button.click()
    assert undo.args == [memory]
    view.mark_memory_rejected(memory.id)
    assert "Rejected:" in notice.text_label.text() and "Forgotten" not in notice.text_label.text()
    assert "not proposed again" in notice.toolTip()
    assert notice.action_button.isHidden()


def test_staged_facts_badge_leads_to_the_queue(qtbot: QtBot) -> None:
    view = TranscriptView()
    qtbot.addWidget(view)
    notice = view.show_facts_staged(["01A", "01B"])
    assert "2 new facts to confirm" in notice.text_label.text()
    with qtbot.waitSignal(view.staged_review_requested):
        notice.action_button.click()
