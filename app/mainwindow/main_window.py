"""The main window: conversations on the left, the chat in the centre, memory on the right.

It wires the panes together and owns what outlives them: the workers, the settings, the
assistant (chat engine and embedding queue, rebuilt when settings change), the background
jobs (re-embedding, daily consolidation), the window's remembered state, and the banner for
errors, offers and undo.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from PySide6.QtCore import QByteArray, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDesktopServices, QKeySequence, QShortcut
from PySide6.QtWidgets import QMainWindow, QSplitter, QVBoxLayout, QWidget

from app.chat.assistant import Assistant, EmbeddingState, Setup
from app.chat.chat_panel import ChatPanel
from app.chat.local_servers import LocalServer, find_local_servers
from app.conversations.chat_port import Conversations, ConversationSummary, NoConversations
from app.conversations.conversation_list import ConversationList
from app.conversations.store_conversations import StoreConversations
from app.jobs.consolidation_dialog import ConsolidationDialog
from app.jobs.daily_consolidation import DailyConsolidation
from app.jobs.embedding_backfill import EmbeddingBackfill
from app.jobs.workers import Failure, Workers
from app.look import icons
from app.mainwindow.banner import Banner
from app.mainwindow.status_bar import StatusBar, consolidation_text, model_label
from app.mainwindow.window_state import WindowState
from app.memories.memory_pane import MemoryPane
from app.settings.settings_dialog import SettingsDialog
from timothy import paths
from timothy.memory.consolidation import ConsolidationReport, last_report, last_run
from timothy.memory.embedding import BackfillResult
from timothy.settings import Settings, load_settings, save_settings
from timothy.store import Memory, MemoryStatus, Store
from timothy.store.records import utc_now

log = logging.getLogger(__name__)

DELETE_UNDO_MS = 8000
DEFAULT_SIZES = [260, 780, 420]
CONVERSATION_LIMIT = 500
# Consolidation waits this long after start-up, so it never competes with the first loads;
# a window left open looks again every hour (a run is due once a day).
CONSOLIDATION_DELAY_MS = 15_000
CONSOLIDATION_CHECK_MS = 3_600_000


class MainWindow(QMainWindow):
    started = Signal()  # the first loads were asked for; the window is usable
    settings_applied = Signal(object)  # Settings: the chat engine rebuilds its provider

    def __init__(
        self,
        store: Store | None,
        *,
        store_error: str | None = None,
        settings: Settings | None = None,
        now: Callable[[], datetime] = utc_now,
        window_state: WindowState | None = None,
        probe_local_servers: Callable[[], list[LocalServer]] = find_local_servers,
        consolidation_delay_ms: int | None = CONSOLIDATION_DELAY_MS,
    ) -> None:
        """`consolidation_delay_ms`: when daily consolidation may start after start-up
        (None: not in this window, as in tests that do not exercise it)."""
        super().__init__()
        self.store = store
        self.now = now
        self.settings = settings if settings is not None else load_settings()
        self.state = window_state or WindowState()
        self.probe_local_servers = probe_local_servers
        self.consolidation_delay_ms = consolidation_delay_ms
        self.workers = Workers(self, threads=2)  # the store
        self.network = Workers(self, threads=3)  # the chat stream, provider set-up, tests
        self.jobs = Workers(self, detached=True)  # long jobs: re-embedding, consolidation
        self.store_conversations = StoreConversations(store) if store is not None else None
        self.conversations: Conversations = self.store_conversations or NoConversations()
        self.assistant = (
            Assistant(store, self.store_conversations, self.network, self)
            if store is not None and self.store_conversations is not None
            else None
        )
        self.backfill = EmbeddingBackfill(self.jobs, self)
        self.consolidation = DailyConsolidation(self.jobs, self)
        self._consolidation_scheduled = False
        self.settings_dialog: SettingsDialog | None = None
        self.consolidation_dialog: ConsolidationDialog | None = None
        self._conversation_search = ""
        self._closing = False
        self.setWindowTitle("Timothy")
        self.resize(1380, 860)
        self.setMinimumSize(760, 480)

        central = QWidget(self)
        layout = QVBoxLayout(central)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        self.banner = Banner(central)
        self.banner.action_clicked.connect(self._banner_action)
        layout.addWidget(self.banner)
        self.splitter = QSplitter(Qt.Orientation.Horizontal, central)
        self.splitter.setChildrenCollapsible(False)
        self.sidebar = ConversationList(self.splitter)
        self.chat = ChatPanel(
            self.conversations, self.workers, self.network, now=now, parent=self.splitter
        )
        self.memory_pane = MemoryPane(
            store,
            self.workers,
            now=now,
            title_of=self.conversations.title_of,
            store_error=store_error,
            recall_settings=lambda: self.settings.recall,
            parent=self.splitter,
        )
        self.memory_pane.setMinimumWidth(340)
        self.splitter.addWidget(self.sidebar)
        self.splitter.addWidget(self.chat)
        self.splitter.addWidget(self.memory_pane)
        self.splitter.setStretchFactor(0, 0)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setStretchFactor(2, 0)
        layout.addWidget(self.splitter, 1)
        self.setCentralWidget(central)
        self.status = StatusBar(self)
        self.status.settings_requested.connect(lambda: self.open_settings())
        self.status.consolidation_requested.connect(self.show_consolidation_details)
        self.status.reembed_requested.connect(self.start_backfill)
        self.status.backfill_stop_requested.connect(self.backfill.cancel)
        self.setStatusBar(self.status)

        self._connect()
        self._build_menus()
        self._restore_state()
        self.apply_settings(self.settings)
        if store is None:
            self.show_error(
                "Your memory store could not be opened"
                + (f": {store_error}" if store_error else ".")
                + " Conversations and memories are kept there, so chatting waits until it "
                "opens."
            )
        self._consolidation_timer = QTimer(self)
        self._consolidation_timer.setInterval(CONSOLIDATION_CHECK_MS)
        self._consolidation_timer.timeout.connect(self.consolidate_if_due)
        self._counts_timer = QTimer(self)
        self._counts_timer.setSingleShot(True)
        self._counts_timer.setInterval(200)
        self._counts_timer.timeout.connect(self.refresh_counts)
        QTimer.singleShot(0, self._start)

    # -- wiring ------------------------------------------------------------------------

    def _connect(self) -> None:
        sidebar, chat, pane = self.sidebar, self.chat, self.memory_pane
        sidebar.new_chat_requested.connect(self.new_chat)
        sidebar.conversation_selected.connect(self.open_conversation)
        sidebar.search_changed.connect(self._search_conversations)
        sidebar.conversation_renamed.connect(self._rename_conversation)
        sidebar.conversation_deleted.connect(self._delete_conversation)
        chat.conversation_started.connect(self._conversation_started)
        chat.conversation_opened.connect(self._conversation_opened)
        chat.title_changed.connect(self._title_changed)
        chat.turn_finished.connect(self.reload_conversations)
        chat.recall_arrived.connect(pane.show_recall)
        chat.recall_requested.connect(self._show_recall)
        chat.memory_undo_requested.connect(self._undo_memory)
        chat.staged_review_requested.connect(self.show_queue)
        chat.settings_requested.connect(lambda: self.open_settings())
        chat.local_server_chosen.connect(self.use_local_server)
        chat.toggle_conversations_requested.connect(self.toggle_conversations)
        chat.toggle_memory_requested.connect(self.toggle_memory_pane)
        chat.failed.connect(self.show_error)
        pane.source_clicked.connect(self.open_conversation)
        pane.failed.connect(self.show_error)
        pane.hide_requested.connect(lambda: self.set_memory_pane_visible(False))
        pane.staged_count_changed.connect(lambda _count: self._counts_timer.start())
        if pane.events is not None:
            pane.events.memory_changed.connect(lambda _event, _memory: self._counts_timer.start())
        assistant = self.assistant
        if assistant is not None:
            assistant.configured.connect(self._assistant_configured)
            assistant.embedding_changed.connect(self._embedding_changed)
            assistant.failed.connect(self.show_error)
            assistant.facts_proposed.connect(chat.show_facts_proposed)
            assistant.title_changed.connect(chat.show_title)
            assistant.session_compacted.connect(chat.show_compaction)
        self.backfill.started.connect(lambda model: self.status.show_backfill(model, 0, 0))
        self.backfill.progressed.connect(
            lambda done, total: self.status.show_backfill(self.backfill.model or "", done, total)
        )
        self.backfill.finished.connect(self._backfill_finished)
        self.backfill.failed.connect(self._backfill_failed)
        self.consolidation.started.connect(self._consolidation_started)
        self.consolidation.finished.connect(self._consolidation_finished)
        self.consolidation.not_due.connect(self._consolidation_not_due)
        self.consolidation.failed.connect(self._consolidation_failed)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self.new_chat_action = self._action(
            file_menu, "New chat", "Ctrl+N", self.new_chat, "new-chat"
        )
        self._action(file_menu, "Rename conversation", "F2", self.sidebar.rename_current, "rename")
        file_menu.addSeparator()
        self.settings_action = self._action(
            file_menu,
            "Settings…",
            QKeySequence.StandardKey.Preferences,
            self.open_settings,
            "settings",
        )
        if not self.settings_action.shortcut().toString():
            self.settings_action.setShortcut(QKeySequence("Ctrl+,"))
        file_menu.addSeparator()
        self._action(file_menu, "Quit", QKeySequence.StandardKey.Quit, self.close)
        view = bar.addMenu("&View")
        self.conversations_action = self._action(
            view, "Conversations", "Ctrl+B", self.toggle_conversations, checkable=True
        )
        self.memory_action = self._action(
            view, "Memory pane", "Ctrl+Alt+B", self.toggle_memory_pane, checkable=True
        )
        memory = bar.addMenu("&Memory")
        self._action(
            memory, "Search conversations", "Ctrl+K", self.focus_conversation_search, "search"
        )
        self._action(memory, "Search memories", "Ctrl+Shift+M", self.focus_memory_search, "search")
        self._action(memory, "Facts to confirm", "Ctrl+Shift+C", self.show_queue, "check")
        help_menu = bar.addMenu("&Help")
        self._action(help_menu, "Open log folder", None, self._open_logs)
        stop = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        stop.setContext(Qt.ShortcutContext.WindowShortcut)
        stop.activated.connect(self.stop_reply)
        self.stop_shortcut = stop

    def _action(
        self,
        menu: Any,
        text: str,
        shortcut: str | QKeySequence.StandardKey | None,
        slot: Callable[[], object],
        icon: str | None = None,
        *,
        checkable: bool = False,
    ) -> QAction:
        action = QAction(text, self)
        if icon:
            action.setIcon(icons.icon(icon, "text", 16))
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        action.setCheckable(checkable)
        action.triggered.connect(lambda _checked=False: slot())
        menu.addAction(action)
        self.addAction(action)  # shortcuts work even with the menu bar hidden
        return action

    # -- start-up and state ------------------------------------------------------------

    def _restore_state(self) -> None:
        geometry = self.state.bytes("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        sizes = self.state.sizes("window/splitter")
        self.splitter.setSizes(sizes if sizes and len(sizes) == 3 else DEFAULT_SIZES)
        self.set_conversations_visible(self.state.flag("window/conversations_visible", True))
        self.set_memory_pane_visible(self.state.flag("window/memory_visible", True))
        self.memory_pane.set_current_tab(self.state.integer("window/memory_tab", 0))

    def save_state(self) -> None:
        self.state.set_bytes("window/geometry", QByteArray(self.saveGeometry()))
        self.state.set_sizes("window/splitter", self.splitter.sizes())
        self.state.set_flag("window/conversations_visible", self.conversations_action.isChecked())
        self.state.set_flag("window/memory_visible", self.memory_action.isChecked())
        self.state.set_integer("window/memory_tab", self.memory_pane.current_tab())
        self.state.set_text("window/last_conversation", self.chat.conversation_id)
        self.state.sync()

    def _start(self) -> None:
        last = self.state.text("window/last_conversation")
        self.reload_conversations(open_id=last)
        self.memory_pane.start()
        self.refresh_counts()
        if self.settings.chat_provider is None:
            self.probe_for_local_servers()
        elif self.assistant is None:
            self.chat.set_chat_ready(False)
        self.started.emit()

    # -- conversations -----------------------------------------------------------------

    def reload_conversations(self, open_id: str | None = None) -> None:
        search = self._conversation_search
        conversations = self.conversations

        def work() -> list[ConversationSummary]:
            return list(conversations.list(search=search or None, limit=CONVERSATION_LIMIT))

        self.workers.run(
            self,
            work,
            "loading your conversations",
            on_success=lambda found: self._conversations_loaded(found, open_id),
            on_failure=self._failed,
        )

    def _conversations_loaded(self, found: list[ConversationSummary], open_id: str | None) -> None:
        visible = found
        self.sidebar.set_conversations(visible, self.now(), selected=self.chat.conversation_id)
        if open_id:
            match = next((c for c in visible if c.id == open_id), None)
            if match is not None:
                self.open_conversation(match.id)

    def _search_conversations(self, text: str) -> None:
        self._conversation_search = text
        self.reload_conversations()

    def new_chat(self) -> None:
        self.chat.new_chat()
        self.sidebar.select(None)

    def open_conversation(self, conversation_id: str) -> None:
        title = next(
            (c.title for c in self.sidebar.model.conversations() if c.id == conversation_id), ""
        )
        self.chat.open_conversation(conversation_id, title)
        self.sidebar.select(conversation_id)

    def _conversation_opened(self, conversation_id: str) -> None:
        self.state.set_text("window/last_conversation", conversation_id or None)
        title = self.chat.title if conversation_id else ""
        self.setWindowTitle(f"{title} — Timothy" if title else "Timothy")

    def _title_changed(self, conversation_id: str, title: str) -> None:
        if conversation_id == self.chat.conversation_id:
            self.setWindowTitle(f"{title} — Timothy")
        self.reload_conversations()

    def _conversation_started(self, conversation: ConversationSummary) -> None:
        self.state.set_text("window/last_conversation", conversation.id)
        self.setWindowTitle(f"{conversation.title} — Timothy")
        self.reload_conversations()

    def _rename_conversation(self, conversation_id: str, title: str) -> None:
        def done(_result: object) -> None:
            if conversation_id == self.chat.conversation_id:
                self.chat._set_title(title)
            self.reload_conversations()

        self.workers.run(
            self,
            lambda: self.conversations.rename(conversation_id, title),
            "renaming the conversation",
            on_success=done,
            on_failure=self._conversation_change_failed,
        )

    def _delete_conversation(self, conversation_id: str) -> None:
        """Move it to the bin at once; the banner's Undo brings it back."""
        if conversation_id == self.chat.conversation_id:
            self.new_chat()

        def deleted(_result: object) -> None:
            self.banner.show_message(
                "Conversation deleted.",
                kind="info",
                action=f"restore:{conversation_id}",
                action_label="Undo",
                timeout_ms=DELETE_UNDO_MS,
            )

        self.workers.run(
            self,
            lambda: self.conversations.delete(conversation_id),
            "deleting the conversation",
            on_success=deleted,
            on_failure=self._conversation_change_failed,
        )

    def _conversation_change_failed(self, failure: Failure) -> None:
        self._failed(failure)
        self.reload_conversations()

    def _banner_action(self, name: str) -> None:
        kind, _sep, conversation_id = name.partition(":")
        if kind == "restore":
            self.workers.run(
                self,
                lambda: self.conversations.restore(conversation_id),
                "restoring the conversation",
                on_success=lambda _result: self.reload_conversations(),
                on_failure=self._conversation_change_failed,
            )
        elif kind == "settings":
            self.open_settings()
        elif kind == "reembed":
            self.start_backfill()

    # -- memory ------------------------------------------------------------------------

    def _undo_memory(self, memory: Memory) -> None:
        conversations = self.conversations

        def forget() -> Memory:
            return conversations.undo_remember(memory.id)

        def failed(failure: Failure) -> None:
            self.chat.transcript.mark_undo_failed(memory.id)
            self._failed(failure)

        self.workers.run(
            self,
            forget,
            "forgetting the fact",
            on_success=lambda forgotten: self.chat.mark_memory_forgotten(forgotten.id),
            on_failure=failed,
        )

    def refresh_counts(self) -> None:
        if self.store is None:
            self.status.show_consolidation("Memory unavailable")
            return
        store = self.store

        def work() -> tuple[int, int, datetime | None]:
            return (
                store.memories.count(status=MemoryStatus.ACTIVE),
                store.memories.count(status=MemoryStatus.STAGED),
                last_run(store),
            )

        def counted(result: tuple[int, int, datetime | None]) -> None:
            active, staged, when = result
            self.status.show_memory_counts(active, staged)
            if not self.consolidation.running and self.consolidation.report is None:
                self.status.show_consolidation(consolidation_text(when, False, self.now()))

        self.workers.run(self, work, "counting memories", on_success=counted)
        if self.assistant is not None and not self.backfill.running:
            self.assistant.refresh_embedding()

    # -- the assistant (chat engine, embeddings) ---------------------------------------

    def _assistant_configured(self, setup: Setup) -> None:
        ready = setup.chat is not None
        self.chat.set_chat_ready(ready)
        self.status.show_chat_problem(setup.settings, setup.chat_problem)
        if setup.chat_problem is not None:
            self.banner.show_message(
                f"The chat model cannot be used: {setup.chat_problem}",
                kind="error",
                action="settings",
                action_label="Settings",
            )
        elif setup.embedding.problem is not None:
            self.banner.show_message(
                f"Vector search is off: {setup.embedding.problem} Your memories are still "
                "found by their words and names.",
                kind="error",
                action="settings",
                action_label="Settings",
            )
        self._embedding_changed(setup.embedding, offer=True)
        self._schedule_consolidation()

    def _embedding_changed(self, state: EmbeddingState, offer: bool = False) -> None:
        pending = state.configured is not None and state.missing > 0 and state.problem is None
        switching = pending and state.active is not None and state.active != state.configured
        self.status.show_embedding(state, offer_reembed=pending and not self.backfill.running)
        if not pending or self.backfill.running or not offer:
            return
        if switching:
            assert state.configured is not None and state.active is not None
            self.banner.show_message(
                f"Vector search still uses {model_label(state.active)}. Re-embed "
                f"{state.missing:,} memor{'y' if state.missing == 1 else 'ies'} with "
                f"{model_label(state.configured)}? Search moves to it when it is done.",
                kind="info",
                action="reembed",
                action_label="Re-embed",
            )
        else:
            # Catching up: memories the queue missed (saved by the CLI, or while offline),
            # or the first vectors of a newly chosen provider.
            self.start_backfill()

    def start_backfill(self) -> None:
        assistant = self.assistant
        if assistant is None or assistant.embedder is None or self.store is None:
            return
        if self.banner.action_name == "reembed":
            self.banner.dismiss()
        self.backfill.start(self.store, assistant.embedder)

    def _backfill_finished(self, result: BackfillResult) -> None:
        self.status.hide_backfill()
        if result.error is not None:
            self.show_error(
                f"Embedding stopped after {result.embedded:,} of {result.total:,} memories: "
                f"{result.error.message}"
            )
        elif result.switched:
            self.show_info(f"Vector search now uses {model_label(result.model)}.")
        if self.assistant is not None:
            self.assistant.refresh_embedding()

    def _backfill_failed(self, message: str) -> None:
        self.status.hide_backfill()
        self.show_error(message)
        if self.assistant is not None:
            self.assistant.refresh_embedding()

    # -- daily consolidation -----------------------------------------------------------

    def _schedule_consolidation(self) -> None:
        if self._consolidation_scheduled or self.consolidation_delay_ms is None:
            return
        self._consolidation_scheduled = True
        QTimer.singleShot(self.consolidation_delay_ms, self, self.consolidate_if_due)
        self._consolidation_timer.start()

    def consolidate_if_due(self) -> None:
        """Run daily consolidation on a worker when a day has passed since the last run."""
        if self.store is None or self._closing:
            return
        chat = self.assistant.chat if self.assistant is not None else None
        self.consolidation.run_if_due(self.store, chat, self.settings.consolidation, self.now)

    def _consolidation_started(self) -> None:
        self.status.show_consolidation(consolidation_text(None, True, self.now()))

    def _consolidation_finished(self, report: ConsolidationReport) -> None:
        self.status.show_consolidation(
            report.summary(), "Click for the details of what consolidation changed"
        )
        self._counts_timer.start()

    def _consolidation_not_due(self, when: datetime | None, report: object) -> None:
        if self.consolidation.report is None:  # else this session's summary stays
            self.status.show_consolidation(consolidation_text(when, False, self.now()))

    def _consolidation_failed(self, message: str) -> None:
        self.status.show_consolidation("Consolidation failed", message)
        log.warning("consolidation failed: %s", message)

    def show_consolidation_details(self) -> None:
        """The details of this session's run, or of the last stored one."""
        if self.consolidation.report is not None:
            self._open_consolidation_dialog(self.consolidation.report)
            return
        store = self.store
        if store is None or self.consolidation.running:
            return

        def shown(report: ConsolidationReport | None) -> None:
            if report is None:
                self.show_info("Consolidation has not run yet; it runs once a day.")
            else:
                self._open_consolidation_dialog(report)

        self.workers.run(
            self, lambda: last_report(store), "reading the last consolidation", on_success=shown
        )

    def _open_consolidation_dialog(self, report: ConsolidationReport) -> ConsolidationDialog:
        dialog = ConsolidationDialog(report, self)
        dialog.finished.connect(lambda _code: dialog.deleteLater())
        self.consolidation_dialog = dialog
        dialog.open()
        return dialog

    def _show_recall(self, recall: dict[str, Any] | None, caption: str) -> None:
        self.memory_pane.show_recall(recall, caption)
        self.set_memory_pane_visible(True)
        self.memory_pane.open_recall_tab()

    def show_queue(self) -> None:
        self.set_memory_pane_visible(True)
        self.memory_pane.show_queue()

    def focus_memory_search(self) -> None:
        self.set_memory_pane_visible(True)
        self.memory_pane.focus_search()

    def focus_conversation_search(self) -> None:
        self.set_conversations_visible(True)
        self.sidebar.focus_search()

    # -- panes -------------------------------------------------------------------------

    def set_memory_pane_visible(self, visible: bool) -> None:
        self.memory_pane.setVisible(visible)
        self.memory_action.setChecked(visible)
        self.state.set_flag("window/memory_visible", visible)

    def toggle_memory_pane(self) -> None:
        self.set_memory_pane_visible(not self.memory_action.isChecked())

    def set_conversations_visible(self, visible: bool) -> None:
        self.sidebar.setVisible(visible)
        self.conversations_action.setChecked(visible)
        self.state.set_flag("window/conversations_visible", visible)

    def toggle_conversations(self) -> None:
        self.set_conversations_visible(not self.conversations_action.isChecked())

    # -- the reply ---------------------------------------------------------------------

    def stop_reply(self) -> None:
        self.chat.stop()

    # -- settings ----------------------------------------------------------------------

    def open_settings(self, page: str = "chat") -> SettingsDialog:
        if self.settings_dialog is not None:
            self.settings_dialog.raise_()
            return self.settings_dialog
        dialog = SettingsDialog(self.settings, self.network, page=page, parent=self)
        dialog.settings_saved.connect(self.apply_settings)
        dialog.finished.connect(lambda _code: self._settings_closed(dialog))
        self.settings_dialog = dialog
        dialog.open()
        return dialog

    def _settings_closed(self, dialog: SettingsDialog) -> None:
        if self.settings_dialog is dialog:
            self.settings_dialog = None
        dialog.deleteLater()

    def apply_settings(self, settings: Settings) -> None:
        """Use `settings` from now on: the chat engine and embeddings are rebuilt on a worker
        (the chat area is ready at once, and says so plainly if the provider then fails)."""
        self.settings = settings
        self.status.show_settings(settings)
        self.chat.set_chat_ready(settings.chat_provider is not None and self.assistant is not None)
        if self.assistant is not None:
            self.assistant.configure(settings)
        self.settings_applied.emit(settings)

    def probe_for_local_servers(self) -> None:
        self.network.run(
            self,
            self.probe_local_servers,
            "looking for a model server on this computer",
            on_success=self.chat.show_local_servers,
        )

    def use_local_server(self, server: LocalServer, model: str) -> None:
        chosen = self.settings.replace(
            chat_provider="openai",
            openai=dataclasses.replace(
                self.settings.openai, base_url=server.base_url, chat_model=model
            ),
        )

        def saved(_result: object) -> None:
            self.apply_settings(chosen)
            self.show_info(f"Timothy now chats with {model} on {server.name}.")

        self.workers.run(
            self,
            lambda: save_settings(chosen),
            "saving settings",
            on_success=saved,
            on_failure=self._failed,
        )

    # -- messages ----------------------------------------------------------------------

    def show_error(self, message: str) -> None:
        self.banner.show_message(message, kind="error")

    def show_info(self, message: str) -> None:
        self.banner.show_message(message, kind="info", timeout_ms=6000)

    def _failed(self, failure: Failure) -> None:
        self.show_error(failure.message)

    def _open_logs(self) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(paths.log_dir())))

    # -- closing -----------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._closing:
            self._closing = True
            self.save_state()
            self.chat.stop()
            self.backfill.cancel()
            self.consolidation.cancel()
            self.memory_pane.close_store_events()
            pools = (self.workers, self.network, self.jobs)
            if not all(pool.wait(3000) for pool in pools):
                log.warning("closing with work still running")
            if self.assistant is not None:
                self.assistant.close()
        super().closeEvent(event)
