"""The text box the owner types in: Enter sends, Shift+Enter starts a new line, grows with text."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFocusEvent, QFontMetrics, QKeyEvent
from PySide6.QtWidgets import QFrame, QPlainTextEdit, QSizePolicy, QWidget

MAX_VISIBLE_LINES = 10


class MessageInput(QPlainTextEdit):
    send_requested = Signal()  # Enter pressed (the composer decides whether it may send)
    focus_changed = Signal(bool)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("MessageInput")
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setTabChangesFocus(True)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self._fit()

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            modifiers = event.modifiers()
            if modifiers & Qt.KeyboardModifier.ShiftModifier:
                self.insertPlainText("\n")
                return
            if not modifiers & ~Qt.KeyboardModifier.KeypadModifier:
                self.send_requested.emit()
                return
        super().keyPressEvent(event)

    def _fit(self) -> None:
        metrics = QFontMetrics(self.font())
        # A plain-text document's height is its number of (wrapped) lines.
        needed = math.ceil(self.document().size().height())
        lines = max(1, min(MAX_VISIBLE_LINES, needed))
        self.setVerticalScrollBarPolicy(
            Qt.ScrollBarPolicy.ScrollBarAsNeeded
            if needed > MAX_VISIBLE_LINES
            else Qt.ScrollBarPolicy.ScrollBarAlwaysOff
        )
        margins = self.contentsMargins()
        height = (
            lines * metrics.lineSpacing()
            + int(2 * self.document().documentMargin())
            + margins.top()
            + margins.bottom()
            + 2
        )
        if height != self.height():
            self.setFixedHeight(height)

    def focusInEvent(self, event: QFocusEvent) -> None:
        super().focusInEvent(event)
        self.focus_changed.emit(True)

    def focusOutEvent(self, event: QFocusEvent) -> None:
        super().focusOutEvent(event)
        self.focus_changed.emit(False)
