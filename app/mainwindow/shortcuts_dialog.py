"""Help ▸ Keyboard shortcuts: every shortcut the window's actions carry (read from them, so
the list cannot fall behind the menus) and the composer's keys."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.look.screen_room import fitted

# Keys that belong to no menu item.
OTHER_KEYS = (
    ("Enter", "Send the message"),
    ("Shift+Enter", "New line in the message"),
    ("Esc", "Stop the reply"),
)


def shortcut_rows(actions: list[QAction]) -> list[tuple[str, str]]:
    """(keys, what they do) for each action with a shortcut, then the composer's keys."""
    rows = []
    for action in actions:
        keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        if keys:
            what = action.text().replace("&", "").rstrip("…").strip()
            if action.isCheckable():
                what = f"Show or hide: {what}"
            rows.append((keys, what))
    return rows + list(OTHER_KEYS)


class ShortcutsDialog(QDialog):
    def __init__(self, actions: list[QAction], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard shortcuts")
        self.resize(fitted(self, 440, 420))
        layout = QVBoxLayout(self)
        self.rows = shortcut_rows(actions)
        table = QTableWidget(len(self.rows), 2, self)
        table.setHorizontalHeaderLabels(["Keys", "Does"])
        table.verticalHeader().hide()
        table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        table.setSelectionMode(QTableWidget.SelectionMode.NoSelection)
        table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        header = table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for row, (keys, what) in enumerate(self.rows):
            table.setItem(row, 0, QTableWidgetItem(keys))
            table.setItem(row, 1, QTableWidgetItem(what))
        layout.addWidget(table)
        self.table = table
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
