"""A small card inside the transcript: "Remembered: ... [Undo]", "2 facts to confirm [Review]"."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QWidget

from app.look import icons, theme


class Notice(QFrame):
    action_clicked = Signal()

    def __init__(
        self,
        text: str,
        *,
        icon: str = "memory",
        action: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("Notice")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        row = QHBoxLayout(self)
        row.setContentsMargins(12, 6, 8, 6)
        row.setSpacing(10)
        self.icon_label = QLabel(self)
        self.icon_label.setPixmap(icons.pixmap(icon, theme.colours().accent, 18))
        row.addWidget(self.icon_label, 0, Qt.AlignmentFlag.AlignVCenter)
        self.text_label = QLabel(self)
        self.text_label.setWordWrap(True)
        self.text_label.setTextFormat(Qt.TextFormat.RichText)
        self.text_label.setText(text)
        self.text_label.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Minimum)
        row.addWidget(self.text_label, 1, Qt.AlignmentFlag.AlignVCenter)
        self.action_button = QPushButton(action or "", self)
        self.action_button.setVisible(action is not None)
        self.action_button.clicked.connect(self.action_clicked)
        row.addWidget(self.action_button, 0, Qt.AlignmentFlag.AlignVCenter)

    def set_text(self, text: str) -> None:
        self.text_label.setText(text)

    def set_action(self, action: str | None) -> None:
        self.action_button.setText(action or "")
        self.action_button.setVisible(action is not None)
        self.action_button.setEnabled(True)
