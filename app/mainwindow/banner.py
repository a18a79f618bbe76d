"""A strip across the top of the window: an error in plain words, or a notice with an action
("Conversation deleted. [Undo]"). Never a traceback: details go to the log file."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QToolButton, QWidget

from app.look import icons, theme
from app.look.tips import set_tip


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
        close.setIcon(icons.icon("close", "text", 14))
        set_tip(close, "Dismiss")
        close.clicked.connect(self.dismiss)
        row.addWidget(close)
        self.action_name = ""
        self.kind = "info"
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.hide)
        self.hide()

    def show_message(
        self,
        text: str,
        *,
        kind: str = "error",
        action: str | None = None,
        action_label: str | None = None,
        timeout_ms: int = 0,
        icon: str | None = None,
    ) -> None:
        """Show `text`; the button emits `action_clicked(action)`; after `timeout_ms` (when
        given) the banner hides itself. `kind`: "error", "warning" (a state that mends
        itself, as a server out of reach) or "info"."""
        self.kind = kind
        self.setProperty("kind", kind)
        self.style().unpolish(self)
        self.style().polish(self)
        colour = theme.colours().danger if kind == "error" else theme.colours().accent
        if kind == "warning":
            colour = theme.colours().warning
        shown = icon or ("alert" if kind in ("error", "warning") else "info")
        self.icon_label.setPixmap(icons.pixmap(shown, colour, 18))
        self.text_label.setText(text)
        self.action_name = action or ""
        self.action_button.setText(action_label or (action or "").capitalize())
        self.action_button.setVisible(action is not None)
        if timeout_ms:
            self._timer.start(timeout_ms)
        else:
            self._timer.stop()
        self.show()

    def _action(self) -> None:
        name = self.action_name
        self._timer.stop()
        self.hide()
        self.action_clicked.emit(name)

    def dismiss(self) -> None:
        self._timer.stop()
        self.hide()
        self.dismissed.emit()
