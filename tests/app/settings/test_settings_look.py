"""Settings shows the truth at a glance: a hint is as tall as its text (a one-line hint in a
form stood in two lines of height), and a greyed-out field looks greyed out (the server's
fields, off while the memory lives in a file, looked ready to type in)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QLineEdit
from pytestqt.qtbot import QtBot

from app.jobs.workers import Workers
from app.look import theme
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


def field_background(edit: QLineEdit) -> QColor:
    """The colour painted inside the field, right of any text (placeholders start left)."""
    image = edit.grab().toImage()
    return image.pixelColor(image.width() - 6, image.height() // 2)


@pytest.mark.parametrize("scheme", [Qt.ColorScheme.Light, Qt.ColorScheme.Dark])
def test_greyed_server_fields_look_greyed(
    qtbot: QtBot, workers: Workers, qapp: QApplication, scheme: Qt.ColorScheme
) -> None:
    theme.apply(qapp, scheme=scheme)
    try:
        widget = SettingsDialog(Settings(), workers)  # the memory lives in a file
        qtbot.addWidget(widget)
        widget.show_page("storage")
        widget.show()
        settle(qtbot, workers)
        page = widget.storage_page
        address = page.url_edit
        assert not address.isEnabled()
        greyed = field_background(address)
        palette = address.palette()
        window = palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.Window)
        # Greyed: the window's colour behind it, and its example no brighter than greyed text.
        assert greyed == window
        assert palette.color(
            QPalette.ColorGroup.Disabled, QPalette.ColorRole.PlaceholderText
        ) == palette.color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)

        page.server_button.setChecked(True)  # a server: its fields are to fill in
        qtbot.waitUntil(address.isEnabled, timeout=2000)
        ready = field_background(address)
        assert ready == palette.color(QPalette.ColorGroup.Active, QPalette.ColorRole.Base)
        assert ready != greyed
    finally:
        theme.apply(qapp, scheme=Qt.ColorScheme.Light)
