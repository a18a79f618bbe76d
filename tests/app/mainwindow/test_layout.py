"""Every size the window allows lays out whole: at its minimum size, at 800x600 and at a
roomy size, each shown widget that matters lies inside the window, above the status bar,
beside (not over) the others, and at least as large as it needs to be read; panes that do
not fit beside the chat are hidden (their View ticks say so) and come back with room."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QApplication, QLabel, QWidget
from pytestqt.qtbot import QtBot

from app.mainwindow.main_window import MainWindow
from tests.app.conftest import WindowFactory, settle
from tests.fakes.openai_server import OpenAIServer
from timothy.settings import Settings
from timothy.store import Store

LONG_TITLE = "Weekend in Porto with the whole family, the dog and the grandparents"


def rect_in_window(window: MainWindow, widget: QWidget) -> QRect:
    return QRect(widget.mapTo(window, QPoint(0, 0)), widget.size())


def lay_out(qtbot: QtBot, window: MainWindow, width: int, height: int) -> None:
    window.resize(width, height)
    qtbot.waitUntil(lambda: window.size().toTuple() == (width, height), timeout=5000)
    relayout()


def relayout() -> None:
    """Deliver the posted layout requests (a pane shown or hidden re-lays the splitter)."""
    for _ in range(3):
        QApplication.processEvents()


def assert_laid_out_whole(window: MainWindow) -> None:
    inside = window.rect()
    status = rect_in_window(window, window.status)
    assert inside.contains(status), "the status bar is cut off"
    memory = window.memory_pane
    key: list[QWidget] = [
        window.menuBar(),
        window.chat.title_label,
        window.chat.composer.frame,
        window.chat.composer.hint,
        window.chat.composer.button,
    ]
    if memory.isVisible():
        key += [memory, memory.tabs.tabBar()]
    if window.sidebar.isVisible():
        key.append(window.sidebar)
    for widget in key:
        where = rect_in_window(window, widget)
        name = widget.objectName() or type(widget).__name__
        assert inside.contains(where), f"{name} {where} is outside the window {inside}"
        if widget is not window.menuBar():
            assert where.bottom() < status.top(), f"{name} {where} runs into the status bar"
    # The chat header's parts lie inside the chat pane, side by side; the title is shortened
    # with an ellipsis rather than cut.
    chat = rect_in_window(window, window.chat)
    header = [
        w
        for w in (
            window.chat.conversations_toggle,
            window.chat.title_label,
            window.chat.model_picker,
            window.chat.memory_toggle,
        )
        if w.isVisible()
    ]
    for number, part in enumerate(header):
        assert chat.contains(rect_in_window(window, part)), type(part).__name__
        for other in header[number + 1 :]:
            assert not rect_in_window(window, part).intersects(rect_in_window(window, other))
    title = window.chat.title_label
    assert title.fontMetrics().horizontalAdvance(title.shown_text()) <= title.width()
    # The panes sit side by side, none over another.
    panes = [p for p in (window.sidebar, window.chat, memory) if p.isVisible()]
    for number, pane in enumerate(panes):
        for other in panes[number + 1 :]:
            assert not rect_in_window(window, pane).intersects(rect_in_window(window, other))
        assert pane.width() >= pane.minimumWidth()
    # Each tab of the memory pane shows whole, and each card in the queue its right edge.
    if memory.isVisible():
        queue = memory.queue
        if queue is not None and queue.isVisible():
            view = queue.view
            assert not view.horizontalScrollBar().isVisible()
            for row in range(queue.model.rowCount()):
                card = view.visualRect(queue.model.index(row, 0))
                assert card.right() <= view.viewport().width(), "a card runs off the pane"
        bar = memory.tabs.tabBar()
        last = bar.tabRect(bar.count() - 1)
        assert last.right() <= bar.width(), "the last memory tab is cut off"
    # Wrapped text has the height it needs; status bar items have their width.
    hint = window.chat.composer.hint
    assert hint.height() >= hint.heightForWidth(hint.width()), "the composer's hint is cut"
    for item in window.status.findChildren(QWidget):
        if item.isVisible() and item.parent() is not None and isinstance(item, QLabel):
            assert item.width() >= item.sizeHint().width(), f"{item.text()!r} is cut"
    visible_items = [
        w
        for w in (
            window.status.chat_label,
            window.status.embedding_label,
            window.status.memory_label,
            window.status.consolidation_label,
        )
        if w.isVisible()
    ]
    for item in visible_items:
        assert inside.contains(rect_in_window(window, item)), f"{item} is outside the window"
        assert item.width() >= item.sizeHint().width()
    for number, item in enumerate(visible_items):
        for other in visible_items[number + 1 :]:
            assert not rect_in_window(window, item).intersects(rect_in_window(window, other))


@pytest.fixture
def busy_window(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> MainWindow:
    """A conversation open, a fact to confirm, two lines in the composer."""
    session = store.sessions.create(title=LONG_TITLE)
    store.sessions.add_message(session.id, "user", "Plan a weekend in Porto")
    store.sessions.add_message(session.id, "assistant", "Sure. " * 80)
    for number in range(4):  # more than fit: the queue scrolls
        store.memories.stage(
            f"Is vegetarian, but eats fish when travelling ({number})",
            type="preference",
            session_id=session.id,
        )
    window = make_window(server=openai_server)
    window.open_conversation(session.id)
    settle(qtbot, window.workers, window.network)
    window.chat.composer.set_text("line one\nline two")
    return window


def test_every_size_the_window_allows_lays_out_whole(qtbot: QtBot, busy_window: MainWindow) -> None:
    window = busy_window
    smallest = (window.minimumWidth(), window.minimumHeight())
    for width, height in (smallest, (800, 600), (1380, 860)):
        lay_out(qtbot, window, width, height)
        assert_laid_out_whole(window)
    # Roomy: both panes, as the owner left them, and the whole title.
    assert window.chat.title_label.shown_text() == LONG_TITLE
    assert window.sidebar.isVisible() and window.memory_pane.isVisible()
    assert window.menus.conversations_action.isChecked()


def test_a_narrow_window_hides_a_pane_and_gives_it_back_when_wider(
    qtbot: QtBot, busy_window: MainWindow
) -> None:
    window = busy_window
    lay_out(qtbot, window, window.minimumWidth(), window.minimumHeight())
    title = window.chat.title_label
    assert title.shown_text().endswith("…") and title.text() == LONG_TITLE
    assert title.toolTip() == LONG_TITLE
    # Not room for both beside the chat: the list goes, its tick says so.
    assert window.memory_pane.isVisible() and window.sidebar.isHidden()
    assert not window.menus.conversations_action.isChecked()
    # Asking for the list makes room for it; the memory pane gives way.
    window.menus.conversations_action.trigger()
    assert window.sidebar.isVisible() and window.memory_pane.isHidden()
    assert not window.menus.memory_action.isChecked()
    relayout()
    assert_laid_out_whole(window)
    lay_out(qtbot, window, 1380, 860)
    assert window.sidebar.isVisible() and window.memory_pane.isVisible()
    assert window.menus.memory_action.isChecked()


def test_the_first_run_welcome_scrolls_at_the_minimum_size(
    qtbot: QtBot, make_window: WindowFactory
) -> None:
    window = make_window(settings=Settings())
    lay_out(qtbot, window, window.minimumWidth(), window.minimumHeight())
    welcome = window.chat.welcome
    assert window.chat.stack.currentWidget() is welcome
    inside = window.rect()
    status = rect_in_window(window, window.status)
    where = rect_in_window(window, welcome)
    assert inside.contains(where) and where.bottom() < status.top()
    assert welcome.verticalScrollBar().maximum() > 0  # taller than it is shown: it scrolls


@pytest.mark.parametrize("chat_model", [False, True])
def test_hiding_the_pane_that_has_the_keyboard_hands_it_to_the_chat(
    qtbot: QtBot, make_window: WindowFactory, openai_server: OpenAIServer, chat_model: bool
) -> None:
    """Ctrl+Alt+B while typing in the memory search, Ctrl+B in the chats' search: the
    keyboard goes on in the chat (the message box, or the welcome's Set up button), not to
    whatever Qt finds next (a status-bar button)."""
    window = make_window(server=openai_server) if chat_model else make_window()
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5000)
    wanted = window.chat.composer.input if chat_model else window.chat.welcome.settings_button
    window.focus_memory_search()
    assert window.memory_pane.isAncestorOf(QApplication.focusWidget())
    qtbot.keyClick(
        QApplication.focusWidget(),
        Qt.Key.Key_B,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier,
    )
    assert window.memory_pane.isHidden()
    assert QApplication.focusWidget() is wanted
    window.focus_conversation_search()
    assert window.sidebar.isAncestorOf(QApplication.focusWidget())
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_B, Qt.KeyboardModifier.ControlModifier)
    assert window.sidebar.isHidden()
    assert QApplication.focusWidget() is wanted


def test_tab_on_the_first_start_never_stops_on_the_welcome_page_itself(
    qtbot: QtBot, make_window: WindowFactory
) -> None:
    """Every Tab stop shows where it is: the welcome's scrolling page showed nothing."""
    window = make_window(settings=Settings())
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=5000)
    start = window.chat.welcome.settings_button
    start.setFocus(Qt.FocusReason.TabFocusReason)
    seen: list[QWidget] = []
    for _ in range(40):
        qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        focused = QApplication.focusWidget()
        if focused is start:
            break
        seen.append(focused)
    else:
        raise AssertionError(f"Tab never came back: {seen}")
    assert window.chat.welcome not in seen
    assert window.sidebar.new_button in seen  # and it does go round the window
