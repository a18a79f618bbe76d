"""Help ▸ Keyboard shortcuts lists every shortcut the window has; Help ▸ About shows the
version, the data folder in use and each component's licence."""

from __future__ import annotations

import importlib.metadata

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.mainwindow.about_dialog import AboutDialog, component_names
from app.mainwindow.shortcuts_dialog import ShortcutsDialog
from tests.app.conftest import WindowFactory, settle
from timothy import __version__
from timothy.store import Store


def test_keyboard_shortcuts_lists_every_shortcut_of_the_window(
    qtbot: QtBot, make_window: WindowFactory
) -> None:
    window = make_window()
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_Slash, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: isinstance(QApplication.activeModalWidget(), ShortcutsDialog))
    dialog = QApplication.activeModalWidget()
    assert isinstance(dialog, ShortcutsDialog) and dialog.isVisible()
    shown = {keys: what for keys, what in dialog.rows}
    table = {
        dialog.table.item(r, 0).text(): dialog.table.item(r, 1).text()
        for r in range(dialog.table.rowCount())
    }
    assert table == shown
    with_keys = [a for a in window.actions() if not a.shortcut().isEmpty()]
    assert len(with_keys) >= 9
    for action in with_keys:
        assert action.shortcut().toString() in shown, action.text()
    assert shown["Ctrl+B"] == "Show or hide: Conversations"
    assert shown["Ctrl+Alt+B"] == "Show or hide: Memory pane"
    assert shown["Esc"] == "Stop the reply" and shown["Shift+Enter"]
    dialog.reject()


def test_about_shows_the_version_the_data_folder_and_the_licences(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    window = make_window()
    window.menus.about_action.trigger()
    dialog = QApplication.activeModalWidget()
    assert isinstance(dialog, AboutDialog) and dialog.isVisible()
    settle(qtbot, window.workers)  # the licences are read on a worker
    qtbot.waitUntil(lambda: dialog.loaded, timeout=5000)
    assert dialog.windowTitle() == "About Timothy"
    assert dialog.folder_labels["Your data"].text() == str(store.path.parent)
    rows = {name: (version, licence) for name, version, licence in dialog.rows()}
    required = component_names()
    assert "PySide6-Essentials" in required and "openai" in required
    for name in required:
        version, licence = rows[name]
        assert version == importlib.metadata.version(name)
        assert licence and licence != "see the package", name
    assert "LGPL" in rows["PySide6-Essentials"][1]
    assert f"Timothy {__version__}" in "".join(
        label.text() for label in dialog.findChildren(type(dialog.folder_labels["Logs"]))
    )
    dialog.reject()
