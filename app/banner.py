"""A strip across the top of the window: an error in plain words, or a notice with an action
("Conversation deleted. [Undo]"). Never a traceback: details go to the log file."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from app import icons, theme


class Banner(QFrame):
    action_clicked = Signal(str)  # the action's name
    dismissed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("Banner")
        row = QHBoxLayout(self)
        row.setContentsMargins(14, 8, 8, 8)
        row.setSpacing(10)
        self.icon_label = QLabel(self)
        row.addWidget(self.icon_label)
        self.text_label = QLabel(self)
        self.text_label.setWordWrap(True)
        self.text_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        row.addWidget(self.text_label, 1)
        self.action_button = QPushButton(self)
        self.action_button.clicked.connect(self._action)
        row.addWidget(self.action_button)
        close = QToolButton(self)
        close.setProperty("flat", True)
        close.setIcon(icons.icon("close", None, 14))
        close.setToolTip("Dismiss")
        close.clicked.connect(self.dismiss)
        row.addWidget(close)
        self.action_name = ""
        self.kind = "info"
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._expired)
        self._on_expire: str | None = None
        self.hide()

    def show_message(
        self,
        text: str,
        *,
        kind: str = "error",
        action: str | None = None,
        action_label: str | None = None,
        timeout_ms: int = 0,
        on_expire: str | None = None,
    ) -> None:
        """Show `text`; `action` names the signal payload of its button; after `timeout_ms`
        it hides itself (emitting `action_clicked(on_expire)` first when given)."""
        if self._on_expire and self.isVisible():
            self.action_clicked.emit(self._on_expire)  # finish what the old notice promised
        self.kind = kind
        self.setProperty("kind", kind)
        self.style().unpolish(self)
        self.style().polish(self)
        colour = theme.colours().danger if kind == "error" else theme.colours().accent
        self.icon_label.setPixmap(icons.pixmap("alert" if kind == "error" else "info", colour, 18))
        self.text_label.setText(text)
        self.action_name = action or ""
        self.action_button.setText(action_label or (action or "").capitalize())
        self.action_button.setVisible(action is not None)
        self._on_expire = on_expire
        if timeout_ms:
            self._timer.start(timeout_ms)
        else:
            self._timer.stop()
        self.show()

    def _action(self) -> None:
        name = self.action_name
        self._on_expire = None
        self._timer.stop()
        self.hide()
        self.action_clicked.emit(name)

    def _expired(self) -> None:
        pending = self._on_expire
        self._on_expire = None
        self.hide()
        if pending:
            self.action_clicked.emit(pending)

    def flush(self) -> None:
        """Carry out a pending expiry now (the window is closing)."""
        if self._on_expire:
            self._timer.stop()
            self._expired()

    def dismiss(self) -> None:
        self._timer.stop()
        pending = self._on_expire
        self._on_expire = None
        self.hide()
        if pending:
            self.action_clicked.emit(pending)
        self.dismissed.emit()
