"""Opening a conversation search's result shows the message that matched: scrolled into
view, the searched words marked, the message tinted for a moment."""

from __future__ import annotations

from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.mainwindow.main_window import MainWindow
from app.transcript.message_flash import MessageFlash
from app.transcript.message_widget import MessageWidget
from app.transcript.search_hit import SearchHighlight, marked_html, spans
from tests.app.conftest import WindowFactory, settle
from timothy.store import Store

FILLER = "Here is a long answer about something else entirely. " * 12


def long_conversation(store: Store, hit_at: int, hit_role: str, hit_text: str) -> str:
    """Forty turns; turn `hit_at` (by `hit_role`) is the only one that says `hit_text`."""
    session = store.sessions.create(title="Planning")
    for number in range(40):
        question = f"Question {number}?"
        answer = f"Answer {number}. {FILLER}"
        if number == hit_at:
            if hit_role == "user":
                question = hit_text
            else:
                answer = hit_text
        store.sessions.add_message(session.id, "user", question)
        store.sessions.add_message(session.id, "assistant", answer)
    return session.id


def search_and_open(qtbot: QtBot, window: MainWindow, text: str) -> None:
    window.sidebar.search.setText(text)
    listed = window.sidebar.model.conversations
    qtbot.waitUntil(lambda: [c.message_id is not None for c in listed()] == [True], timeout=5000)
    sidebar = window.sidebar
    row = sidebar.model.row_of(sidebar.model.conversations()[0].id)
    rect = sidebar.view.visualRect(sidebar.model.index(row))
    qtbot.mouseClick(sidebar.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: window.chat.transcript.hit is not None, timeout=5000)
    settle(qtbot, window.workers)


def in_viewport(window: MainWindow, widget: MessageWidget) -> bool:
    view = window.chat.transcript
    top_left = widget.mapTo(view.viewport(), QPoint(0, 0))
    return view.viewport().rect().intersects(QRect(top_left, widget.size()))


def test_a_hit_in_a_reply_is_scrolled_to_marked_and_tinted(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    hit_text = "The night train to **Porto** leaves at 22:10.\n\n```sh\necho porto\n```"
    long_conversation(store, 12, "assistant", hit_text)
    window = make_window()
    window.resize(1200, 700)
    search_and_open(qtbot, window, "porto")
    transcript = window.chat.transcript
    hit = transcript.hit
    assert hit is not None and hit.message.content == hit_text
    # Both the prose and the code block have the word marked.
    marked = [
        selection.cursor.selectedText()
        for view in hit.marked_views()
        for selection in view.extraSelections()
    ]
    assert marked == ["Porto", "porto"]
    assert hit.count == 2
    # The view stays at the hit while the layout settles, far from the end it would open at.
    qtbot.waitUntil(lambda: in_viewport(window, hit.message), timeout=3000)
    QApplication.processEvents()
    assert in_viewport(window, hit.message)
    assert not in_viewport(window, transcript.messages[-1])
    bar = transcript.verticalScrollBar()
    assert bar.value() < bar.maximum()
    flash = hit.message.findChild(MessageFlash)
    assert flash is not None and flash.fading
    assert transcript.jump_button.isVisible(), "a way back to the newest message"
    qtbot.waitUntil(lambda: hit.message.findChild(MessageFlash) is None, timeout=6000)


def test_a_hit_in_the_owners_words_is_marked_in_the_bubble(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    long_conversation(store, 5, "user", "Can we take the ferry to Lisbon & back?")
    window = make_window()
    window.resize(1200, 700)
    search_and_open(qtbot, window, "ferry")
    hit = window.chat.transcript.hit
    assert hit is not None and hit.message.role == "user" and hit.count == 1
    label = hit.message.text_label
    assert label.textFormat() == Qt.TextFormat.RichText
    assert ">ferry</span>" in label.text() and "Lisbon &amp; back" in label.text()
    qtbot.waitUntil(lambda: in_viewport(window, hit.message), timeout=3000)
    assert not in_viewport(window, window.chat.transcript.messages[-1])


def test_opening_without_a_search_shows_the_end(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    chosen = long_conversation(store, 12, "assistant", "Porto")
    window = make_window()
    window.resize(1200, 700)
    window.open_conversation(chosen)
    settle(qtbot, window.workers)
    transcript = window.chat.transcript
    qtbot.waitUntil(lambda: in_viewport(window, transcript.messages[-1]), timeout=3000)
    assert transcript.hit is None
    assert not transcript.jump_button.isVisible()


def test_spans_and_marking_are_case_blind_and_escape_the_text() -> None:
    assert spans("Porto, PORTO and portobello", ["porto"]) == [(0, 5), (7, 12), (17, 22)]
    assert spans("ab", ["a", "ab"]) == [(0, 2)]
    marked = marked_html("<b>Porto</b>\nnext", ["porto"])
    assert "&lt;b&gt;" in marked and ">Porto</span>" in marked and "pre-wrap" in marked
    assert isinstance(SearchHighlight, type)


def test_a_second_hit_in_the_open_conversation_moves_the_marks(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    session_id = long_conversation(store, 30, "user", "What about the ferry?")
    store.sessions.add_message(session_id, "assistant", "The ferry leaves at nine.")
    window = make_window()
    window.resize(1200, 700)
    search_and_open(qtbot, window, "ferry")
    transcript = window.chat.transcript
    first = transcript.hit
    assert first is not None and first.message.role == "user"
    [reply] = [w for w in transcript.messages if w.content == "The ferry leaves at nine."]
    assert reply.message_id is not None
    transcript.reveal(reply.message_id, ["ferry"])
    assert transcript.hit is not None and transcript.hit.message is reply
    assert first.message.text_label.textFormat() == Qt.TextFormat.PlainText
    assert first.message.text_label.text() == "What about the ferry?"
    marked = [
        selection.cursor.selectedText()
        for view in transcript.hit.marked_views()
        for selection in view.extraSelections()
    ]
    assert marked == ["ferry"]


def test_clicking_the_result_of_the_open_conversation_shows_its_hit(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    chosen = long_conversation(store, 8, "assistant", "The ferry to Cacilhas runs all night.")
    window = make_window()
    window.resize(1200, 700)
    window.open_conversation(chosen)
    settle(qtbot, window.workers)
    transcript = window.chat.transcript
    qtbot.waitUntil(lambda: in_viewport(window, transcript.messages[-1]), timeout=3000)
    search_and_open(qtbot, window, "cacilhas")
    hit = transcript.hit
    assert hit is not None and hit.message.content.startswith("The ferry to Cacilhas")
    qtbot.waitUntil(lambda: in_viewport(window, hit.message), timeout=3000)
