"""Settings: the chat model, embeddings, memory, storage and backups. Saved to settings.json;
the API key (and a memory server's password) go to the OS keyring only, never shown again once
saved. The Backups page (`backups_page.py`) lists the store's backups and asks the window to
make or restore one.

Keyring reads and writes and the connection test run on workers: a locked keyring or a
slow server never freezes the dialog.
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.jobs.workers import Failure, Workers
from app.look import theme
from app.look.screen_room import fitted, fitted_width
from app.look.wrapped_label import WrappedLabel
from app.settings import connection_check
from app.settings.backups_page import BackupsPage
from app.settings.settings_section_form import SettingsSectionForm, is_basic
from app.settings.storage_page import StoragePage
from timothy import paths, secrets
from timothy.errors import InvalidInputError
from timothy.providers.bedrock_models import KNOWN_MODELS, BedrockModels, list_bedrock_chat_models
from timothy.providers.model_list import list_chat_models
from timothy.providers.openai_client import check_base_url, is_official
from timothy.settings import OpenAISettings, Settings, StoreSettings, save_settings

log = logging.getLogger(__name__)

OWN_SECTIONS = ("openai", "bedrock", "memory", "store")
PAGES = {"chat": 0, "embeddings": 1, "memory": 2, "storage": 3, "backups": 4}
OPENAI_MODELS = ["gpt-4o-mini", "gpt-4o", "gpt-4.1-mini", "gpt-4.1", "o4-mini"]
BEDROCK_MODELS = list(KNOWN_MODELS)  # until the region's own list arrives, or without one
PROVIDER_MIN_CHARS = 20
PROVIDERS = [
    (None, "None: memory only"),
    ("openai", "OpenAI, or a compatible server (Ollama, LM Studio, llama.cpp)"),
    ("bedrock", "Amazon Bedrock"),
]
EMBEDDERS = [
    (None, "None", "Vector search is off; text and entity search still find memories."),
    ("local", "On this computer", "all-MiniLM-L6-v2, offline: no key, no cloud."),
    ("openai", "OpenAI", "Uses the OpenAI key and address from the Chat page."),
    ("bedrock", "Amazon Bedrock Titan", "Uses the AWS settings from the Chat page."),
]


def _text_or_none(edit: QLineEdit) -> str | None:
    text = edit.text().strip()
    return text or None


def _combo(items: list[str], current: str, parent: QWidget) -> QComboBox:
    combo = QComboBox(parent)
    combo.setEditable(True)
    combo.addItems(items if current in items else [current, *items])
    combo.setCurrentText(current)
    return combo


def _hint(text: str, parent: QWidget) -> QLabel:
    label = WrappedLabel(text, parent)
    label.setProperty("muted", True)
    return label


def _models(count: int) -> str:
    return f"{count} model{'s' if count != 1 else ''}"


def _keyring_message(server: OpenAISettings, message: str) -> str:
    """Saving the key failed for want of a keyring: the way out that works for this server
    (the environment variable is read for OpenAI's own API only)."""
    if is_official(server) or not message.startswith("No system keyring"):
        return message
    return (
        "No system keyring is available, so the key cannot be stored safely. Install and "
        "unlock one (e.g. GNOME Keyring or KWallet). A server on this computer usually needs "
        "no key: leave the field empty."
    )


class SettingsDialog(QDialog):
    settings_saved = Signal(object)  # the new Settings

    def __init__(
        self,
        settings: Settings,
        workers: Workers,
        *,
        page: str = "chat",
        data: Path | None = None,
        can_restore: bool = True,
        server: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        """`data`: the data folder whose backups the Backups page lists (default: the
        configured one); `can_restore`: False when the memory store is not open; `server`:
        where the open store is when it is on a server (its backups are the server's)."""
        super().__init__(parent)
        self.settings = settings
        self.workers = workers
        self.connection_check: connection_check.ConnectionCheck = connection_check.check_connection
        self.embedding_check: connection_check.ConnectionCheck = connection_check.check_embeddings
        self.key_saved = False
        # Per test button, bumped by each test and its end: an older outcome is dropped.
        self._test_runs: dict[QPushButton, int] = {}
        self.setWindowTitle("Settings")
        self.resize(fitted(self, 760, 560))  # its pages scroll below that
        outer = QVBoxLayout(self)
        self.outer = outer
        body = QHBoxLayout()
        self.nav = QListWidget(self)
        self.nav.addItems(["Chat model", "Embeddings", "Memory", "Storage", "Backups"])
        self.nav.setObjectName("SettingsNav")
        self.nav.setFixedWidth(170)
        self.nav.setFrameShape(QListWidget.Shape.NoFrame)
        body.addWidget(self.nav)
        self.pages = QStackedWidget(self)
        self.pages.addWidget(self._scrolling(self._chat_page()))
        self.pages.addWidget(self._scrolling(self._embedding_page()))
        self.pages.addWidget(self._scrolling(self._memory_page()))
        self.storage_page = StoragePage(settings.store, workers, self)
        self.pages.addWidget(self._scrolling(self.storage_page))
        self.backups_page = BackupsPage(
            data if data is not None else paths.data_dir(),
            workers,
            can_restore=can_restore,
            server=server,
            parent=self,
        )
        self.pages.addWidget(self.backups_page)
        self.nav.currentRowChanged.connect(self.pages.setCurrentIndex)
        body.addWidget(self.pages, 1)
        outer.addLayout(body, 1)
        self.body = body
        self.error_label = QLabel(self)
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(f"color: {theme.colours().danger.name()};")
        self.error_label.hide()
        outer.addWidget(self.error_label)
        self.key_edit.textChanged.connect(self._clear_error)
        self.base_url_edit.textChanged.connect(self._clear_error)
        self.storage_page.url_edit.textChanged.connect(self._clear_error)
        self.storage_page.choice.buttonToggled.connect(self._clear_error)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)
        outer.addWidget(self.buttons)
        self.show_page(page)
        self._listed_for: str | None = None  # the server address the model list is from
        self._list_runs = 0  # bumped by each listing: an older answer is dropped
        self._bedrock_listed_for: tuple[str | None, str | None] | None = None  # region, profile
        self._bedrock_runs = 0
        self._provider_changed()
        self.advanced_toggle.toggled.connect(lambda _on: self._fit_least_width())
        self._load_key_state()
        if settings.openai.base_url:
            self.list_models()  # a compatible server: offer its own models from the start

    def _fit_least_width(self) -> None:
        """The dialog may be narrowed only as far as its widest page reads whole (less where
        the screen has less room: then that page scrolls sideways). Its fields and options
        do not wrap, so any narrower ran them off the right edge."""
        widest = 0
        for index in range(self.pages.count()):
            page = self.pages.widget(index)
            inner = page.widget() if isinstance(page, QScrollArea) else None
            if isinstance(page, QScrollArea) and inner is not None:
                bar = page.verticalScrollBar().sizeHint().width()
                widest = max(widest, inner.minimumSizeHint().width() + bar)
            elif page is not None:
                widest = max(widest, page.minimumSizeHint().width())
        margins = self.contentsMargins() + self.outer.contentsMargins()
        least = self.nav.width() + self.body.spacing() + widest + margins.left() + margins.right()
        self.setMinimumWidth(fitted_width(self, least))

    def show_page(self, page: str) -> None:
        """Turn to a page by name: "chat", "embeddings", "memory", "storage" or "backups"."""
        self.nav.setCurrentRow(PAGES.get(page, 0))

    def _scrolling(self, page: QWidget) -> QScrollArea:
        area = QScrollArea(self)
        area.setWidgetResizable(True)
        area.setFrameShape(QScrollArea.Shape.NoFrame)
        # Not a Tab stop of its own (it showed no focus: Tab seemed to go nowhere); Tab
        # reaching a field below the fold scrolls it into view.
        area.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        area.setWidget(page)
        return area

    # -- pages -------------------------------------------------------------------------

    def _chat_page(self) -> QWidget:
        page = QWidget(self)
        layout = QVBoxLayout(page)
        s = self.settings
        form = QFormLayout()
        self.provider_combo = QComboBox(page)
        # Narrower than its longest choice on a small screen (the list shows it whole).
        self.provider_combo.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon
        )
        self.provider_combo.setMinimumContentsLength(PROVIDER_MIN_CHARS)
        for value, label in PROVIDERS:
            self.provider_combo.addItem(label, value)
        self.provider_combo.setCurrentIndex(
            next((i for i, (v, _l) in enumerate(PROVIDERS) if v == s.chat_provider), 0)
        )
        self.provider_combo.currentIndexChanged.connect(self._provider_changed)
        form.addRow("Chat with", self.provider_combo)
        layout.addLayout(form)

        self.openai_box = QGroupBox("OpenAI or a compatible server", page)
        openai_form = QFormLayout(self.openai_box)
        key_row = QHBoxLayout()
        self.key_edit = QLineEdit(self.openai_box)
        self.key_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_edit.setPlaceholderText("sk-…")
        key_row.addWidget(self.key_edit, 1)
        self.forget_key_button = QToolButton(self.openai_box)
        self.forget_key_button.setText("Forget saved key")
        self.forget_key_button.clicked.connect(self._forget_key)
        self.forget_key_button.hide()
        key_row.addWidget(self.forget_key_button)
        openai_form.addRow("API key", key_row)
        self.key_state = _hint("Checking the system keyring…", self.openai_box)
        openai_form.addRow("", self.key_state)
        self.base_url_edit = QLineEdit(s.openai.base_url or "", self.openai_box)
        self.base_url_edit.setPlaceholderText("https://api.openai.com/v1 (leave empty for OpenAI)")
        openai_form.addRow("Server address", self.base_url_edit)
        openai_form.addRow(
            "",
            _hint(
                "Ollama: http://127.0.0.1:11434/v1\nLM Studio: http://127.0.0.1:1234/v1\n"
                "Servers on this computer need no key.",
                self.openai_box,
            ),
        )
        self.openai_model = _combo(
            OPENAI_MODELS if is_official(s.openai) else [], s.openai.chat_model, self.openai_box
        )
        model_row = QHBoxLayout()
        model_row.addWidget(self.openai_model, 1)
        self.list_models_button = QToolButton(self.openai_box)
        self.list_models_button.setText("List models")
        self.list_models_button.setToolTip("Ask the server which models it offers")
        self.list_models_button.clicked.connect(self.list_models)
        model_row.addWidget(self.list_models_button)
        openai_form.addRow("Model", model_row)
        self.models_state = _hint("", self.openai_box)
        self.models_state.hide()
        openai_form.addRow("", self.models_state)
        self.base_url_edit.editingFinished.connect(self._server_changed)
        self.openai_memories = QCheckBox("Use my memories with this provider", self.openai_box)
        self.openai_memories.setChecked(s.openai.use_memories)
        self.openai_memories.setToolTip(
            "Off: no memories are sent to this provider and it is not asked to pick up facts."
        )
        openai_form.addRow("", self.openai_memories)
        layout.addWidget(self.openai_box)

        self.bedrock_box = QGroupBox("Amazon Bedrock", page)
        bedrock_form = QFormLayout(self.bedrock_box)
        self.region_edit = QLineEdit(s.bedrock.region or "", self.bedrock_box)
        self.region_edit.setPlaceholderText("from your AWS configuration, e.g. us-east-1")
        bedrock_form.addRow("Region", self.region_edit)
        self.profile_edit = QLineEdit(s.bedrock.profile or "", self.bedrock_box)
        self.profile_edit.setPlaceholderText("default credentials chain")
        bedrock_form.addRow("AWS profile", self.profile_edit)
        self.bedrock_model = _combo(BEDROCK_MODELS, s.bedrock.chat_model, self.bedrock_box)
        bedrock_model_row = QHBoxLayout()
        bedrock_model_row.addWidget(self.bedrock_model, 1)
        self.list_bedrock_models_button = QToolButton(self.bedrock_box)
        self.list_bedrock_models_button.setText("List models")
        self.list_bedrock_models_button.setToolTip("Ask Bedrock which chat models this region has")
        self.list_bedrock_models_button.clicked.connect(self.list_bedrock_models)
        bedrock_model_row.addWidget(self.list_bedrock_models_button)
        bedrock_form.addRow("Model", bedrock_model_row)
        self.bedrock_models_state = _hint("", self.bedrock_box)
        self.bedrock_models_state.hide()
        bedrock_form.addRow("", self.bedrock_models_state)
        self.region_edit.editingFinished.connect(self._bedrock_place_changed)
        self.profile_edit.editingFinished.connect(self._bedrock_place_changed)
        bedrock_form.addRow(
            "",
            _hint(
                "Credentials come from the standard AWS chain (environment, ~/.aws, SSO). "
                "Timothy never stores AWS keys.",
                self.bedrock_box,
            ),
        )
        self.bedrock_memories = QCheckBox("Use my memories with this provider", self.bedrock_box)
        self.bedrock_memories.setChecked(s.bedrock.use_memories)
        bedrock_form.addRow("", self.bedrock_memories)
        layout.addWidget(self.bedrock_box)

        self.none_hint = _hint(
            "Without a chat model you can still browse, confirm and edit your memories. "
            "Choose a provider to start chatting.",
            page,
        )
        layout.addWidget(self.none_hint)

        test_row = QHBoxLayout()
        self.test_result = QLabel(page)
        self.test_button = QPushButton("Test connection", page)
        self.test_button.clicked.connect(self.test_connection)
        test_row.addWidget(self.test_button)
        self.cancel_test_button = QPushButton("Cancel", page)
        self.cancel_test_button.setToolTip("Stop waiting for the answer")
        self.cancel_test_button.hide()
        self.cancel_test_button.clicked.connect(
            lambda: self._cancel_test(self.test_button, self.cancel_test_button, self.test_result)
        )
        test_row.addWidget(self.cancel_test_button)
        self.test_result.setWordWrap(True)
        test_row.addWidget(self.test_result, 1)
        layout.addLayout(test_row)
        layout.addStretch(1)
        return page

    def _embedding_page(self) -> QWidget:
        page = QWidget(self)
        layout = QVBoxLayout(page)
        layout.addWidget(
            _hint(
                "Embeddings let recall find memories by meaning, not only by words. "
                "Changing the model re-embeds your memories in the background.",
                page,
            )
        )
        self.embedder_group = QButtonGroup(page)
        self.embedder_buttons: dict[str | None, QRadioButton] = {}
        for value, label, hint in EMBEDDERS:
            button = QRadioButton(label, page)
            button.setChecked(value == self.settings.embedding_provider)
            self.embedder_group.addButton(button)
            self.embedder_buttons[value] = button
            layout.addWidget(button)
            note = _hint(hint, page)
            note.setContentsMargins(24, 0, 0, 6)
            layout.addWidget(note)
        if not any(b.isChecked() for b in self.embedder_buttons.values()):
            self.embedder_buttons[None].setChecked(True)
        models = QGroupBox("Embedding models", page)
        form = QFormLayout(models)
        self.openai_embedding = QLineEdit(self.settings.openai.embedding_model, models)
        form.addRow("OpenAI model", self.openai_embedding)
        self.bedrock_embedding = QLineEdit(self.settings.bedrock.embedding_model, models)
        form.addRow("Bedrock model", self.bedrock_embedding)
        layout.addWidget(models)
        test_row = QHBoxLayout()
        self.embedding_test_result = QLabel(page)
        self.embedding_test_button = QPushButton("Test embeddings", page)
        self.embedding_test_button.clicked.connect(self.test_embeddings)
        test_row.addWidget(self.embedding_test_button)
        self.cancel_embedding_test_button = QPushButton("Cancel", page)
        self.cancel_embedding_test_button.setToolTip("Stop waiting for the answer")
        self.cancel_embedding_test_button.hide()
        self.cancel_embedding_test_button.clicked.connect(
            lambda: self._cancel_test(
                self.embedding_test_button,
                self.cancel_embedding_test_button,
                self.embedding_test_result,
            )
        )
        test_row.addWidget(self.cancel_embedding_test_button)
        self.embedding_test_result.setWordWrap(True)
        test_row.addWidget(self.embedding_test_result, 1)
        layout.addLayout(test_row)
        layout.addStretch(1)
        return page

    def _memory_page(self) -> QWidget:
        page = QWidget(self)
        layout = QVBoxLayout(page)
        policy = self.settings.memory
        saving = QGroupBox("Saving", page)
        saving_layout = QVBoxLayout(saving)
        # Short enough for the page at 100 % in a desktop's 10-12 pt type (no sideways scroll).
        self.ask_before_saving = QCheckBox(
            "Ask me before saving what I tell Timothy to remember", saving
        )
        self.ask_before_saving.setToolTip(
            "Facts you ask Timothy to remember wait for your confirmation, as picked-up ones do"
        )
        self.ask_before_saving.setChecked(policy.ask_before_saving)
        saving_layout.addWidget(self.ask_before_saving)
        self.extraction = QCheckBox("Pick up facts from conversations for me to confirm", saving)
        self.extraction.setToolTip(
            "After each reply, facts from that exchange wait in the memory pane for you to confirm"
        )
        self.extraction.setChecked(policy.extraction_enabled)
        saving_layout.addWidget(self.extraction)
        layout.addWidget(saving)

        # Sections other features own (recall's budget, time bound and scoring constants).
        self.section_forms: dict[str, tuple[SettingsSectionForm, SettingsSectionForm]] = {}
        advanced_forms: list[QGroupBox] = []
        for item in dataclasses.fields(self.settings):
            value = getattr(self.settings, item.name)
            if item.name in OWN_SECTIONS or not dataclasses.is_dataclass(value):
                continue
            title = item.name.replace("_", " ").capitalize()
            basic = SettingsSectionForm(value, include=is_basic, parent=page)
            advanced = SettingsSectionForm(value, include=lambda n: not is_basic(n), parent=page)
            self.section_forms[item.name] = (basic, advanced)
            if not basic.is_empty():
                box = QGroupBox(title, page)
                QVBoxLayout(box).addWidget(basic)
                layout.addWidget(box)
            if not advanced.is_empty():
                box = QGroupBox(f"{title}: advanced", page)
                QVBoxLayout(box).addWidget(advanced)
                advanced_forms.append(box)
        if advanced_forms:
            self.advanced_toggle = QToolButton(page)
            self.advanced_toggle.setText("Show advanced settings")
            self.advanced_toggle.setCheckable(True)
            layout.addWidget(self.advanced_toggle, 0, Qt.AlignmentFlag.AlignLeft)
            for box in advanced_forms:
                box.hide()
                layout.addWidget(box)
                self.advanced_toggle.toggled.connect(box.setVisible)
            self.advanced_toggle.toggled.connect(
                lambda on: self.advanced_toggle.setText(
                    "Hide advanced settings" if on else "Show advanced settings"
                )
            )
        layout.addStretch(1)
        return page

    # -- state -------------------------------------------------------------------------

    def _provider_changed(self) -> None:
        provider = self.provider_combo.currentData()
        self.openai_box.setVisible(provider == "openai")
        self.bedrock_box.setVisible(provider == "bedrock")
        self._fit_least_width()
        self.none_hint.setVisible(provider is None)
        if not self.cancel_test_button.isHidden():
            self._end_test(self.test_button, self.cancel_test_button)  # it tested the other one
        self.test_button.setEnabled(provider is not None)
        self.test_result.clear()
        self._clear_error()
        if provider == "bedrock" and self._bedrock_listed_for is None:
            self.list_bedrock_models()  # the region's own models, once Bedrock is chosen

    def _clear_error(self) -> None:
        """An error about what was typed or chosen goes once the owner changes it."""
        self.error_label.clear()
        self.error_label.hide()

    def _load_key_state(self) -> None:
        self.workers.run(
            self,
            lambda: secrets.get_secret(secrets.OPENAI_API_KEY) is not None,
            "reading the system keyring",
            on_success=self._key_state_loaded,
            on_failure=lambda failure: self.key_state.setText(failure.message),
        )

    def _key_state_loaded(self, saved: bool) -> None:
        self.key_saved = bool(saved)
        if saved:
            self.key_state.setText(
                "A key is saved in your system keyring. Type a new one to replace it."
            )
            self.key_edit.setPlaceholderText("•••••••• (saved)")
        elif not secrets.keyring_available():
            self.key_state.setText(
                "No system keyring is available, so a key cannot be saved safely."
            )
        else:
            self.key_state.setText("Stored only in your system keyring, never in a file.")
        self.forget_key_button.setVisible(self.key_saved)

    def _forget_key(self) -> None:
        self.forget_key_button.setEnabled(False)

        def forgotten(_result: object) -> None:
            self.forget_key_button.setEnabled(True)
            self._key_state_loaded(False)

        self.workers.run(
            self,
            lambda: secrets.set_secret(secrets.OPENAI_API_KEY, None),
            "removing the key from the keyring",
            on_success=forgotten,
            on_failure=self._show_error,
        )

    def chosen_settings(self) -> Settings:
        s = self.settings
        openai = dataclasses.replace(
            s.openai,
            base_url=_text_or_none(self.base_url_edit),
            chat_model=self.openai_model.currentText().strip() or s.openai.chat_model,
            embedding_model=self.openai_embedding.text().strip() or s.openai.embedding_model,
            use_memories=self.openai_memories.isChecked(),
        )
        bedrock = dataclasses.replace(
            s.bedrock,
            region=_text_or_none(self.region_edit),
            profile=_text_or_none(self.profile_edit),
            chat_model=self.bedrock_model.currentText().strip() or s.bedrock.chat_model,
            embedding_model=self.bedrock_embedding.text().strip() or s.bedrock.embedding_model,
            use_memories=self.bedrock_memories.isChecked(),
        )
        memory = dataclasses.replace(
            s.memory,
            ask_before_saving=self.ask_before_saving.isChecked(),
            extraction_enabled=self.extraction.isChecked(),
        )
        embedder = next(
            (value for value, button in self.embedder_buttons.items() if button.isChecked()), None
        )
        changes: dict[str, Any] = {
            "chat_provider": self.provider_combo.currentData(),
            "embedding_provider": embedder,
            "openai": openai,
            "bedrock": bedrock,
            "memory": memory,
            "store": self._chosen_store(),
        }
        for name, (basic, advanced) in self.section_forms.items():
            section = basic.value()
            section = dataclasses.replace(
                section, **{field: read() for field, read in advanced.readers.items()}
            )
            changes[name] = section
        return s.replace(**changes)

    # -- the server's models -----------------------------------------------------------

    def _server_changed(self) -> None:
        """A new address: its models replace the old server's (OpenAI's own: on request)."""
        address = _text_or_none(self.base_url_edit)
        if address != self._listed_for and address is not None:
            self.list_models()

    def list_models(self) -> None:
        """Ask the server for its models on a worker; the picker then offers exactly those."""
        server = self.chosen_settings().openai
        typed_key = self.key_edit.text().strip() or None
        self._list_runs += 1
        run = self._list_runs
        if server.base_url:
            try:
                check_base_url(server.base_url)
            except InvalidInputError as exc:  # no server to ask: say how to write it
                self._models_hint(str(exc), error=True)
                return
        self.list_models_button.setEnabled(False)
        self._models_hint("Asking the server for its models…")

        def listed(models: list[str]) -> None:
            if run == self._list_runs:
                self._models_listed(server.base_url, models)

        def failed(failure: Failure) -> None:
            if run == self._list_runs:
                self.list_models_button.setEnabled(True)
                self._models_hint(failure.message, error=True)

        self.workers.run(
            self,
            lambda: list_chat_models(server, typed_key),
            "listing the server's models",
            on_success=listed,
            on_failure=failed,
        )

    def _models_listed(self, base_url: str | None, models: list[str]) -> None:
        self._listed_for = base_url
        self.list_models_button.setEnabled(True)
        current = self.openai_model.currentText().strip()
        self.openai_model.clear()
        self.openai_model.addItems(models)
        if not models:
            self.openai_model.setCurrentText(current)
            self._models_hint("The server lists no models; load one there first.", error=True)
            return
        if current in models:
            self.openai_model.setCurrentText(current)
            self._models_hint(f"{_models(len(models))} on this server.")
            return
        self.openai_model.setCurrentIndex(-1)
        self.openai_model.setCurrentText(current)
        self._models_hint(
            f"This server does not list “{current}”; choose one of its {_models(len(models))}."
            if current
            else "Choose one of the server's models.",
            error=True,
        )

    def _bedrock_place(self) -> tuple[str | None, str | None]:
        return _text_or_none(self.region_edit), _text_or_none(self.profile_edit)

    def _bedrock_place_changed(self) -> None:
        """Another region or profile: its own models replace the list."""
        if (
            self._bedrock_listed_for is not None
            and self._bedrock_place() != self._bedrock_listed_for
        ):
            self.list_bedrock_models()

    def list_bedrock_models(self) -> None:
        """Ask Bedrock for the region's chat models on a worker; on failure the picker keeps
        the Nova models Timothy knows, and a note says why."""
        bedrock = self.chosen_settings().bedrock
        self._bedrock_listed_for = self._bedrock_place()
        self._bedrock_runs += 1
        run = self._bedrock_runs
        self.list_bedrock_models_button.setEnabled(False)
        self._bedrock_hint("Asking Bedrock for this region's chat models…")

        def listed(found: BedrockModels) -> None:
            if run == self._bedrock_runs:
                self._bedrock_models_shown(list(found.models))
                count = len(found.models)
                self._bedrock_hint(
                    f"{count} chat model{'s' if count != 1 else ''} in {found.region}."
                )

        def failed(failure: Failure) -> None:
            if run == self._bedrock_runs:
                self._bedrock_models_shown(BEDROCK_MODELS)
                self._bedrock_hint(
                    f"Could not list Bedrock's models: {failure.message} "
                    "These are the Nova models Timothy knows."
                )

        self.workers.run(
            self,
            lambda: list_bedrock_chat_models(bedrock),
            "listing Bedrock's models",
            on_success=listed,
            on_failure=failed,
        )

    def _bedrock_models_shown(self, models: list[str]) -> None:
        self.list_bedrock_models_button.setEnabled(True)
        current = self.bedrock_model.currentText().strip()
        self.bedrock_model.clear()
        self.bedrock_model.addItems(
            models if not current or current in models else [current, *models]
        )
        self.bedrock_model.setCurrentText(current)

    def _bedrock_hint(self, text: str) -> None:
        self.bedrock_models_state.setText(text)
        self.bedrock_models_state.setVisible(bool(text))

    def _models_hint(self, text: str, *, error: bool = False) -> None:
        colour = theme.colours().danger.name() if error else ""
        self.models_state.setStyleSheet(f"color: {colour};" if colour else "")
        self.models_state.setText(text)
        self.models_state.setVisible(bool(text))

    # -- actions -----------------------------------------------------------------------

    def test_connection(self) -> None:
        """Ask the chosen chat model for a word, with the key as typed (or the saved one)."""
        self._test(
            self.connection_check, self.test_button, self.cancel_test_button, self.test_result
        )

    def test_embeddings(self) -> None:
        """Embed one query with the chosen embedding provider."""
        self._test(
            self.embedding_check,
            self.embedding_test_button,
            self.cancel_embedding_test_button,
            self.embedding_test_result,
        )

    def _test(
        self,
        check: connection_check.ConnectionCheck,
        button: QPushButton,
        cancel: QPushButton,
        result: QLabel,
    ) -> None:
        """Run `check` on a worker. Cancel gives the dialog back at once: the request ends on
        its own (bounded by the provider's timeout) and its outcome is dropped."""
        chosen = self.chosen_settings()
        typed_key = self.key_edit.text().strip() or None
        run = self._test_runs[button] = self._test_runs.get(button, 0) + 1
        button.setEnabled(False)
        cancel.show()
        result.setStyleSheet("")
        result.setText("Testing…")

        def finish(mark: str, colour: str, message: str) -> None:
            if self._test_runs.get(button) != run:
                return  # cancelled, or a newer test is running
            self._end_test(button, cancel)
            result.setStyleSheet(f"color: {colour};")
            result.setText(f"{mark} {message}")

        self.workers.run(
            self,
            lambda: check(chosen, typed_key),
            "testing the connection",
            on_success=lambda message: finish("✓", theme.colours().success.name(), message),
            on_failure=lambda failure: finish("✗", theme.colours().danger.name(), failure.message),
        )

    def _cancel_test(self, button: QPushButton, cancel: QPushButton, result: QLabel) -> None:
        self._end_test(button, cancel)
        result.setStyleSheet("")
        result.setText("Cancelled.")

    def _end_test(self, button: QPushButton, cancel: QPushButton) -> None:
        self._test_runs[button] = self._test_runs.get(button, 0) + 1
        button.setEnabled(True)
        cancel.hide()

    def _chosen_store(self) -> StoreSettings:
        """The Storage page as chosen; the saved section while what is typed cannot work
        (Save says why)."""
        try:
            return self.storage_page.value()
        except InvalidInputError:
            return self.settings.store

    def _check_base_url(self, chosen: Settings) -> None:
        """The server address, when a chosen provider will use it, is one a client can
        reach (InvalidInputError says how to write it)."""
        address = chosen.openai.base_url
        if address and "openai" in (chosen.chat_provider, chosen.embedding_provider):
            check_base_url(address)

    def _refuse(self, page: str, message: str, field: QWidget | None = None) -> None:
        """Save cannot go ahead: show the page at fault, say why, and put the cursor there."""
        self.show_page(page)
        self.error_label.setText(message)
        self.error_label.show()
        if field is not None:
            field.setFocus(Qt.FocusReason.OtherFocusReason)

    def save(self) -> None:
        try:
            self.storage_page.value()
            chosen = self.chosen_settings()
        except InvalidInputError as exc:
            # The Storage page's checks are all about the server's address: the cursor goes there.
            self._refuse("storage", str(exc), self.storage_page.url_edit)
            self.storage_page.url_edit.selectAll()
            return
        try:
            self._check_base_url(chosen)
        except InvalidInputError as exc:
            self._refuse("chat", str(exc), self.base_url_edit)
            self.base_url_edit.selectAll()
            return
        key = self.key_edit.text().strip()
        self.buttons.setEnabled(False)
        self.error_label.hide()

        def work() -> Settings:
            if key:
                secrets.set_secret(secrets.OPENAI_API_KEY, key)  # raises if there is no safe place
            self.storage_page.save_password(chosen.store)
            save_settings(chosen)
            return chosen

        def failed(failure: Failure) -> None:
            if isinstance(failure.error, secrets.KeyringUnavailableError):
                failure = dataclasses.replace(
                    failure, message=_keyring_message(chosen.openai, failure.message)
                )
            self._show_error(failure)

        self.workers.run(self, work, "saving settings", on_success=self._saved, on_failure=failed)

    def _saved(self, settings: Settings) -> None:
        self.buttons.setEnabled(True)
        self.key_edit.clear()
        self.storage_page.saved()
        self.settings = settings
        self.settings_saved.emit(settings)
        self.accept()

    def _show_error(self, failure: Failure) -> None:
        self.buttons.setEnabled(True)
        self.error_label.setText(failure.message)
        self.error_label.show()
