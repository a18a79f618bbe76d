"""The status bar: which model answers, whether vector search is on, the memory counts, and
what consolidation is doing."""

from __future__ import annotations

from datetime import datetime
from urllib.parse import urlparse

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QLabel, QPushButton, QStatusBar, QWidget

from app.time_text import relative_time
from timothy.settings import Settings


def chat_text(settings: Settings) -> str:
    if settings.chat_provider == "openai":
        base = settings.openai.base_url
        where = "OpenAI"
        if base:
            host = urlparse(base).netloc or base
            where = {
                "127.0.0.1:11434": "Ollama",
                "localhost:11434": "Ollama",
                "127.0.0.1:1234": "LM Studio",
                "localhost:1234": "LM Studio",
            }.get(host, host)
        return f"{where} · {settings.openai.chat_model}"
    if settings.chat_provider == "bedrock":
        return f"Amazon Bedrock · {settings.bedrock.chat_model}"
    return "No chat model"


def embedding_text(settings: Settings) -> str:
    provider = settings.embedding_provider
    if provider == "local":
        return "Vector search: on this computer"
    if provider == "openai":
        return f"Vector search: {settings.openai.embedding_model}"
    if provider == "bedrock":
        return f"Vector search: {settings.bedrock.embedding_model}"
    return "Vector search off: no embedding provider"


def consolidation_text(last_run: datetime | None, running: bool, now: datetime) -> str:
    if running:
        return "Consolidating…"
    if last_run is None:
        return "Consolidation: never run"
    return f"Consolidated {relative_time(last_run, now)}"


class StatusBar(QStatusBar):
    settings_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setSizeGripEnabled(False)
        self.chat_label = QPushButton(self)
        self.chat_label.setFlat(True)
        self.chat_label.setToolTip("The chat model (click to change it)")
        self.chat_label.setStyleSheet("QPushButton { border: none; padding: 0 6px; }")
        self.chat_label.clicked.connect(self.settings_requested)
        self.embedding_label = QLabel(self)
        self.memory_label = QLabel(self)
        self.consolidation_label = QLabel(self)
        self.addWidget(self.chat_label)
        self.addWidget(self.embedding_label)
        self.addPermanentWidget(self.memory_label)
        self.addPermanentWidget(self.consolidation_label)

    def show_settings(self, settings: Settings) -> None:
        self.chat_label.setText(chat_text(settings))
        self.embedding_label.setText(embedding_text(settings))

    def show_memory_counts(self, active: int, staged: int) -> None:
        text = f"{active:,} memor{'y' if active == 1 else 'ies'}"
        if staged:
            text += f" · {staged} to confirm"
        self.memory_label.setText(text)

    def show_consolidation(self, text: str) -> None:
        self.consolidation_label.setText(text)
