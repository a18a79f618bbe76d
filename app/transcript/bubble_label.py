"""The owner's words in their bubble: plain text that wraps even inside a long word.

A pasted hash, key or long address has no place where a QLabel may break its line; shown
as it is, it ran past the bubble's edge, cut off. The label shows it with places to break
(`breakable`) and copies what the owner wrote, without them.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QContextMenuEvent, QGuiApplication, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QLabel, QMenu, QWidget

from app.look.breakable import breakable, unbroken


class BubbleLabel(QLabel):
    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(True)
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self.show_plain(text)

    def show_plain(self, text: str) -> None:
        """Show `text` as written (long words given places to break)."""
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setText(breakable(text))

    def show_html(self, html: str) -> None:
        """Show rich text whose words were made `breakable` before they were marked up."""
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setText(html)

    def selected_words(self) -> str:
        """The selection as the owner wrote it: without the places to break."""
        return unbroken(self.selectedText())

    def copy_selection(self) -> None:
        if self.hasSelectedText():
            QGuiApplication.clipboard().setText(self.selected_words())

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.matches(QKeySequence.StandardKey.Copy) and self.hasSelectedText():
            self.copy_selection()
            event.accept()
            return
        super().keyPressEvent(event)

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = QMenu(self)
        copy = menu.addAction("Copy", self.copy_selection)
        copy.setEnabled(self.hasSelectedText())
        menu.addAction("Select All", lambda: self.setSelection(0, len(self.text())))
        menu.exec(event.globalPos())
