"""Browse holds the memories around the rows it shows, not every row it has listed: paging
through a large store once does not keep all of it for good. Rows let go are read again when
shown; the selection, the open memory and the counts survive."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import QItemSelectionModel
from pytestqt.qtbot import QtBot

from app.jobs.workers import Workers
from app.memories.memory_browse_model import HELD_ROWS, PAGE_SIZE
from app.memories.memory_browser import MemoryBrowser
from app.memories.memory_pane import MemoryPane
from tests.app.conftest import settle
from tests.app.many_memories import add_many
from timothy.store import MemoryStatus, Store

LISTED = 5_000


@pytest.fixture
def browser(qtbot: QtBot, store: Store, workers: Workers) -> Iterator[MemoryBrowser]:
    add_many(store, LISTED)
    pane = MemoryPane(store, workers, title_of=lambda _s: None)
    qtbot.addWidget(pane)
    pane.resize(440, 800)
    pane.show()
    qtbot.waitExposed(pane)
    pane.start()
    settle(qtbot, workers)
    assert pane.browser is not None
    pane.tabs.setCurrentWidget(pane.browser)
    yield pane.browser
    pane.close_store_events()


def scroll_through(qtbot: QtBot, browser: MemoryBrowser, workers: Workers) -> None:
    """To the end of the list, a page at a time as the owner's scrolling asks for them."""

    def at_the_end() -> bool:
        browser.view.scrollToBottom()
        return browser.model.exhausted and not browser.model.loading

    qtbot.waitUntil(at_the_end, timeout=20_000)
    settle(qtbot, workers)


def test_paging_through_5000_memories_holds_a_window_of_them(
    qtbot: QtBot, store: Store, browser: MemoryBrowser, workers: Workers
) -> None:
    scroll_through(qtbot, browser, workers)
    model = browser.model
    assert model.rowCount() == LISTED
    assert browser.count_label.text() == "5,000 active · 5,000 in all"
    # Before: all 5,000 memories held by the list, and kept once more by the store's cache
    # of built memories (which is recall's, not a listing's).
    assert len(model.memories) <= HELD_ROWS + PAGE_SIZE
    assert len(store.memories.known) < PAGE_SIZE
    # The rows on show are held, and what is listed is still every memory, newest first.
    last = model.rowCount() - 1
    assert model.memory_at(last) is not None
    newest = store.memories.list(limit=1, keep=False)[0]
    assert model.id_at(0) == newest.id


def test_rows_let_go_are_read_again_when_shown(
    qtbot: QtBot, store: Store, browser: MemoryBrowser, workers: Workers
) -> None:
    scroll_through(qtbot, browser, workers)
    model = browser.model
    middle = LISTED // 2
    assert model.memory_at(middle) is None  # far from the end that shows: let go
    browser.view.scrollTo(model.index(middle))
    qtbot.waitUntil(lambda: model.memory_at(middle) is not None, timeout=5000)
    expected = store.memories.get(model.id_at(middle) or "")
    assert model.index(middle).data() == expected.content
    browser.view.scrollToTop()
    qtbot.waitUntil(lambda: model.memory_at(0) is not None, timeout=5000)
    settle(qtbot, workers)
    assert len(model.memories) <= HELD_ROWS + PAGE_SIZE
    assert model.rowCount() == LISTED


def test_the_selection_and_the_open_memory_survive_rows_let_go(
    qtbot: QtBot, store: Store, browser: MemoryBrowser, workers: Workers
) -> None:
    model = browser.model
    first = model.memory_at(0)
    assert first is not None
    qtbot.waitUntil(lambda: browser.detail.memory is not None, timeout=5000)
    assert browser.detail.memory is not None and browser.detail.memory.id == first.id
    scroll_through(qtbot, browser, workers)
    # The chosen row is held wherever the list has scrolled; the history still shows it.
    assert model.memory_at(0) == first
    assert browser.detail.memory is not None and browser.detail.memory.id == first.id
    assert model.memory_at(1) is None
    # A row let go joins the selection (Ctrl+click after scrolling back): the action waits
    # for its memory, then applies to both.
    second = model.id_at(1)
    assert second is not None
    browser.view.selectionModel().select(model.index(1), QItemSelectionModel.SelectionFlag.Select)
    browser.trigger("archive")

    def archived() -> bool:
        found = store.memories.get_many([first.id, second], keep=False)
        return all(m.status is MemoryStatus.ARCHIVED for m in found.values())

    qtbot.waitUntil(archived, timeout=5000)
