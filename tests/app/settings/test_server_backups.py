"""With the memory on a server, the window's backup parts say that its backups are the
server's job: Settings ▸ Backups lists and offers nothing, no restore is possible in the app,
and Forget for good says where older copies are instead of offering to purge them."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from tests.app.conftest import WindowFactory, settle
from tests.app.memories.test_browse_actions import choose
from tests.app.memories.test_forget_and_restore import browse, confirmation
from timothy.store.engine import StoreEngine

pytestmark = pytest.mark.parametrize("store_kind", ["postgres"], indirect=True)


def test_the_backups_page_says_a_server_stores_backups_are_the_servers_job(
    qtbot: QtBot, make_window: WindowFactory, store: StoreEngine
) -> None:
    window = make_window()
    assert window.store_restore is None  # restoring into the open store is the file's
    dialog = window.open_settings("backups")
    page = dialog.backups_page
    qtbot.waitUntil(lambda: page.isVisible(), timeout=5000)
    assert page.server == store.location
    assert "backups are the server's job" in page.intro.text()
    assert store.location in page.intro.text()
    assert not page.tree.isVisible() and not page.restore_button.isVisible()
    assert not page.backup_button.isVisible() and not page.can_restore
    # Asked all the same (nothing on the page asks), the window says it and makes nothing.
    window.back_up_now()
    assert "backups are the server's job" in page.state_label.text()
    window.restore_latest_good_backup()  # the damage banner's offer: nothing to do here
    settle(qtbot, window.workers, window.network)
    assert not (window.banner.isVisible() and window.banner.kind == "error")


def test_forget_for_good_says_the_servers_backups_are_its_own_and_offers_no_purge(
    qtbot: QtBot, make_window: WindowFactory, store: StoreEngine
) -> None:
    locker = store.memories.add("The owner's gym locker code is 4471")
    window = make_window()
    browser, actions = browse(qtbot, window, locker)
    choose(qtbot, browser, locker)
    qtbot.keyClick(browser.view, Qt.Key.Key_Delete)
    dialog = confirmation(qtbot, browser)
    shown = dialog.text_shown()
    assert "its backups are the server's job" in shown
    assert dialog.purge_box is None
    with qtbot.waitSignal(actions.memories_forgotten, timeout=10_000):
        dialog.this_button.click()
    qtbot.waitUntil(lambda: browser.model.row_of(locker.id) < 0, timeout=5000)
    assert store.memories.get_many([locker.id]) == {}
    settle(qtbot, window.workers, window.network)
