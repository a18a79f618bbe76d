"""A word-wrapped label as tall as its text at the width it was given, no taller.

A word-wrapped QLabel's size hint guesses a width of its own (about two lines for a
sentence), and a form (QFormLayout) with room to spare gives each row its hint's height:
a hint that fits on one line stood in two lines of height, a gap above and below it. This
label's hint is the height its text needs at its width (once it has one), asked again
whenever that width changes; with no text yet, no height at all.
"""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QWidget


class WrappedLabel(QLabel):
    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setWordWrap(True)

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        if not self.text():
            return QSize(hint.width(), 0)  # a hint with nothing to say yet takes no line
        if self.width() > 0:
            hint.setHeight(self.heightForWidth(self.width()))
        return hint

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return hint if self.text() else QSize(hint.width(), 0)

    def heightForWidth(self, width: int) -> int:
        return super().heightForWidth(width) if self.text() else 0

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # the height its text needs has changed with the width
