"""The strip across a temporary chat: what it means, and the way out."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget

from app.look import icons

TEMPORARY_TEXT = (
    "<b>Temporary chat</b> · Nothing is recalled or remembered, and this chat is erased "
    "when you close it."
)


class TemporaryBanner(QWidget):
    leave_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("TemporaryBanner")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        row = QHBoxLayout(self)
        row.setContentsMargins(12, 6, 8, 6)
        icon = QLabel(self)
        icon.setPixmap(icons.icon("temporary", "text", 16).pixmap(16, 16))
        row.addWidget(icon)
        self.text_label = QLabel(TEMPORARY_TEXT, self)
        self.text_label.setWordWrap(True)
        row.addWidget(self.text_label, 1)
        self.leave_button = QToolButton(self)
        self.leave_button.setProperty("flat", True)
        self.leave_button.setText("Turn off")
        self.leave_button.setToolTip("Close this temporary chat and start a normal one")
        self.leave_button.clicked.connect(self.leave_requested)
        row.addWidget(self.leave_button)
