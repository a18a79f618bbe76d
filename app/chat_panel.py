"""The centre of the window: a header, the transcript (or the first-run welcome), the composer.

It turns a conversation's turn events into what the transcript shows: streamed text,
"Saving to memory…", the "Remembered" notice, the staged-facts badge, the recall for
"what the model saw", and a plain sentence when a reply fails or is stopped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app import icons
from app.chat_port import (
    Conversations,
    ConversationStarted,
    FactsStaged,
    MemorySaved,
    MessageSaved,
    RecallShown,
    TitleChanged,
    TranscriptMessage,
    TurnFailed,
)
from app.composer import Composer
from app.local_servers import LocalServer
from app.message_widget import MessageWidget
from app.transcript_view import TranscriptView
from app.turn_runner import TurnRunner
from app.welcome_panel import WelcomePanel
from app.workers import Failure, Workers
from timothy.providers.base import Stop, TextDelta, ToolCallEvent
from timothy.store.records import utc_now

log = logging.getLogger(__name__)

STOP_NOTES = {
    "cancelled": "Stopped. What arrived is kept.",
    "max_tokens": "The reply reached its length limit.",
}


class ChatPanel(QWidget):
    conversation_started = Signal(object)  # ConversationSummary
    conversation_opened = Signal(str)  # id, or "" for a new chat
    title_changed = Signal(str, str)
    recall_arrived = Signal(object, str)  # recall dict (or None), caption
    recall_requested = Signal(object, str)  # the owner chose a reply's "Memories used"
    memory_saved = Signal(object)
    memory_undo_requested = Signal(object)
    staged_review_requested = Signal()
    settings_requested = Signal()
    local_server_chosen = Signal(object, str)
    toggle_conversations_requested = Signal()
    toggle_memory_requested = Signal()
    turn_finished = Signal()
    failed = Signal(str)

    def __init__(
        self,
        conversations: Conversations,
        workers: Workers,
        network: Workers,
        *,
        now: Callable[[], datetime] = utc_now,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("ChatPanel")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.conversations = conversations
        self.workers = workers
        self.now = now
        self.conversation_id: str | None = None
        self.title = ""
        self._stop_reason = ""
        self._failure: str | None = None
        self._generation = 0
        self.runner = TurnRunner(network, self)
        self.runner.event_arrived.connect(self._event)
        self.runner.turn_failed.connect(self._turn_failed)
        self.runner.turn_finished.connect(self._turn_finished)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        header = QHBoxLayout()
        header.setContentsMargins(8, 6, 8, 6)
        self.conversations_toggle = self._tool("panel-left", "Show or hide conversations (Ctrl+B)")
        self.conversations_toggle.clicked.connect(self.toggle_conversations_requested)
        header.addWidget(self.conversations_toggle)
        self.title_label = QLabel(self)
        self.title_label.setProperty("heading", True)
        self.title_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        header.addWidget(self.title_label, 1)
        self.memory_toggle = self._tool("memory", "Show or hide the memory pane (Ctrl+Alt+B)")
        self.memory_toggle.clicked.connect(self.toggle_memory_requested)
        header.addWidget(self.memory_toggle)
        layout.addLayout(header)

        self.stack = QStackedWidget(self)
        self.welcome = WelcomePanel(self.stack)
        self.welcome.settings_requested.connect(self.settings_requested)
        self.welcome.local_server_chosen.connect(self.local_server_chosen)
        self.stack.addWidget(self.welcome)
        self.blank = QWidget(self.stack)
        blank_layout = QVBoxLayout(self.blank)
        blank_layout.addStretch(2)
        greeting = QLabel("What can I help you with?", self.blank)
        font = greeting.font()
        font.setPointSizeF(font.pointSizeF() * 1.6)
        font.setWeight(font.Weight.DemiBold)
        greeting.setFont(font)
        greeting.setAlignment(Qt.AlignmentFlag.AlignCenter)
        blank_layout.addWidget(greeting)
        self.blank_hint = QLabel(
            "Timothy remembers what you confirm, and shows you what it recalled.", self.blank
        )
        self.blank_hint.setProperty("muted", True)
        self.blank_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        blank_layout.addWidget(self.blank_hint)
        blank_layout.addStretch(3)
        self.stack.addWidget(self.blank)
        self.transcript = TranscriptView(self.stack)
        self.transcript.regenerate_requested.connect(self.regenerate)
        self.transcript.recall_requested.connect(
            lambda recall: self.recall_requested.emit(recall, self._caption_for(recall))
        )
        self.transcript.memory_undo_requested.connect(self.memory_undo_requested)
        self.transcript.staged_review_requested.connect(self.staged_review_requested)
        self.stack.addWidget(self.transcript)
        layout.addWidget(self.stack, 1)

        composer_row = QHBoxLayout()
        composer_row.setContentsMargins(24, 4, 24, 10)
        composer_row.addStretch(1)
        self.composer = Composer(self)
        self.composer.setMaximumWidth(860)
        self.composer.message_submitted.connect(self.send)
        self.composer.stop_requested.connect(self.stop)
        composer_row.addWidget(self.composer, 100)
        composer_row.addStretch(1)
        layout.addLayout(composer_row)
        self.chat_ready = True
        self.new_chat()

    def _tool(self, icon: str, tip: str) -> QToolButton:
        button = QToolButton(self)
        button.setProperty("flat", True)
        button.setIcon(icons.icon(icon, "muted", 18))
        button.setToolTip(tip)
        return button

    # -- what the centre shows ---------------------------------------------------------

    def set_chat_ready(self, ready: bool) -> None:
        """With no chat model the welcome explains what to set up (memory still works)."""
        self.chat_ready = ready
        self.composer.set_available(
            ready, None if ready else "Set up a chat model in Settings to start chatting"
        )
        self.composer.setVisible(ready or not self.transcript.is_empty())
        self._show_page()

    def _show_page(self) -> None:
        if not self.transcript.is_empty():
            self.stack.setCurrentWidget(self.transcript)
        elif not self.chat_ready:
            self.stack.setCurrentWidget(self.welcome)
        else:
            self.stack.setCurrentWidget(self.blank)
        self.composer.setVisible(self.chat_ready or not self.transcript.is_empty())

    def _set_title(self, title: str) -> None:
        self.title = title
        self.title_label.setText(title)

    def new_chat(self) -> None:
        if self.runner.running:
            self.stop()
        self._generation += 1
        self.conversation_id = None
        self.transcript.clear()
        self._set_title("New chat")
        self._show_page()
        self.composer.focus()
        self.conversation_opened.emit("")

    def open_conversation(self, conversation_id: str, title: str = "") -> None:
        if conversation_id == self.conversation_id and not self.transcript.is_empty():
            return
        if self.runner.running:
            self.stop()
        self._generation += 1
        generation = self._generation
        self.conversation_id = conversation_id
        self._set_title(title or "Conversation")
        self.transcript.clear()
        self.workers.run(
            self,
            lambda: list(self.conversations.messages(conversation_id)),
            "opening the conversation",
            on_success=lambda messages: self._opened(generation, messages),
            on_failure=lambda failure: self.failed.emit(failure.message),
        )
        self.conversation_opened.emit(conversation_id)

    def _opened(self, generation: int, messages: list[TranscriptMessage]) -> None:
        if generation != self._generation:
            return
        self.transcript.show_messages(messages)
        self._show_page()
        self.transcript.scroll_to_bottom()
        for message in reversed(messages):
            if message.role == "assistant":
                self.recall_arrived.emit(message.recall, self._caption_for(message.recall))
                break

    def _caption_for(self, recall: dict[str, Any] | None) -> str:
        for widget in reversed(self.transcript.messages):
            if widget.role == "assistant" and widget.recall is recall:
                return f"The reply of {widget.time_label.text()}"
        return "Latest turn"

    # -- a turn ------------------------------------------------------------------------

    @property
    def streaming(self) -> bool:
        return self.runner.running

    def send(self, text: str) -> None:
        if self.runner.running or not text.strip():
            return
        conversation_id = self.conversation_id
        self.transcript.add_user_message(text, self.now())
        self._begin()
        self.runner.start(
            lambda cancel: self.conversations.send(conversation_id, text, cancel),
            "getting the reply",
        )

    def regenerate(self) -> None:
        conversation_id = self.conversation_id
        if self.runner.running or conversation_id is None:
            return
        self.transcript.remove_last_reply()
        self._begin()
        self.runner.start(
            lambda cancel: self.conversations.regenerate(conversation_id, cancel),
            "regenerating the reply",
        )

    def _begin(self) -> None:
        self._stop_reason = ""
        self._failure = None
        self._show_page()
        self.transcript.begin_reply(self.now())
        self.composer.set_streaming(True)

    def stop(self) -> None:
        if self.runner.running:
            self.runner.stop()

    def _event(self, event: object) -> None:
        transcript = self.transcript
        match event:
            case TextDelta(text=text):
                transcript.append_text(text)
            case ToolCallEvent(call=call):
                if call.name == "remember":
                    transcript.show_activity("Saving to memory")
                else:
                    transcript.show_activity(f"Using {call.name}")
            case Stop(reason=reason):
                self._stop_reason = reason
            case ConversationStarted(conversation=conversation):
                self.conversation_id = conversation.id
                self._set_title(conversation.title)
                self.conversation_started.emit(conversation)
            case TitleChanged(conversation_id=conversation_id, title=title):
                if conversation_id == self.conversation_id:
                    self._set_title(title)
                self.title_changed.emit(conversation_id, title)
            case MemorySaved(memory=memory):
                transcript.flush()
                transcript.show_memory_saved(memory)
                self.memory_saved.emit(memory)
            case FactsStaged(memories=memories):
                if memories:
                    transcript.show_facts_staged(len(memories))
            case RecallShown(recall=recall):
                transcript.set_reply_recall(recall)
                self.recall_arrived.emit(recall, "Latest turn")
            case TurnFailed(message=message):
                self._failure = message
            case MessageSaved(message=message):
                self._saved(message)
            case _:
                pass  # Usage and anything newer: nothing to show

    def _saved(self, message: TranscriptMessage) -> None:
        widgets: list[MessageWidget] = [
            w for w in self.transcript.messages if w.role == message.role
        ]
        if widgets and widgets[-1].message_id is None:
            widgets[-1].message_id = message.id

    def _turn_failed(self, failure: Failure) -> None:
        self._failure = failure.message

    def _turn_finished(self, stopped: bool) -> None:
        if self._failure:
            self.transcript.end_reply(self._failure, error=True)
        elif stopped:
            self.transcript.end_reply(STOP_NOTES["cancelled"])
        else:
            self.transcript.end_reply(STOP_NOTES.get(self._stop_reason))
        self.composer.set_streaming(False)
        self.turn_finished.emit()

    def mark_memory_forgotten(self, memory_id: str) -> None:
        self.transcript.mark_memory_forgotten(memory_id)

    def show_local_servers(self, servers: list[LocalServer]) -> None:
        self.welcome.show_local_servers(servers)
