"""The message box with its Send / Stop button and a line saying what Enter will do.

While a reply streams the box stays editable (the owner can write the next message), but
Enter does not send and the button becomes Stop, so the state is never ambiguous.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from app.chat.message_input import MessageInput
from app.look import icons
from app.look.tips import set_tip

IDLE_HINT = "Enter to send · Shift+Enter for a new line"
STREAMING_HINT = "Timothy is replying · Esc to stop · you can write your next message meanwhile"


class Composer(QWidget):
    message_submitted = Signal(str)
    stop_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(4)
        self.frame = QWidget(self)
        self.frame.setObjectName("Composer")
        self.frame.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        row = QHBoxLayout(self.frame)
        row.setContentsMargins(14, 8, 8, 8)
        row.setSpacing(8)
        self.input = MessageInput(self.frame)
        self.input.setPlaceholderText("Message Timothy")
        self.input.send_requested.connect(self.submit)
        self.input.focus_changed.connect(self._focus_changed)
        self.input.textChanged.connect(self._refresh)
        row.addWidget(self.input, 1)
        self.button = QPushButton(self.frame)
        self.button.setProperty("round", True)
        self.button.setIconSize(icons.icon_size(18))
        self.button.clicked.connect(self._button_clicked)
        row.addWidget(self.button, 0, Qt.AlignmentFlag.AlignBottom)
        outer.addWidget(self.frame)
        self.hint = QLabel(IDLE_HINT, self)
        self.hint.setObjectName("ComposerHint")
        self.hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.hint.setWordWrap(True)  # a narrow window wraps it rather than cut it
        # Hidden while nothing can be sent (the box says why), its room kept: no jump.
        policy = self.hint.sizePolicy()
        policy.setRetainSizeWhenHidden(True)
        self.hint.setSizePolicy(policy)
        outer.addWidget(self.hint)
        self.streaming = False
        self.available = True
        self._refresh()

    def add_tool(self, button: QWidget) -> None:
        """A small button at the box's left edge (the conversation's instructions)."""
        row = self.frame.layout()
        assert isinstance(row, QHBoxLayout)
        row.insertWidget(0, button, 0, Qt.AlignmentFlag.AlignBottom)

    def _focus_changed(self, focused: bool) -> None:
        self.frame.setProperty("focused", focused)
        self.frame.style().unpolish(self.frame)
        self.frame.style().polish(self.frame)

    def text(self) -> str:
        return self.input.toPlainText()

    def set_text(self, text: str) -> None:
        self.input.setPlainText(text)

    def submit(self) -> None:
        text = self.input.toPlainText().strip()
        if self.streaming or not self.available or not text:
            return
        self.input.clear()
        self.message_submitted.emit(text)

    def _button_clicked(self) -> None:
        if self.streaming:
            self.stop_requested.emit()
        else:
            self.submit()

    def set_streaming(self, streaming: bool) -> None:
        self.streaming = streaming
        self._refresh()

    def set_available(self, available: bool, placeholder: str | None = None) -> None:
        """Whether sending is possible (no chat model: the box explains why not)."""
        self.available = available
        self.input.setPlaceholderText(placeholder or "Message Timothy")
        self._refresh()

    def _refresh(self) -> None:
        if self.streaming:
            self.button.setIcon(icons.icon("stop", "accent_text", 16))
            set_tip(self.button, "Stop the reply (Esc)")
            self.button.setEnabled(True)
            self.hint.setText(STREAMING_HINT)
        else:
            self.button.setIcon(icons.icon("send", "accent_text", 18))
            set_tip(self.button, "Send (Enter)")
            self.button.setEnabled(self.available and bool(self.input.toPlainText().strip()))
            self.hint.setText(IDLE_HINT)
        self.input.setEnabled(self.available or self.streaming)
        self.hint.setHidden(not (self.available or self.streaming))

    def focus(self) -> None:
        self.input.setFocus(Qt.FocusReason.OtherFocusReason)
