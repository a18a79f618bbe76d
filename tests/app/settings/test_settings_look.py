"""Settings shows the truth at a glance: a hint is as tall as its text (a one-line hint in a
form stood in two lines of height)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QLabel
from pytestqt.qtbot import QtBot

from app.jobs.workers import Workers
from app.settings.settings_dialog import PAGES, SettingsDialog
from tests.app.conftest import settle
from timothy.settings import Settings

KEY_HINT = "Stored only in your system keyring, never in a file."


@pytest.fixture
def dialog(qtbot: QtBot, workers: Workers) -> Iterator[SettingsDialog]:
    """The dialog in the screenshots' type (10 pt DejaVu Sans), with the key's hint read."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    before = app.font()
    app.setFont(QFont("DejaVu Sans", 10))
    try:
        widget = SettingsDialog(Settings(chat_provider="openai"), workers)
        qtbot.addWidget(widget)
        widget.show()
        qtbot.waitUntil(lambda: widget.key_state.text() == KEY_HINT, timeout=5000)
        settle(qtbot, workers)
        yield widget
    finally:
        app.setFont(before)


def wrapped_labels(dialog: SettingsDialog) -> list[QLabel]:
    return [
        label
        for label in dialog.findChildren(QLabel)
        if label.wordWrap() and label.isVisible() and label.text()
    ]


def test_every_hint_is_as_tall_as_its_text_at_the_default_and_the_least_width(
    qtbot: QtBot, dialog: SettingsDialog
) -> None:
    key = dialog.key_state
    line = key.fontMetrics().lineSpacing()
    # At the default width the key's hint fits on one line, and takes one.
    assert key.heightForWidth(key.width()) < 2 * line
    assert key.height() < 2 * line
    for width in (dialog.width(), dialog.minimumWidth()):
        dialog.resize(width, dialog.height())
        for page in PAGES:
            dialog.show_page(page)
            qtbot.wait(0)  # laid out in the events after the resize and the turn
            QApplication.processEvents()
            for label in wrapped_labels(dialog):
                needed = label.heightForWidth(label.width())
                assert abs(label.height() - needed) <= 1, (width, page, label.text())
