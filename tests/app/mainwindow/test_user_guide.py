"""Help ▸ User guide (F1) shows the README's user guide, rendered, and it names every
shortcut the window has."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.jobs.workers import Workers
from app.mainwindow.user_guide_dialog import UserGuideDialog, check_user_guide, user_guide
from tests.app.conftest import WindowFactory, settle
from timothy import paths


def headings(dialog: UserGuideDialog) -> list[str]:
    found = []
    block = dialog.browser.document().begin()
    while block.isValid():
        if block.blockFormat().headingLevel():
            found.append(block.text())
        block = block.next()
    return found


def test_f1_opens_the_guide_rendered_from_the_readme(
    qtbot: QtBot, make_window: WindowFactory
) -> None:
    window = make_window()
    assert (
        window.menus.user_guide_action.shortcut()
        == QKeySequence(QKeySequence.StandardKey.HelpContents)
        or window.menus.user_guide_action.shortcut().toString() == "F1"
    )
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_F1)
    qtbot.waitUntil(lambda: isinstance(QApplication.activeModalWidget(), UserGuideDialog))
    dialog = QApplication.activeModalWidget()
    assert isinstance(dialog, UserGuideDialog)
    settle(qtbot, window.workers)
    qtbot.waitUntil(lambda: dialog.loaded, timeout=5000)
    shown = headings(dialog)
    assert shown[0] == "User guide"
    for part in ("Chatting", "Memories", "Forgetting for good", "Backups", "Settings"):
        assert part in shown
    assert "Keyboard shortcuts" in shown
    text = dialog.browser.toPlainText()
    assert "**" not in text and "## " not in text, "Markdown is rendered, not shown"
    assert "The timothy command" not in shown, "only the guide, not the whole README"
    # The guide names every shortcut the window's actions carry.
    for action in window.actions():
        keys = action.shortcut().toString()
        if keys:
            assert keys in text, f"{action.text()} ({keys}) is missing from the guide"
    dialog.reject()


def test_the_guide_is_the_readmes_section() -> None:
    readme = "# T\n\nintro\n\n## User guide\n\n### One\n\ntext\n\n## Other\n\nno\n"
    assert user_guide(readme) == "# User guide\n\n### One\n\ntext\n"
    assert user_guide("## User guide\nonly\n") == "# User guide\nonly\n"
    assert user_guide("# T\n\n## Something else\n") == ""
    assert check_user_guide().ok
    assert paths.readme_path().is_file()


def test_a_missing_readme_is_said_plainly(qtbot: QtBot, workers: Workers, tmp_path: Path) -> None:
    dialog = UserGuideDialog(tmp_path / "README.md", workers)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.loaded, timeout=5000)
    text = dialog.browser.toPlainText()
    assert text.startswith("The user guide could not be read")
    assert "README.md that comes with Timothy's source" in text
