"""Exporting a conversation as Markdown from the window: the list's context menu and File ▸
Export conversation, a save dialog, the file written on a worker."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFileDialog
from pytestqt.qtbot import QtBot

from app.mainwindow.main_window import MainWindow
from tests.app.conftest import WindowFactory, settle
from timothy.chat.export import conversation_markdown
from timothy.store import Store


def add_conversation(store: Store, title: str) -> str:
    session = store.sessions.create(title=title)
    store.sessions.add_message(session.id, "user", "How do I list files?")
    store.sessions.add_message(session.id, "assistant", "Like this:\n\n```sh\nls -la\n```")
    return session.id


def save_as(qtbot: QtBot, window: MainWindow, dialog: QFileDialog | None, target: Path) -> None:
    assert dialog is not None and window.file_dialog is dialog
    assert dialog.acceptMode() == QFileDialog.AcceptMode.AcceptSave
    dialog.selectFile(str(target))
    dialog.accept()
    qtbot.waitUntil(target.exists, timeout=5000)
    settle(qtbot, window.workers)


def test_file_menu_exports_the_open_conversation(
    qtbot: QtBot, make_window: WindowFactory, store: Store, tmp_path: Path
) -> None:
    chosen = add_conversation(store, "Listing files")
    window = make_window()
    window.open_conversation(chosen)
    settle(qtbot, window.workers)
    action = window.menus.export_conversation_action
    assert action.shortcut().toString() == "Ctrl+Shift+E"
    action.trigger()
    dialog = window.file_dialog
    assert dialog is not None
    assert dialog.selectedFiles()[0].endswith(".md")
    assert "Listing-files" in dialog.selectedFiles()[0], "named after the conversation"
    target = tmp_path / "listing.md"
    save_as(qtbot, window, dialog, target)
    text = target.read_text(encoding="utf-8")
    assert text == conversation_markdown(store, chosen)
    assert text.startswith("# Listing files\n") and "```sh\nls -la\n```" in text
    assert window.banner.isVisible() and str(target) in window.banner.text_label.text()


def test_the_lists_context_menu_exports_that_conversation(
    qtbot: QtBot, make_window: WindowFactory, store: Store, tmp_path: Path
) -> None:
    add_conversation(store, "Other one")
    chosen = add_conversation(store, "Pick me")
    window = make_window()
    sidebar = window.sidebar
    rect = sidebar.view.visualRect(sidebar.model.index(sidebar.model.row_of(chosen)))

    def choose_export() -> None:
        menu = sidebar.menu
        if menu is None or not menu.isVisible():
            QTimer.singleShot(20, choose_export)
            return
        [export] = [a for a in menu.actions() if a.text() == "Export as Markdown…"]
        menu.setActiveAction(export)
        qtbot.keyClick(menu, Qt.Key.Key_Return)

    QTimer.singleShot(0, choose_export)
    sidebar.view.customContextMenuRequested.emit(rect.center())
    target = tmp_path / "pick.md"
    save_as(qtbot, window, window.file_dialog, target)
    assert target.read_text(encoding="utf-8").startswith("# Pick me\n")


def test_a_new_chat_has_nothing_to_export(qtbot: QtBot, make_window: WindowFactory) -> None:
    window = make_window()
    window.menus.export_conversation_action.trigger()
    assert window.file_dialog is None
    assert "Open a conversation" in window.banner.text_label.text()
