"""Editing a sent message in place: its text in a box, Cancel and Send (Enter sends,
Shift+Enter starts a new line, Escape cancels)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)


class MessageEditor(QWidget):
    submitted = Signal(str)
    cancelled = Signal()

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Composer")  # the composer's frame
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 8, 12, 8)
        self.input = QPlainTextEdit(self)
        self.input.setObjectName("MessageInput")
        self.input.setPlainText(text)
        self.input.setTabChangesFocus(True)
        lines = max(2, min(8, text.count("\n") + 2))
        self.input.setFixedHeight(self.input.fontMetrics().lineSpacing() * lines + 12)
        self.input.installEventFilter(self)
        self.input.textChanged.connect(self._changed)
        layout.addWidget(self.input)
        row = QHBoxLayout()
        hint = QLabel("Sending keeps the earlier version: ‹ › switches between them.", self)
        hint.setProperty("muted", True)
        hint.setWordWrap(True)
        row.addWidget(hint, 1)
        self.cancel_button = QPushButton("Cancel", self)
        self.cancel_button.clicked.connect(self.cancelled)
        row.addWidget(self.cancel_button)
        self.send_button = QPushButton("Send", self)
        self.send_button.setProperty("primary", True)
        self.send_button.clicked.connect(self._submit)
        row.addWidget(self.send_button)
        layout.addLayout(row)

    def text(self) -> str:
        return self.input.toPlainText()

    def focus(self) -> None:
        self.input.setFocus()
        cursor = self.input.textCursor()
        cursor.movePosition(cursor.MoveOperation.End)
        self.input.setTextCursor(cursor)

    def _changed(self) -> None:
        self.send_button.setEnabled(bool(self.text().strip()))

    def _submit(self) -> None:
        if self.text().strip():
            self.submitted.emit(self.text())

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.input and isinstance(event, QKeyEvent):
            if event.type() == QEvent.Type.ShortcutOverride and event.key() == Qt.Key.Key_Escape:
                event.accept()  # Escape cancels the edit here, not the window's "stop reply"
                return True
            if event.type() == QEvent.Type.KeyPress:
                key = event.key()
                shift = bool(event.modifiers() & Qt.KeyboardModifier.ShiftModifier)
                if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not shift:
                    self._submit()
                    return True
                if key == Qt.Key.Key_Escape:
                    self.cancelled.emit()
                    return True
        return super().eventFilter(watched, event)
