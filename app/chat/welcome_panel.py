"""First run with no chat model: what to set up, a button to Settings, and, when a model
server already runs on this computer (Ollama, LM Studio), an offer to use it. A chat model
that is set up but whose key the locked keyring keeps is said as that, with *Try again*."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from app.chat.local_servers import LocalServer
from app.look import icons, theme

SET_UP_TEXT = (
    "To chat, connect a model: <b>OpenAI</b> or any OpenAI-compatible server "
    "(Ollama, LM Studio, llama.cpp) or <b>Amazon Bedrock</b>."
)
SET_UP_BUTTON = "  Set up a chat model"
# The chat model is set up; only its key cannot be read: nothing to change in Settings.
KEYRING_LOCKED_TEXT = (
    "Your chat model is set up, but its API key could not be read: the system keyring is "
    "locked. Unlock it (your system may ask for its password), then try again."
)
KEYRING_LOCKED_BUTTON = "  Try again"


class WelcomePanel(QScrollArea):
    """Scrolls when the window is too short for it (the window's minimum height is less)."""

    settings_requested = Signal()
    retry_keyring_requested = Signal()  # the locked keyring's key: read it again
    local_server_chosen = Signal(object, str)  # LocalServer, model

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # Not a Tab stop of its own: it showed no focus at all, and a keyboard reaching its
        # buttons scrolls them into view anyway.
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        theme.see_through(self)
        page = QWidget(self)
        page.setObjectName("WelcomePage")
        outer = QHBoxLayout(page)
        outer.addStretch(1)
        column = QWidget(page)
        column.setMaximumWidth(520)
        layout = QVBoxLayout(column)
        layout.setSpacing(12)
        layout.addStretch(2)
        logo = QLabel(column)
        logo.setPixmap(icons.logo(72))
        logo.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(logo)
        title = QLabel("Welcome to Timothy", column)
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 1.7)
        font.setWeight(font.Weight.DemiBold)
        title.setFont(font)
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        title.setWordWrap(True)
        layout.addWidget(title)
        subtitle = QLabel("An assistant whose memory belongs to you.", column)
        subtitle.setAlignment(Qt.AlignmentFlag.AlignCenter)
        subtitle.setWordWrap(True)
        subtitle.setProperty("muted", True)
        layout.addWidget(subtitle)
        self.explain = QLabel(SET_UP_TEXT, column)
        self.explain.setWordWrap(True)
        self.explain.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addSpacing(8)
        layout.addWidget(self.explain)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        self.settings_button = QPushButton(
            icons.icon("settings", "accent_text", 16), SET_UP_BUTTON, column
        )
        self.settings_button.setProperty("primary", True)
        self.settings_button.clicked.connect(self._button_clicked)
        buttons.addWidget(self.settings_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)

        self.local_box = QWidget(column)
        self.local_box.setObjectName("Notice")
        self.local_box.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        local = QHBoxLayout(self.local_box)
        local.setContentsMargins(12, 10, 10, 10)
        server_icon = QLabel(self.local_box)
        server_icon.setPixmap(icons.pixmap("server", theme.colours().accent, 20))
        local.addWidget(server_icon)
        self.local_label = QLabel(self.local_box)
        self.local_label.setWordWrap(True)
        local.addWidget(self.local_label, 1)
        self.local_button = QPushButton(self.local_box)
        self.local_button.clicked.connect(self._use_local)
        self.local_models = QComboBox(self.local_box)
        self.local_models.setToolTip("The models this server has; choose the one to chat with")
        self.local_models.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.local_models.currentTextChanged.connect(
            lambda model: self.local_button.setText(f"Use {model}")
        )
        local.addWidget(self.local_models)
        local.addWidget(self.local_button)
        self.local_box.hide()
        layout.addWidget(self.local_box)
        self.probe_label = QLabel("Looking for a model server on this computer…", column)
        self.probe_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.probe_label.setWordWrap(True)
        self.probe_label.setProperty("muted", True)
        layout.addWidget(self.probe_label)

        memory_note = QLabel(
            "Your memories work without a model: review, confirm and edit them in the pane "
            "on the right.",
            column,
        )
        memory_note.setWordWrap(True)
        memory_note.setAlignment(Qt.AlignmentFlag.AlignCenter)
        memory_note.setProperty("muted", True)
        layout.addSpacing(12)
        layout.addWidget(memory_note)
        layout.addStretch(3)
        outer.addWidget(column, 10)
        outer.addStretch(1)
        self.setWidget(page)
        page.setAutoFillBackground(False)  # setWidget turned it on: let the chat pane show
        self.server: LocalServer | None = None
        self.keyring_locked = False

    def show_keyring_locked(self, locked: bool) -> None:
        """`locked`: a chat model is set up, but its key is in the locked keyring, so the
        panel says that and offers *Try again* (what the banner offers), not a set-up the
        owner has done already; no local server is offered meanwhile."""
        self.keyring_locked = locked
        self.explain.setText(KEYRING_LOCKED_TEXT if locked else SET_UP_TEXT)
        self.settings_button.setText(KEYRING_LOCKED_BUTTON if locked else SET_UP_BUTTON)
        self.settings_button.setIcon(
            icons.icon("regenerate" if locked else "settings", "accent_text", 16)
        )
        if locked:
            self.local_box.hide()
            self.probe_label.hide()
        else:
            self.probe_label.setVisible(self.local_box.isHidden())

    def _button_clicked(self) -> None:
        if self.keyring_locked:
            self.retry_keyring_requested.emit()
        else:
            self.settings_requested.emit()

    def show_local_servers(self, servers: list[LocalServer]) -> None:
        """Offer the first server that has a model loaded, with its models to choose from
        (or say none was found)."""
        usable = [server for server in servers if server.models]
        self.probe_label.setVisible(not usable)
        if not usable:
            self.local_box.hide()
            self.probe_label.setText(
                f"{servers[0].name} is running but has no model loaded yet."
                if servers
                else "No model server is running on this computer."
            )
            return
        self.server = usable[0]
        models = len(self.server.models)
        self.local_label.setText(
            f"<b>{self.server.name}</b> is running on this computer with "
            f"{models} model{'s' if models != 1 else ''}. Use it? Nothing leaves your machine."
        )
        self.local_models.clear()
        self.local_models.addItems(list(self.server.models))
        self.local_models.setVisible(models > 1)
        self.local_models.setCurrentIndex(0)
        self.local_button.setText(f"Use {self.server.models[0]}")
        self.local_box.show()

    def _use_local(self) -> None:
        model = self.local_models.currentText()
        if self.server is not None and model:
            self.local_server_chosen.emit(self.server, model)
