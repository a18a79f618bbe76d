"""The centre of the window: a header, the transcript (or the first-run welcome), the composer.

It turns the chat engine's turn events into what the transcript shows: streamed text,
"Saving to memory…", the "Remembered" notice, the recall for "what the model saw", and a
plain sentence when a reply fails or is stopped. The engine's later, background news (facts
staged by extraction, a title, a compaction) arrives through the window.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QHBoxLayout,
    QLabel,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.chat.composer import Composer
from app.chat.instructions_dialog import InstructionsDialog
from app.chat.local_servers import LocalServer
from app.chat.model_picker import ModelPicker
from app.chat.temporary_banner import TemporaryBanner
from app.chat.title_label import TitleLabel
from app.chat.turn_runner import TurnRunner
from app.chat.welcome_panel import WelcomePanel
from app.conversations.chat_port import Conversations, TranscriptMessage
from app.conversations.store_conversations import summary_of
from app.jobs.workers import Failure, Workers
from app.look import icons
from app.look.tips import set_tip
from app.transcript.transcript_view import TranscriptView
from timothy.chat.engine import SERVER_AWAY_NOTE
from timothy.chat.events import (
    FactsProposed,
    MemorySaved,
    RecallFinished,
    ReplyDelta,
    SessionCompacted,
    TitleChanged,
    ToolFinished,
    ToolStarted,
    TurnFailed,
    TurnFinished,
    TurnStarted,
)
from timothy.memory.remember import REMEMBER_TOOL
from timothy.store.records import MessageStatus, RecallRecord, utc_now

log = logging.getLogger(__name__)

STOPPED = "Stopped. What arrived is kept."
NEW_CHAT = "New chat"
TEMPORARY_CHAT = "Temporary chat"
# The message box with no chat model to send to: why.
NO_MODEL_PLACEHOLDER = "Set up a chat model in Settings to start chatting"
KEYRING_LOCKED_PLACEHOLDER = "The API key cannot be read while the system keyring is locked"


class ChatPanel(QWidget):
    conversation_started = Signal(object)  # ConversationSummary
    conversation_opened = Signal(str)  # id, or "" for a new chat
    title_changed = Signal(str, str)  # (conversation id, title) the engine gave it
    title_shown = Signal(str)  # the header now reads this (a new chat: "New chat")
    recall_arrived = Signal(object, str, str)  # recall dict (or None), caption, why none
    recall_requested = Signal(object, str)  # the owner chose a reply's "Memories used"
    memory_saved = Signal(object)
    memory_undo_requested = Signal(object)
    staged_review_requested = Signal()
    settings_requested = Signal()
    retry_keyring_requested = Signal()  # the welcome's *Try again* for a locked keyring
    local_server_chosen = Signal(object, str)
    toggle_conversations_requested = Signal()
    toggle_memory_requested = Signal()
    turn_finished = Signal()
    failed = Signal(str)
    temporary_changed = Signal(bool)  # the owner turned temporary chat on or off

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
        self._failure: str | None = None
        self._cancelled = False  # the engine saved the reply as cancelled
        self._generation = 0  # which conversation the transcript shows (bumped on a switch)
        self._turn_generation = -1  # the generation the running turn belongs to
        self.temporary = False  # new chats are temporary ones (kept in memory only)
        self.temporary_id: str | None = None  # the temporary conversation on screen
        self.pending_instructions = ""  # for the chat not yet started
        self.instructions = ""  # those of the conversation on screen, as last read
        self.instructions_dialog: InstructionsDialog | None = None
        self._reload_after_turn = False  # an edit or a regeneration: versions to show
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
        self.title_label = TitleLabel(self)
        self.title_label.setProperty("heading", True)
        self.title_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        header.addWidget(self.title_label, 1)
        self.model_picker = ModelPicker(self)
        header.addWidget(self.model_picker)
        self.memory_toggle = self._tool("memory", "Show or hide the memory pane (Ctrl+Alt+B)")
        self.memory_toggle.clicked.connect(self.toggle_memory_requested)
        header.addWidget(self.memory_toggle)
        layout.addLayout(header)
        self.temporary_banner = TemporaryBanner(self)
        self.temporary_banner.leave_requested.connect(lambda: self.set_temporary(False))
        self.temporary_banner.hide()
        layout.addWidget(self.temporary_banner)

        self.stack = QStackedWidget(self)
        # The first-run welcome is built when it is first shown (or offered a local server):
        # an owner with a chat model never sees it, and its logo and layout cost the
        # window's start 50-100 ms.
        self._welcome: WelcomePanel | None = None
        self.blank = QWidget(self.stack)
        blank_layout = QVBoxLayout(self.blank)
        blank_layout.addStretch(2)
        greeting = QLabel("What can I help you with?", self.blank)
        font = greeting.font()
        font.setPointSizeF(font.pointSizeF() * 1.6)
        font.setWeight(font.Weight.DemiBold)
        greeting.setFont(font)
        greeting.setAlignment(Qt.AlignmentFlag.AlignCenter)
        greeting.setWordWrap(True)
        blank_layout.addWidget(greeting)
        self.blank_hint = QLabel(
            "Timothy remembers what you confirm, and shows you what it recalled.", self.blank
        )
        self.blank_hint.setProperty("muted", True)
        self.blank_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.blank_hint.setWordWrap(True)
        blank_layout.addWidget(self.blank_hint)
        blank_layout.addStretch(3)
        self.stack.addWidget(self.blank)
        self.transcript = TranscriptView(self.stack)
        self.transcript.regenerate_requested.connect(self.regenerate)
        self.transcript.edit_requested.connect(self.edit_message)
        self.transcript.version_requested.connect(self.choose_version)
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
        # In the message box, not the header: the header keeps its room for the title.
        self.instructions_button = self._tool(
            "instructions", "Instructions for this conversation (Ctrl+Shift+I)"
        )
        # Ticked while the conversation has instructions (a click opens them, whatever
        # state Qt flipped the tick to; `_show_instructions` puts it right).
        self.instructions_button.setCheckable(True)
        self.instructions_button.clicked.connect(lambda _checked: self.edit_instructions())
        self.composer.add_tool(self.instructions_button)
        composer_row.addWidget(self.composer, 100)
        composer_row.addStretch(1)
        layout.addLayout(composer_row)
        self.chat_ready = True
        self.keyring_locked = False  # a chat model is set up but its key cannot be read
        self.paused: str | None = None  # why no turn may start now (a restore), or None
        self.new_chat()

    def _tool(self, icon: str, tip: str) -> QToolButton:
        button = QToolButton(self)
        button.setProperty("flat", True)
        button.setIcon(icons.icon(icon, "muted", 18))
        set_tip(button, tip)
        return button

    # -- what the centre shows ---------------------------------------------------------

    @property
    def welcome(self) -> WelcomePanel:
        if self._welcome is None:
            self._welcome = WelcomePanel(self.stack)
            self._welcome.settings_requested.connect(self.settings_requested)
            self._welcome.retry_keyring_requested.connect(self.retry_keyring_requested)
            self._welcome.show_keyring_locked(self.keyring_locked)
            self._welcome.local_server_chosen.connect(self.local_server_chosen)
            self.stack.addWidget(self._welcome)
        return self._welcome

    def welcome_built(self) -> bool:
        return self._welcome is not None

    def set_chat_ready(self, ready: bool, *, keyring_locked: bool = False) -> None:
        """With no chat model the welcome explains what to set up (memory still works);
        `keyring_locked`: one is set up, but the locked keyring keeps its key, and the
        welcome and the message box say that instead."""
        self.chat_ready = ready
        self.keyring_locked = keyring_locked and not ready
        if self._welcome is not None:
            self._welcome.show_keyring_locked(self.keyring_locked)
        self._offer_composer()
        self._show_page()

    def set_paused(self, reason: str | None) -> None:
        """While the memory store is being restored no turn starts; the composer says why
        (None: turns may start again)."""
        self.paused = reason
        self._offer_composer()

    def _offer_composer(self) -> None:
        self.transcript.set_turns_allowed(self.paused is None and self.chat_ready)
        if self.paused is not None:
            self.composer.set_available(False, self.paused)
            return
        ready = self.chat_ready
        why = KEYRING_LOCKED_PLACEHOLDER if self.keyring_locked else NO_MODEL_PLACEHOLDER
        self.composer.set_available(ready, None if ready else why)

    def _show_page(self) -> None:
        before = (self.stack.currentWidget(), self.composer.isHidden())
        focused = QApplication.focusWidget()
        # Focus on what is about to be hidden (or nowhere in this window): Qt would hand it
        # to the next widget in the window (the memory pane's Hide button).
        lost = (
            focused is None
            or focused.window() is not self.window()
            or self.stack.isAncestorOf(focused)
            or self.composer.isAncestorOf(focused)
        )
        if not self.transcript.is_empty():
            self.stack.setCurrentWidget(self.transcript)
        elif not self.chat_ready:
            self.stack.setCurrentWidget(self.welcome)
        else:
            self.stack.setCurrentWidget(self.blank)
        self.composer.setVisible(self.chat_ready or not self.transcript.is_empty())
        if lost and before != (self.stack.currentWidget(), self.composer.isHidden()):
            self.take_focus()

    def take_focus(self) -> None:
        """The keyboard comes to the chat: the welcome's Set up button when that is shown,
        else the message box (when there is one)."""
        welcome = self._welcome
        if welcome is not None and self.stack.currentWidget() is welcome:
            welcome.settings_button.setFocus(Qt.FocusReason.OtherFocusReason)
        elif not self.composer.isHidden():
            self.composer.focus()

    def set_title(self, title: str) -> None:
        self.title = title
        self.title_label.setText(title)
        self.title_shown.emit(title)

    def new_chat(self) -> None:
        if self.runner.running:
            self.stop()
        self._leave_temporary()
        self._generation += 1
        self.conversation_id = None
        self.pending_instructions = ""
        self._show_instructions("")
        self.transcript.clear()
        self.set_title(TEMPORARY_CHAT if self.temporary else NEW_CHAT)
        self._show_page()
        self.composer.focus()
        self.conversation_opened.emit("")

    def open_conversation(
        self,
        conversation_id: str,
        title: str = "",
        *,
        hit: str | None = None,
        terms: Sequence[str] = (),
    ) -> None:
        """Show a conversation; `hit` is the id of a message a search found, shown with the
        search's `terms` marked instead of the conversation's end."""
        if conversation_id == self.conversation_id and not self.transcript.is_empty():
            if hit is not None:
                self.transcript.reveal(hit, terms)  # once it is built, if it is not yet
            return
        if self.runner.running:
            self.stop()
        if self.temporary:  # a saved conversation is not a temporary one
            self._set_temporary_look(False)
            self.temporary_changed.emit(False)
        self._leave_temporary()
        self._load(conversation_id, title, hit=hit, terms=terms)

    # -- temporary chat ----------------------------------------------------------------

    @property
    def saved_conversation_id(self) -> str | None:
        """The conversation on screen when it is a saved one (None for a temporary one)."""
        if self.conversation_id is not None and self.conversation_id == self.temporary_id:
            return None
        return self.conversation_id

    def set_temporary(self, on: bool) -> None:
        """Temporary chat on: a new chat in which nothing is recalled or remembered, kept in
        memory only and erased when it is closed. Off: that chat is closed and erased."""
        if on == self.temporary:
            self.temporary_changed.emit(on)  # the switches that flipped themselves flip back
            return
        self._set_temporary_look(on)
        self.new_chat()
        self.temporary_changed.emit(on)

    def _set_temporary_look(self, on: bool) -> None:
        self.temporary = on
        self.temporary_banner.setVisible(on)
        self.setProperty("temporary", on)
        self.blank_hint.setText(
            "Nothing you say here is recalled or remembered, and this chat is erased when "
            "you close it."
            if on
            else "Timothy remembers what you confirm, and shows you what it recalled."
        )
        style = self.style()
        canvas = self.transcript.widget()
        for widget in (self, self.transcript, canvas, self.transcript.column):
            if widget is None:
                continue
            style.unpolish(widget)
            style.polish(widget)
            widget.update()

    def _leave_temporary(self) -> None:
        """The temporary conversation on screen is closed: erase it."""
        closed, self.temporary_id = self.temporary_id, None
        if closed is not None:
            conversations = self.conversations
            self.workers.run(
                self, lambda: conversations.discard(closed), "closing the temporary chat"
            )

    # -- instructions ------------------------------------------------------------------

    def edit_instructions(self) -> None:
        """The owner's note for this conversation (for a new chat: kept until it starts)."""
        self.instructions_button.setChecked(self.instructions != "")
        conversation_id = self.conversation_id
        if conversation_id is None:
            self._open_instructions(self.pending_instructions, None)
            return
        self.workers.run(
            self,
            lambda: self.conversations.instructions_of(conversation_id),
            "reading the instructions",
            on_success=lambda text: self._open_instructions(text, conversation_id),
            on_failure=lambda failure: self.failed.emit(failure.message),
        )

    def _open_instructions(self, text: str, conversation_id: str | None) -> None:
        if conversation_id != self.conversation_id:
            return  # the owner moved on meanwhile
        dialog = InstructionsDialog(text, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.finished.connect(lambda result: self._instructions_chosen(dialog, result))
        self.instructions_dialog = dialog
        dialog.open()

    def _instructions_chosen(self, dialog: InstructionsDialog, result: int) -> None:
        self.instructions_dialog = None
        if result != QDialog.DialogCode.Accepted:
            return
        text = dialog.instructions()
        conversation_id = self.conversation_id
        self._show_instructions(text)
        if conversation_id is None:
            self.pending_instructions = text
            return
        self.workers.run(
            self,
            lambda: self.conversations.set_instructions(conversation_id, text),
            "saving the instructions",
            on_failure=lambda failure: self.failed.emit(failure.message),
        )

    def _show_instructions(self, text: str) -> None:
        self.instructions = text
        tip = "Instructions for this conversation (Ctrl+Shift+I)"
        if text:
            tip += ":\n" + (text if len(text) <= 300 else text[:299] + "…")
        set_tip(self.instructions_button, tip)
        self.instructions_button.setChecked(bool(text))

    def reload_conversation(self) -> bool:
        """Read the open conversation from the store again (after memories were forgotten
        for good, so its replies' recall records are the redacted ones). Not while a reply
        is running: False then, and nothing changes."""
        conversation_id = self.conversation_id
        if conversation_id is None or self.runner.running:
            return False
        self._load(conversation_id, self.title)
        return True

    def _load(
        self,
        conversation_id: str,
        title: str,
        *,
        hit: str | None = None,
        terms: Sequence[str] = (),
        focus: str | None = None,
    ) -> None:
        """Show a conversation from the store; with `hit` (a search result), scrolled to that
        message with `terms` marked; with `focus`, scrolled to that message (a version the
        owner switched to); otherwise to the end."""
        self._generation += 1
        generation = self._generation
        self.conversation_id = conversation_id
        self.set_title(title or "Conversation")
        self.transcript.clear()
        self._show_instructions("")
        conversations = self.conversations

        def work() -> tuple[list[TranscriptMessage], str]:
            messages = list(conversations.messages(conversation_id))
            return messages, conversations.instructions_of(conversation_id)

        self.workers.run(
            self,
            work,
            "opening the conversation",
            on_success=lambda found: self._opened(
                generation, *found, hit=hit, terms=terms, focus=focus
            ),
            on_failure=lambda failure: self.failed.emit(failure.message),
        )
        if conversation_id != self.temporary_id:
            self.conversation_opened.emit(conversation_id)

    def _opened(
        self,
        generation: int,
        messages: list[TranscriptMessage],
        instructions: str = "",
        *,
        hit: str | None = None,
        terms: Sequence[str] = (),
        focus: str | None = None,
    ) -> None:
        if generation != self._generation:
            return
        self._show_instructions(instructions)
        # The newest messages now, older ones above them a slice per event-loop turn.
        self.transcript.show_messages(messages, hit=hit, terms=terms, focus=focus)
        self._show_page()
        for message in reversed(messages):
            if message.role == "assistant":
                self.recall_arrived.emit(message.recall, self._caption_for(message.recall), "")
                break

    def _caption_for(self, recall: RecallRecord | None) -> str:
        for widget in reversed(self.transcript.messages):
            if widget.role == "assistant" and widget.recall is recall:
                return f"The reply of {widget.time_label.text()}"
        return "Latest turn"

    # -- a turn ------------------------------------------------------------------------

    @property
    def streaming(self) -> bool:
        return self.runner.running

    def send(self, text: str) -> None:
        if self.runner.running or self.paused is not None or not text.strip():
            return
        conversation_id = self.conversation_id
        temporary = self.temporary and conversation_id is None
        instructions = self.pending_instructions if conversation_id is None else ""
        self.transcript.add_user_message(text, self.now())
        self._begin()
        self.runner.start(
            lambda cancel: self.conversations.send(
                conversation_id, text, cancel, temporary=temporary, instructions=instructions
            ),
            "getting the reply",
        )

    def edit_message(self, message_id: str, text: str) -> None:
        """Resend an edited owner message: what followed it leaves the view (it stays in the
        conversation as an earlier branch, a version away)."""
        conversation_id = self.conversation_id
        if self.runner.running or self.paused is not None or conversation_id is None:
            return
        if not text.strip():
            return
        self.transcript.remove_from(message_id)
        self.transcript.add_user_message(text, self.now())
        self._reload_after_turn = True
        self._begin()
        self.runner.start(
            lambda cancel: self.conversations.edit(conversation_id, message_id, text, cancel),
            "sending the edited message",
        )

    def choose_version(self, message_id: str) -> None:
        """Show another version of a message (and the turns that followed it)."""
        conversation_id = self.conversation_id
        if self.runner.running or conversation_id is None:
            return
        self.transcript.set_idle(False)
        generation = self._generation
        self.workers.run(
            self,
            lambda: self.conversations.select_branch(conversation_id, message_id),
            "switching versions",
            on_success=lambda _none: self._version_chosen(generation, message_id),
            on_failure=lambda failure: self.failed.emit(failure.message),
        )

    def _version_chosen(self, generation: int, message_id: str) -> None:
        if generation == self._generation and self.conversation_id is not None:
            self._load(self.conversation_id, self.title, focus=message_id)

    def regenerate(self) -> None:
        conversation_id = self.conversation_id
        if self.runner.running or self.paused is not None or conversation_id is None:
            return
        self.transcript.remove_last_reply()
        self._reload_after_turn = True
        self._begin()
        self.runner.start(
            lambda cancel: self.conversations.regenerate(conversation_id, cancel),
            "regenerating the reply",
        )

    def _begin(self) -> None:
        self._turn_generation = self._generation
        self._failure = None
        self._cancelled = False
        self._show_page()
        self.transcript.begin_reply(self.now())
        self.composer.set_streaming(True)

    def stop(self) -> None:
        if self.runner.running:
            self.runner.stop()

    @property
    def _turn_shown(self) -> bool:
        """The running turn belongs to the conversation on screen (the owner may have moved
        to another one; the turn was stopped then, and its last events go nowhere)."""
        return self._turn_generation == self._generation

    def _event(self, event: object) -> None:
        if not self._turn_shown:
            return
        transcript = self.transcript
        match event:
            case ReplyDelta(text=text):
                transcript.append_text(text)
            case TurnStarted(session=session, user_message=message, new_session=new):
                self._name_last("user", message.id)
                if new:
                    self.conversation_id = session.id
                    if self.temporary:
                        self.temporary_id = session.id  # never listed, never saved
                    else:
                        self.set_title(session.title)
                        self.conversation_started.emit(summary_of(session))
            case RecallFinished(recall=recall, note=note, server_refused=refused):
                transcript.set_reply_recall(recall)
                if refused is not None or note == SERVER_AWAY_NOTE:
                    transcript.show_server_away(refused)
                self.recall_arrived.emit(recall, "Latest turn", note or "")
            case ToolStarted(name=name):
                transcript.flush()
                transcript.show_activity(
                    "Saving to memory" if name == REMEMBER_TOOL.name else f"Using {name}"
                )
            case ToolFinished():
                transcript.show_activity("Thinking")
            case MemorySaved(memory=memory, staged_because=why):
                transcript.flush()
                transcript.show_memory_saved(memory, why)
                self.memory_saved.emit(memory)
            case TurnFinished(message=message):
                self._name_last("assistant", message.id)
                self._cancelled = message.status is MessageStatus.CANCELLED
                transcript.set_reply_usage(
                    message.model,
                    message.input_tokens,
                    message.output_tokens,
                    message.tokens_per_second,
                )
            case TurnFailed(error=error):
                self._failure = error
            case _:
                pass  # usage: nothing to show

    def _name_last(self, role: str, message_id: str) -> None:
        """The stored id of the newest widget of this role (its copy, recall and compaction
        placement refer to it)."""
        for widget in reversed(self.transcript.messages):
            if widget.role == role:
                if widget.message_id is None:
                    widget.message_id = message_id
                return

    def _turn_failed(self, failure: Failure) -> None:
        if self._turn_shown:
            self._failure = failure.message

    def _turn_finished(self, stopped: bool) -> None:
        reload = self._reload_after_turn and self._turn_shown and not self._failure
        self._reload_after_turn = False
        if self._turn_shown:
            if self._failure:
                self.transcript.end_reply(self._failure, error=True)
            elif stopped or self._cancelled:
                self.transcript.end_reply(STOPPED)
            else:
                self.transcript.end_reply()
        self.composer.set_streaming(False)
        self.turn_finished.emit()
        if reload:  # an edit or a regeneration: show its versions' switcher
            self.reload_conversation()

    # -- what the engine reports later -------------------------------------------------

    def show_facts_proposed(self, event: FactsProposed) -> None:
        """Extraction staged facts: a badge under this conversation's last reply."""
        if event.session_id == self.conversation_id and event.memories:
            self.transcript.show_facts_staged([memory.id for memory in event.memories])

    def fact_reviewed(self, memory_id: str) -> None:
        """A proposed fact was confirmed, corrected, rejected or forgotten."""
        self.transcript.fact_reviewed(memory_id)

    def show_title(self, event: TitleChanged) -> None:
        if event.session.id == self.conversation_id:
            self.set_title(event.session.title)
        self.title_changed.emit(event.session.id, event.session.title)

    def show_compaction(self, event: SessionCompacted) -> None:
        """Older turns of this conversation were summarised: show where, once it is known."""
        if event.session_id != self.conversation_id:
            return
        conversation_id = event.session_id
        generation = self._generation

        def work() -> tuple[TranscriptMessage, str | None] | None:
            shown = list(self.conversations.messages(conversation_id))
            for position, message in enumerate(shown):
                if message.id == event.summary.id:
                    before = shown[position - 1].id if position > 0 else None
                    return message, before
            return None

        def found(result: tuple[TranscriptMessage, str | None] | None) -> None:
            if result is not None and generation == self._generation:
                self.transcript.insert_summary(*result)

        self.workers.run(self, work, "showing the summary", on_success=found)

    def mark_memory_rejected(self, memory_id: str) -> None:
        self.transcript.mark_memory_rejected(memory_id)

    def show_local_servers(self, servers: list[LocalServer]) -> None:
        self.welcome.show_local_servers(servers)
