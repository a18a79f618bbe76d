"""Browse acts on its selection as the queue does: the same keys (C, E, R, A), a context menu
with the same actions, and counts that say what they count and stay right after each change."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtGui import QAction, QContextMenuEvent, QTextDocument
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.jobs.workers import Workers
from app.look.time_text import exact_time
from app.mainwindow.main_window import MEMORY_MIN_WIDTH
from app.memories.memory_browser import MemoryBrowser
from app.memories.memory_pane import MemoryPane
from tests.app.conftest import WindowFactory, settle
from timothy.store import Memory, MemoryStatus, Store


@pytest.fixture
def pane(qtbot: QtBot, store: Store, workers: Workers) -> Iterator[MemoryPane]:
    widget = MemoryPane(store, workers, title_of=lambda _s: None)
    qtbot.addWidget(widget)
    widget.resize(440, 800)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    widget.close_store_events()


def open_browse(qtbot: QtBot, pane: MemoryPane, workers: Workers) -> MemoryBrowser:
    pane.start()
    settle(qtbot, workers)
    browser = pane.browser
    assert browser is not None
    pane.tabs.setCurrentWidget(browser)
    return browser


def choose(qtbot: QtBot, browser: MemoryBrowser, memory: Memory) -> None:
    """Click the memory's row, with the keyboard focus on the list."""
    row = browser.model.row_of(memory.id)
    assert row >= 0
    rect = browser.view.visualRect(browser.model.index(row))
    qtbot.mouseClick(browser.view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    browser.view.setFocus()
    qtbot.waitUntil(browser.view.hasFocus, timeout=2000)
    assert [m.id for m in browser.selected_memories()] == [memory.id]


def status_of(store: Store, memory: Memory) -> MemoryStatus:
    return store.memories.get(memory.id).status


def test_the_queues_keys_work_on_the_browse_selection(
    qtbot: QtBot, store: Store, pane: MemoryPane, workers: Workers
) -> None:
    proposal = store.memories.stage("Likes green tea")
    another = store.memories.stage("Hates cats")
    fact = store.memories.add("Lives in Porto")
    old = store.memories.add("Works at Acme")
    browser = open_browse(qtbot, pane, workers)
    actions = pane.memory_actions
    assert actions is not None

    choose(qtbot, browser, proposal)
    with qtbot.waitSignal(actions.memory_confirmed, timeout=5000):
        qtbot.keyClick(browser.view, Qt.Key.Key_C)
    assert status_of(store, proposal) is MemoryStatus.ACTIVE

    choose(qtbot, browser, fact)  # C on an active memory: still true
    with qtbot.waitSignal(actions.memory_reconfirmed, timeout=5000):
        qtbot.keyClick(browser.view, Qt.Key.Key_C)

    choose(qtbot, browser, another)
    with qtbot.waitSignal(actions.memory_rejected, timeout=5000):
        qtbot.keyClick(browser.view, Qt.Key.Key_R)
    assert status_of(store, another) is MemoryStatus.REJECTED

    choose(qtbot, browser, old)
    with qtbot.waitSignal(actions.memory_archived, timeout=5000):
        qtbot.keyClick(browser.view, Qt.Key.Key_A)
    assert status_of(store, old) is MemoryStatus.ARCHIVED

    # A key that does not apply (reject an archived memory) changes nothing.
    qtbot.keyClick(browser.view, Qt.Key.Key_R)
    settle(qtbot, workers)
    assert status_of(store, old) is MemoryStatus.ARCHIVED

    choose(qtbot, browser, fact)
    qtbot.keyClick(browser.view, Qt.Key.Key_E)
    editor = browser.detail.editor
    assert editor is not None and editor.isVisible()
    assert editor.content_edit.toPlainText() == "Lives in Porto"
    editor.content_edit.setPlainText("Lives in Lisbon")
    with qtbot.waitSignal(actions.memory_superseded, timeout=5000) as edited:
        editor.buttons.button(editor.buttons.StandardButton.Save).click()
    assert status_of(store, fact) is MemoryStatus.SUPERSEDED
    assert edited.args[0].content == "Lives in Lisbon"

    # Typing in the search box is only typing.
    browser.search.setFocus()
    qtbot.keyClicks(browser.search, "ca")
    settle(qtbot, workers)
    assert browser.search.text() == "ca"
    assert status_of(store, proposal) is MemoryStatus.ACTIVE


def context_menu_on(qtbot: QtBot, browser: MemoryBrowser, memory: Memory) -> dict[str, QAction]:
    rect = browser.view.visualRect(browser.model.index(browser.model.row_of(memory.id)))
    viewport = browser.view.viewport()
    where = rect.center()
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, where, viewport.mapToGlobal(where))
    QApplication.sendEvent(viewport, event)
    menu = browser.context_menu
    assert menu is not None
    qtbot.waitUntil(menu.isVisible, timeout=2000)
    return {action.objectName(): action for action in menu.actions()}


def test_the_context_menu_offers_the_same_actions_where_they_apply(
    qtbot: QtBot, store: Store, pane: MemoryPane, workers: Workers
) -> None:
    proposal = store.memories.stage("Likes green tea")
    fact = store.memories.add("Lives in Porto")
    browser = open_browse(qtbot, pane, workers)
    actions = pane.memory_actions
    assert actions is not None

    offered = context_menu_on(qtbot, browser, proposal)
    assert list(offered) == ["confirm", "edit", "reject", "archive", "restore", "forget"]
    enabled = {name for name, action in offered.items() if action.isEnabled()}
    assert enabled == {"confirm", "edit", "reject", "forget"}
    assert [m.id for m in browser.selected_memories()] == [proposal.id]  # it chose the row
    assert browser.context_menu is not None
    browser.context_menu.close()

    offered = context_menu_on(qtbot, browser, fact)
    enabled = {name for name, action in offered.items() if action.isEnabled()}
    assert enabled == {"confirm", "edit", "archive", "forget"}
    assert offered["confirm"].text() == "Still true"
    with qtbot.waitSignal(actions.memory_archived, timeout=5000):
        offered["archive"].trigger()
    assert status_of(store, fact) is MemoryStatus.ARCHIVED

    # Both selected: each action applies to the memories it can.
    browser.view.selectAll()
    both = browser.menu_for(browser.selected_memories())
    labels = {action.objectName(): action.text() for action in both.actions()}
    assert labels["confirm"] == "Confirm" and labels["archive"] == "Archive"
    assert not next(a for a in both.actions() if a.objectName() == "edit").isEnabled()


def test_counts_stay_right_after_an_edit_in_a_search(
    qtbot: QtBot, store: Store, pane: MemoryPane, workers: Workers
) -> None:
    """The bug: "2 matches" while three rows showed after an edit made a new version."""
    store.memories.add("Drinks green tea")
    tea = store.memories.add("Drinks black tea in the morning")
    store.memories.add("Lives in Porto")
    browser = open_browse(qtbot, pane, workers)
    browser.search.setText("tea")
    browser.apply_query()
    settle(qtbot, workers)
    assert browser.model.rowCount() == 2 and browser.count_label.text() == "2 matches"
    browser.select_memory(tea.id)
    qtbot.waitUntil(
        lambda: browser.detail.memory is not None and browser.detail.memory.id == tea.id,
        timeout=5000,
    )
    editor = browser.detail.open_editor(tea)
    editor.content_edit.setPlainText("Drinks black tea, never after noon")
    editor.buttons.button(editor.buttons.StandardButton.Save).click()
    qtbot.waitUntil(lambda: browser.model.rowCount() == 3, timeout=5000)
    settle(qtbot, workers)
    assert browser.count_label.text() == "3 matches"


def test_a_search_with_no_matches_leaves_no_memory_in_the_history(
    qtbot: QtBot, store: Store, pane: MemoryPane, workers: Workers
) -> None:
    """The bug: "No matches", yet the history below still showed the memory of the search
    before, with Archive and Forget for good acting on a memory the list did not show."""
    store.memories.add("Lives in Porto")
    browser = open_browse(qtbot, pane, workers)
    qtbot.waitUntil(lambda: browser.detail.memory is not None, timeout=5000)
    browser.search.setText("NEAR(lisbon sea)")
    browser.apply_query()
    settle(qtbot, workers)
    assert browser.count_label.text() == "No matches"
    assert browser.detail.memory is None
    assert not any(
        button.isVisible() and button.isEnabled() for button in browser.detail.buttons.values()
    )


def test_a_status_filter_drops_what_no_longer_matches_and_recounts(
    qtbot: QtBot, store: Store, pane: MemoryPane, workers: Workers
) -> None:
    keep = store.memories.add("Lives in Porto")
    gone = store.memories.add("Works at Acme")
    store.memories.stage("Likes green tea")
    browser = open_browse(qtbot, pane, workers)
    assert browser.count_label.text() == "2 active · 3 in all"
    browser.status_filter.setCurrentIndex(browser.status_filter.findData(MemoryStatus.ACTIVE))
    settle(qtbot, workers)
    assert browser.count_label.text() == "2 active" and browser.model.rowCount() == 2
    choose(qtbot, browser, gone)
    assert pane.memory_actions is not None
    with qtbot.waitSignal(pane.memory_actions.memory_archived, timeout=5000):
        qtbot.keyClick(browser.view, Qt.Key.Key_A)
    qtbot.waitUntil(lambda: browser.count_label.text() == "1 active", timeout=5000)
    assert [m.id for m in browser.model.memories] == [keep.id]


def test_the_status_bar_and_browse_say_what_they_count(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    store.memories.add("Lives in Porto")
    store.memories.add("Works at Acme")
    store.memories.stage("Likes green tea")
    rejected = store.memories.stage("Hates cats")
    store.memories.reject(rejected.id)
    window = make_window()
    browser = window.memory_pane.browser
    assert browser is not None
    qtbot.waitUntil(
        lambda: window.status.memory_label.text() == "2 active · 4 in all · 1 to confirm",
        timeout=5000,
    )
    assert "every record kept" in window.status.memory_label.toolTip()
    qtbot.waitUntil(lambda: browser.count_label.text() == "2 active · 4 in all", timeout=5000)
    assert window.memory_pane.queue is not None
    window.memory_pane.queue.select_all()
    window.memory_pane.queue.buttons["confirm"].click()
    qtbot.waitUntil(
        lambda: window.status.memory_label.text() == "3 active · 4 in all", timeout=5000
    )
    qtbot.waitUntil(lambda: browser.count_label.text() == "3 active · 4 in all", timeout=5000)


def same_line(document: QTextDocument, phrase: str) -> bool:
    """Whether `phrase` is laid out on one line (not wrapped inside) in `document`."""
    document.size()  # lays the document out
    found = document.find(phrase)
    assert not found.isNull(), phrase
    block = found.block()
    layout = block.layout()
    first = layout.lineForTextPosition(found.selectionStart() - block.position())
    last = layout.lineForTextPosition(found.selectionEnd() - 1 - block.position())
    return bool(first.lineNumber() == last.lineNumber())


# 340 is the pane's minimum width in the window; offscreen fonts are narrower than a
# desktop's, so 300 and 260 stand in for it with larger fonts (where the old header broke).
@pytest.mark.parametrize("width", [440, 340, 300, 260])
def test_the_history_gets_the_room_it_needs_and_its_headers_never_break(
    qtbot: QtBot, store: Store, workers: Workers, width: int
) -> None:
    first = store.memories.add("Prefers aisle seats", type="preference", entities=["travel"])
    second = store.memories.supersede(first.id, "Prefers window seats on long flights")
    third = store.memories.supersede(second.id, "Prefers window seats, except on night flights")
    pane = MemoryPane(store, workers, title_of=lambda _s: None)
    qtbot.addWidget(pane)
    pane.resize(width, 760)  # about the pane's height in a 1280x800 window
    pane.show()
    qtbot.waitExposed(pane)
    browser = open_browse(qtbot, pane, workers)
    with qtbot.waitSignal(browser.detail.chain_shown, timeout=5000):
        browser.show_memory(second.id)
    settle(qtbot, workers)
    chain = browser.detail.chain_view
    qtbot.waitUntil(lambda: len(chain.chain) == 3, timeout=5000)
    QApplication.processEvents()
    # The three versions show whole: the history does not scroll ...
    assert chain.verticalScrollBar().maximum() == 0
    # ... and the list still shows its three rows.
    last_row = browser.view.visualRect(browser.model.index(2))
    assert browser.view.viewport().rect().contains(last_row)
    # Each header reads as one piece: "version 1 of 3", then the date, never split.
    document = chain.document()
    for number in (1, 2, 3):
        assert same_line(document, f"version {number} of 3")
    for memory in (first, second, third):
        assert same_line(document, exact_time(memory.created_at))
    pane.close_store_events()


def test_dragging_the_divider_is_respected(
    qtbot: QtBot, store: Store, pane: MemoryPane, workers: Workers
) -> None:
    first = store.memories.add("Prefers aisle seats")
    store.memories.supersede(first.id, "Prefers window seats")
    browser = open_browse(qtbot, pane, workers)
    settle(qtbot, workers)
    browser.splitter.moveSplitter(120, 1)  # as a drag does
    browser.splitter.splitterMoved.emit(120, 1)
    sizes = browser.splitter.sizes()
    browser.share_height()
    assert browser.splitter.sizes() == sizes


def test_at_the_windows_minimum_size_nothing_of_the_pane_is_cut_off(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    store.memories.add("Lives in Porto")
    window = make_window()
    window.resize(window.minimumSize())
    qtbot.waitUntil(lambda: window.size() == window.minimumSize(), timeout=2000)
    browser = window.memory_pane.browser
    assert browser is not None
    window.memory_pane.tabs.setCurrentWidget(browser)
    qtbot.waitUntil(lambda: browser.count_label.text() == "1 active · 1 in all", timeout=5000)
    QApplication.processEvents()
    central = window.centralWidget()
    for widget in (window.memory_pane, browser.count_label, window.status.consolidation_label):
        right = widget.mapTo(window, widget.rect().topRight()).x()
        assert right < window.width(), widget
    pane_right = window.memory_pane.mapTo(central, window.memory_pane.rect().topRight()).x()
    assert pane_right < central.width()
    label = browser.count_label
    assert label.width() >= label.fontMetrics().horizontalAdvance(label.text())


def test_an_unchanged_edit_offers_no_save(
    qtbot: QtBot, store: Store, pane: MemoryPane, workers: Workers
) -> None:
    """The bug: Save on an active memory with nothing changed added a copy of it to its
    history, a version that said the same."""
    tea = store.memories.add("Drinks green tea", entities=["Tea"])
    browser = pane.browser
    pane.tabs.setCurrentWidget(browser)
    qtbot.waitUntil(lambda: browser.model.rowCount() == 1, timeout=5000)
    editor = browser.detail.open_editor(tea)
    save = editor.buttons.button(editor.buttons.StandardButton.Save)
    assert not save.isEnabled()
    editor.content_edit.setPlainText("Drinks green tea daily")
    assert save.isEnabled()
    editor.content_edit.setPlainText("  Drinks green tea  ")  # the same once trimmed
    assert not save.isEnabled()
    editor.type_combo.setCurrentIndex(editor.type_combo.findData("preference"))
    assert save.isEnabled()
    editor.type_combo.setCurrentIndex(editor.type_combo.findData("semantic"))
    editor.entities_edit.setText("Tea, Green tea")
    assert save.isEnabled()
    editor.reject()
    staged = store.memories.stage("Likes oolong")
    # Staged, Save means "Save and confirm": offered as it is.
    editor = browser.detail.open_editor(staged)
    assert editor.buttons.button(editor.buttons.StandardButton.Save).isEnabled()
    editor.reject()
    settle(qtbot, workers)
    assert [m.content for m in store.memories.chain(tea.id)] == ["Drinks green tea"]


@pytest.mark.parametrize("status", ["active", "staged", "archived"])
def test_the_detail_buttons_keep_their_labels_whole_in_the_narrowest_pane(
    qtbot: QtBot, store: Store, pane: MemoryPane, workers: Workers, status: str
) -> None:
    """At the pane's minimum width the buttons under a memory's history do not fit on one
    line: they wrap onto a second, each as wide as its label needs and inside the pane,
    rather than being squeezed until "Forget for good…" reads "orget for goo"."""
    if status == "staged":
        memory = store.memories.stage("Likes green tea")
    else:
        memory = store.memories.add("Likes green tea")
        if status == "archived":
            store.memories.archive(memory.id)
    pane.resize(MEMORY_MIN_WIDTH, 800)
    browser = open_browse(qtbot, pane, workers)
    browser.show_memory(memory.id)
    detail = browser.detail
    qtbot.waitUntil(lambda: detail.memory is not None and detail.memory.id == memory.id)
    settle(qtbot, workers)
    shown = [button for button in detail.buttons.values() if button.isVisible()]
    assert len(shown) >= 2
    for button in shown:
        assert button.width() >= button.minimumSizeHint().width(), button.text()
        where = QRect(button.mapTo(pane, QPoint(0, 0)), button.size())
        assert pane.rect().contains(where), button.text()
    for number, button in enumerate(shown):
        for other in shown[number + 1 :]:
            assert not button.geometry().intersects(other.geometry())


def test_down_from_the_search_goes_into_the_list_and_escape_empties_the_search(
    qtbot: QtBot, store: Store, pane: MemoryPane, workers: Workers
) -> None:
    store.memories.add("Lives in Porto")
    store.memories.add("Likes green tea")
    browser = open_browse(qtbot, pane, workers)
    qtbot.waitUntil(lambda: browser.model.rowCount() == 2, timeout=5000)
    browser.focus_search()
    qtbot.waitUntil(browser.search.hasFocus, timeout=2000)
    qtbot.keyClicks(browser.search, "tea")
    qtbot.keyClick(browser.search, Qt.Key.Key_Escape)
    assert browser.search.text() == ""
    qtbot.keyClick(browser.search, Qt.Key.Key_Down)
    qtbot.waitUntil(browser.view.hasFocus, timeout=2000)
    assert browser.view.currentIndex().row() == 0
    assert len(browser.selected_memories()) == 1
