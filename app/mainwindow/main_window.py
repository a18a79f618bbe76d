"""The main window: conversations on the left, the chat in the centre, memory on the right.

It lays the panes out, wires them together and owns what outlives them: the workers, the
settings, the assistant (chat engine and embedding queue, rebuilt when settings change), the
memory's upkeep (re-embedding, daily consolidation: `memory_upkeep.py`), the menus
(`menus.py`), the window's remembered state, and the banner for errors, offers and undo.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from PySide6.QtCore import QByteArray, QEvent, QSize, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import QCloseEvent, QDesktopServices, QResizeEvent
from PySide6.QtWidgets import (
    QApplication,
    QFileDialog,
    QMainWindow,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.chat.assistant import Assistant
from app.chat.chat_panel import ChatPanel
from app.chat.local_servers import LocalServer, find_local_servers
from app.conversations.actions import ConversationActions
from app.conversations.chat_port import Conversations, ConversationSummary, NoConversations
from app.conversations.conversation_list import ConversationList
from app.conversations.store_conversations import StoreConversations
from app.jobs.store_copy import StoreCopy
from app.jobs.workers import Failure, Workers
from app.look.screen_room import ScreenWatch, fitted
from app.mainwindow.about_dialog import AboutDialog
from app.mainwindow.banner import Banner
from app.mainwindow.memory_upkeep import (
    CONSOLIDATION_DELAY_MS,
    RESTORE_LATEST,
    TIDY_DETAILS,
    TIDY_UP,
    MemoryUpkeep,
)
from app.mainwindow.menus import MenuCommands, WindowMenus
from app.mainwindow.restart import restart_app
from app.mainwindow.server_watch import (
    BACK_TEXT,
    ServerWatch,
    away_text,
    is_unreachable_message,
    refused_text,
)
from app.mainwindow.shortcuts_dialog import ShortcutsDialog
from app.mainwindow.start_loads import StartLoads
from app.mainwindow.status_bar import StatusBar
from app.mainwindow.store_restore import StoreRestore
from app.mainwindow.user_guide_dialog import UserGuideDialog
from app.mainwindow.window_state import WindowState
from app.memories.actions import MemoryActions
from app.memories.edit_conflicts import EditConflicts
from app.memories.memory_editor import MemoryEditor
from app.memories.memory_pane import MemoryPane
from app.settings.backups_page import KIND_LABELS, BackupsPage, made_text
from app.settings.settings_dialog import BEDROCK_MODELS, SettingsDialog
from app.transcript.code_block import colour_held_code, hold_lexing, release_lexing
from app.transcript.code_highlighter import warm_up as warm_up_highlighting
from timothy import paths
from timothy.assistant import Setup
from timothy.chat.export import export_markdown, markdown_file_name
from timothy.cli.memories import forget_summary, purge_summary
from timothy.memory.forget import server_backups_message
from timothy.providers.base import ChatProvider
from timothy.providers.bedrock_models import BedrockModels, list_bedrock_chat_models
from timothy.providers.model_list import list_chat_models
from timothy.providers.openai_chat import OpenAIChat
from timothy.settings import Settings, load_settings, save_settings
from timothy.store import Memory, Store, backups
from timothy.store.backups import Backup, PurgeReport, RestoreResult
from timothy.store.engine import StoreEngine
from timothy.store.forget import ForgetReport
from timothy.store.location import STORE_URL_ENV
from timothy.store.records import RecallRecord, utc_now
from timothy.text import words

log = logging.getLogger(__name__)

DELETE_UNDO_MS = 8000
EMBEDDER_QUIT_WAIT_SECONDS = 60.0  # a first start also rewrites the model (a few seconds)
DEFAULT_SIZE = (1380, 860)  # px, on a screen with room for it
MINIMUM_SIZE = (760, 480)
DEFAULT_SIZES = [260, 780, 420]
CHAT_MIN_WIDTH = 320  # px: the composer and a readable column of text
SIDEBAR_MIN_WIDTH = 200
MEMORY_MIN_WIDTH = 340  # at least; more where its four tabs need more side by side
RESTART = "restart"  # the banner's action after a new storage choice
RETRY_SERVER = "retry-server"  # the banner's action on a server that refused the login
RETRY_KEYRING = "retry-keyring"  # the banner's action on a key the locked keyring kept
KEYRING_BACK_TEXT = "The system keyring is unlocked: the chat model is ready."
KEYRING_STILL_LOCKED = "The API key still cannot be read: {why} Then try again."
STORAGE_SETTINGS = "storage"  # the banner's action on a server store that could not be opened
CONVERSATION_LIMIT = 500
# At start the chat engine's build waits for the window's first reads to be drawn: checked
# this often, for at most this long (a long conversation builds its older messages for a
# while; a message sent meanwhile starts the build at once).
IDLE_CHECK_MS = 20
IDLE_WAIT_MAX_MS = 1500
# A server store opens "away" when its server has not answered within half a second (the
# window does not wait longer); a slow server answers a moment later. The away banner waits
# this long at start, so a slow server does not show "out of reach", then "answers again",
# at every start.
AWAY_GRACE_MS = 3000
MEMORY_FILES = "JSON Lines (*.jsonl *.json);;All files (*)"
RESTORING = (
    "Your memories are being restored from a backup; chatting and changes to memories wait "
    "until it has finished."
)
MARKDOWN_FILES = "Markdown (*.md *.markdown);;All files (*)"


def problem_action(locked_out: bool) -> tuple[str, str]:
    """The banner's offer (action, label) for a provider that cannot be used: a key the
    locked keyring kept is no setting to change, so *Try again* (the window also tries by
    itself when it comes to the front, or a message is sent); the rest is put right in
    Settings."""
    return (RETRY_KEYRING, "Try again") if locked_out else ("settings", "Settings")


class MainWindow(QMainWindow):
    started = Signal()  # the first loads were asked for; the window is usable
    settings_applied = Signal(object)  # Settings: the chat engine rebuilds its provider

    def __init__(
        self,
        store: StoreEngine | None,
        *,
        store_error: str | None = None,
        settings: Settings | None = None,
        now: Callable[[], datetime] = utc_now,
        window_state: WindowState | None = None,
        probe_local_servers: Callable[[], list[LocalServer]] = find_local_servers,
        consolidation_delay_ms: int | None = CONSOLIDATION_DELAY_MS,
        warm_up_code: bool = False,
    ) -> None:
        """`consolidation_delay_ms`: when daily consolidation may start after start-up
        (None: not in this window, as in tests that do not exercise it). `warm_up_code`:
        import and compile Pygments' common lexers once start-up has loaded the rest, so
        the first reply's code block does not pay for them (the app's window does)."""
        super().__init__()
        # The opened conversation's code is coloured in the line of start-up's later loads
        # (`_start_later_loads`), not among the window's first reads: Pygments' first use
        # shares the GIL.
        hold_lexing()
        self.store = store
        self.now = now
        self.settings = settings if settings is not None else load_settings()
        self.state = window_state or WindowState()
        self.probe_local_servers = probe_local_servers
        self.workers = Workers(self, threads=2)  # the store
        self.network = Workers(self, threads=3)  # the chat stream, provider set-up, tests
        self.jobs = Workers(self, detached=True)  # long jobs: re-embedding, consolidation
        # Start-up's later loads, one at a time once the chat engine and its model are in.
        self.start_loads = StartLoads(self.network, self)
        self.warm_up_code = warm_up_code
        self.store_conversations = StoreConversations(store) if store is not None else None
        self.conversations: Conversations = self.store_conversations or NoConversations()
        self.conversation_actions = ConversationActions(self.conversations, self.workers, self)
        self.assistant = (
            Assistant(store, self.store_conversations, self.network, self)
            if store is not None and self.store_conversations is not None
            else None
        )
        self.settings_dialog: SettingsDialog | None = None
        self.memory_editor: MemoryEditor | None = None  # "Add a memory", while it is open
        self.file_dialog: QFileDialog | None = None  # export's or import's, while it is open
        self._conversation_search = ""
        self._closing = False
        # At start the chat engine is built once the conversation list is shown (see
        # `apply_settings`): these are the settings it waits with, until then.
        self._listed = False
        self._waiting_settings: Settings | None = None
        # ... and after the window's first reads are drawn (polled; at most IDLE_WAIT_MAX_MS).
        self._idle_check = QTimer(self)
        self._idle_check.setInterval(IDLE_CHECK_MS)
        self._idle_check.timeout.connect(self._check_idle)
        self._idle_since_ms = 0
        self._loads_begun = False
        # The start's grace before the away banner (AWAY_GRACE_MS), and whether it was shown.
        self._away_grace = QTimer(self)
        self._away_grace.setSingleShot(True)
        self._away_grace.setInterval(AWAY_GRACE_MS)
        self._away_grace.timeout.connect(self._show_server_state)
        self._away_shown = False
        self._keyring_locked = False  # the last build could not read the keyring
        self._hurry = False  # a message was sent: the engine is wanted now
        self.restoring = False  # a backup is being put in place: no turn, no memory change
        self._restoring_from: Backup | None = None
        self._last_forget: ForgetReport | None = None  # what the last purge of backups is for
        self.setWindowTitle("Timothy")
        # Both within the screen's room: at 200 % a 1280x800 panel is 640x400 (screen_room).
        self.resize(fitted(self, *DEFAULT_SIZE))
        # Below the panes' own minimums side by side, panes give way (`_fit_panes`): none is
        # ever cut off at the window's edge.
        self.setMinimumSize(fitted(self, *MINIMUM_SIZE))
        # ... and again when it moves to another screen or its screen's room changes.
        self.screen_watch = ScreenWatch(self, QSize(*MINIMUM_SIZE))

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
        self.memory_pane.set_least_width(MEMORY_MIN_WIDTH)
        self.sidebar.setMinimumWidth(SIDEBAR_MIN_WIDTH)
        self.chat.setMinimumWidth(CHAT_MIN_WIDTH)
        # The panes the owner wants shown (saved); a window too narrow for all of them shows
        # those that fit beside the chat, the one asked for most recently first.
        self.panes_wanted = {"conversations": True, "memory": True}
        self._pane_priority = ["memory", "conversations"]
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
        self.setStatusBar(self.status)
        self.upkeep = MemoryUpkeep(
            self,
            store,
            self.assistant,
            status=self.status,
            banner=self.banner,
            workers=self.workers,
            jobs=self.jobs,
            settings=lambda: self.settings,
            now=now,
            show_error=self.show_error,
            show_info=self.show_info,
            consolidation_delay_ms=consolidation_delay_ms,
        )
        # Restoring a backup into the open store is the file's (a server's are its own).
        self.store_restore = (
            StoreRestore(
                store, now=now, busy=self._restore_blocker, reads=self.workers, parent=self
            )
            if isinstance(store, Store)
            else None
        )

        self.server_watch = ServerWatch(store, self) if store is not None else None
        self.store_copy = StoreCopy(self.jobs, self)  # Settings ▸ Storage's copy
        self.opened_store_choice = self.settings.store  # what this run's store was opened by
        self.restart_app: Callable[[], bool] = restart_app
        actions = self.memory_pane.memory_actions
        self.edit_conflicts = (
            EditConflicts(
                actions,
                self.workers,
                window=self,
                show_error=self.show_error,
                show_info=self.show_info,
            )
            if actions is not None
            else None
        )

        self._connect()
        self.menus = WindowMenus(
            self,
            MenuCommands(
                new_chat=self.new_chat,
                temporary_chat=self.set_temporary_chat,
                conversation_instructions=self.chat.edit_instructions,
                rename_conversation=self.sidebar.rename_current,
                export_conversation=self.export_open_conversation,
                open_settings=self.open_settings,
                quit=self.close,
                show_conversations=self.set_conversations_visible,
                show_memory_pane=self.set_memory_pane_visible,
                search_conversations=self.focus_conversation_search,
                search_memories=self.focus_memory_search,
                show_queue=self.show_queue,
                add_memory=self.add_memory,
                export_memories=self.export_memories,
                import_memories=self.import_memories,
                open_logs=self._open_logs,
                show_user_guide=self.show_user_guide,
                show_shortcuts=self.show_shortcuts,
                show_about=self.show_about,
                stop_reply=self.stop_reply,
            ),
        )
        self._restore_state()
        # Wider tabs (a count shown) may leave no room for another pane beside the chat.
        self.memory_pane.minimum_width_changed.connect(self._fit_panes)
        self.apply_settings(self.settings)
        if store is None:
            self._say_store_not_opened(store_error)
        if self.server_away:
            self._away_grace.start()
        QTimer.singleShot(0, self._start)

    # -- wiring ------------------------------------------------------------------------

    def _connect(self) -> None:
        sidebar, chat, pane = self.sidebar, self.chat, self.memory_pane
        sidebar.new_chat_requested.connect(self.new_chat)
        sidebar.temporary_chat_switched.connect(self.set_temporary_chat)
        sidebar.conversation_selected.connect(self.open_conversation)
        chat.composer.message_submitted.connect(self._sending)
        sidebar.search_changed.connect(self._search_conversations)
        sidebar.conversation_renamed.connect(self.conversation_actions.rename)
        sidebar.conversation_deleted.connect(self._delete_conversation)
        sidebar.export_requested.connect(self.export_conversation)
        actions = self.conversation_actions
        actions.conversation_renamed.connect(self._conversation_renamed)
        actions.conversation_deleted.connect(self._offer_restore)
        actions.conversation_restored.connect(lambda _id: self.reload_conversations())
        actions.failed.connect(self._conversation_change_failed)
        chat.conversation_started.connect(self._conversation_started)
        chat.conversation_opened.connect(self._conversation_opened)
        chat.title_changed.connect(self._title_changed)
        chat.title_shown.connect(self._show_title)
        chat.turn_finished.connect(self.reload_conversations)
        chat.recall_arrived.connect(pane.show_recall)
        chat.recall_requested.connect(self._show_recall)
        chat.memory_undo_requested.connect(self._undo_memory)
        chat.staged_review_requested.connect(self.show_queue)
        chat.settings_requested.connect(lambda: self.open_settings())
        chat.local_server_chosen.connect(self.use_local_server)
        chat.model_picker.model_chosen.connect(self.choose_chat_model)
        chat.retry_keyring_requested.connect(lambda: self._banner_action(RETRY_KEYRING))
        chat.toggle_conversations_requested.connect(self.toggle_conversations)
        chat.toggle_memory_requested.connect(self.toggle_memory_pane)
        chat.temporary_changed.connect(self._temporary_changed)
        chat.failed.connect(self.show_error)
        pane.source_clicked.connect(self.open_conversation)
        pane.failed.connect(self.show_error)
        pane.hide_requested.connect(lambda: self.set_memory_pane_visible(False))
        pane.staged_count_changed.connect(lambda _count: self.upkeep.memories_changed())
        if pane.memory_actions is not None:
            pane.memory_actions.memories_imported.connect(
                lambda _count: self.upkeep.memories_changed()
            )
            pane.memory_actions.memories_forgotten.connect(self._memories_forgotten)
            pane.memory_actions.purging_backups.connect(self._purging_backups)
            pane.memory_actions.backups_purged.connect(self._backups_purged)
        if pane.events is not None:
            pane.events.memory_changed.connect(
                lambda _event, _memory: self.upkeep.memories_changed()
            )
            pane.events.memory_changed.connect(self._proposal_settled)
        restore = self.store_restore
        if restore is not None:
            restore.started.connect(self._restore_started)
            restore.restored.connect(self._restored)
            restore.failed.connect(self._restore_failed)
            restore.refused.connect(self._restore_refused)
        if self.server_watch is not None:
            self.server_watch.reachability_changed.connect(self._server_reachability)
        assistant = self.assistant
        if assistant is not None:
            assistant.configured.connect(self._assistant_configured)
            assistant.settled.connect(self._start_later_loads)
            assistant.failed.connect(self.show_error)
            assistant.keyring_still_locked.connect(self._keyring_still_locked)
            # The owner may have unlocked the keyring meanwhile: a send tries it again.
            chat.composer.message_submitted.connect(lambda _text: assistant.retry_keyring())
            assistant.facts_proposed.connect(chat.show_facts_proposed)
            assistant.title_changed.connect(chat.show_title)
            assistant.session_compacted.connect(chat.show_compaction)

    # -- start-up and state ------------------------------------------------------------

    def _restore_state(self) -> None:
        # The panes first, then the geometry: a narrow saved geometry (taken with a pane
        # given way) hides that pane again when the window is laid out.
        self.set_conversations_visible(self.state.flag("window/conversations_visible", True))
        self.set_memory_pane_visible(self.state.flag("window/memory_visible", True))
        geometry = self.state.bytes("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        sizes = self.state.sizes("window/splitter")
        self.splitter.setSizes(sizes if sizes and len(sizes) == 3 else DEFAULT_SIZES)
        self.memory_pane.set_current_tab(self.state.integer("window/memory_tab", 0))

    def save_state(self) -> None:
        self.state.set_bytes("window/geometry", QByteArray(self.saveGeometry()))
        self.state.set_sizes("window/splitter", self.splitter.sizes())
        self.state.set_flag("window/conversations_visible", self.panes_wanted["conversations"])
        self.state.set_flag("window/memory_visible", self.panes_wanted["memory"])
        self.state.set_integer("window/memory_tab", self.memory_pane.current_tab())
        self.state.set_text("window/last_conversation", self.chat.saved_conversation_id)
        self.state.sync()

    def _start(self) -> None:
        last = self.state.text("window/last_conversation")
        self.reload_conversations(open_id=last)
        self.memory_pane.start()
        self.upkeep.refresh_counts()
        if self.settings.chat_provider is None:
            self.probe_for_local_servers()
        elif self.assistant is None:
            self.chat.set_chat_ready(False)
        self.started.emit()

    # -- the memory server -------------------------------------------------------------

    @property
    def server_away(self) -> bool:
        """Whether the store's server is out of reach (the window works from this machine)."""
        return self.server_watch is not None and not self.server_watch.reachable

    def _show_server_state(self) -> None:
        """A server out of reach is a state that mends itself, not an error: a warning that
        says so (at start, once the start's grace has passed with the server still away)."""
        if self.store is None or not self.server_away or self._away_grace.isActive():
            return
        self._away_shown = True
        refused = self.store.refused is not None
        # A refused login is tried less and less often: the owner can ask for a try now
        # (after putting the password right elsewhere, e.g. `timothy store password`).
        self.banner.show_message(
            away_text(self.store),
            kind="warning",
            icon="server",
            action=RETRY_SERVER if refused else None,
            action_label="Try again" if refused else None,
        )
        self.memory_pane.set_server_away(True, refused=refused)

    def _server_reachability(self, reachable: bool) -> None:
        if not reachable:
            self._show_server_state()
            return
        self._away_grace.stop()
        kept = self.store.kept_here if self.store is not None else 0
        if kept:  # the server refused some of what was kept here: said, whatever came before
            self._away_shown = False
            self.banner.show_message(refused_text(kept), kind="warning", icon="server")
        elif self._away_shown:  # "answers again" only after the owner was told it was away
            self._away_shown = False
            self.banner.show_message(BACK_TEXT, kind="info", icon="server", timeout_ms=8000)
        self.memory_pane.set_server_away(False)
        # Every view reads the store again: what other machines did meanwhile, and what
        # this one handed over.
        self.reload_conversations()
        self.memory_pane.start()
        self.upkeep.refresh_counts()
        self.upkeep.server_answers()
        if self.assistant is not None:
            self.assistant.refresh_embedding()

    # -- conversations -----------------------------------------------------------------

    def reload_conversations(self, open_id: str | None = None) -> None:
        search = self._conversation_search
        conversations = self.conversations

        def work() -> list[ConversationSummary]:
            return list(conversations.list(search=search or None, limit=CONVERSATION_LIMIT))

        def failed(failure: Failure) -> None:
            self._listed_first()
            self._failed(failure)

        self.workers.run(
            self,
            work,
            "loading your conversations",
            on_success=lambda found: self._conversations_loaded(found, open_id),
            on_failure=failed,
        )

    def _conversations_loaded(self, found: list[ConversationSummary], open_id: str | None) -> None:
        visible = found
        self.sidebar.set_conversations(visible, self.now(), selected=self.chat.conversation_id)
        # After the list's first paint is queued: the engine's build takes the GIL a while.
        QTimer.singleShot(0, self, self._listed_first)
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

    def set_temporary_chat(self, on: bool) -> None:
        self.chat.set_temporary(on)
        self._temporary_changed(self.chat.temporary)

    def _temporary_changed(self, on: bool) -> None:
        """Both switches (File menu, beside New chat) show whether temporary chat is on."""
        self.menus.temporary_action.setChecked(on)
        self.sidebar.temporary_button.setChecked(on)
        if on:
            self.sidebar.select(None)

    def open_conversation(self, conversation_id: str) -> None:
        """Show a conversation; opened from a search's results, at the message that matched."""
        listed = next(
            (c for c in self.sidebar.model.conversations() if c.id == conversation_id), None
        )
        title = listed.title if listed is not None else ""
        hit = listed.message_id if listed is not None and self._conversation_search else None
        terms = words(self._conversation_search) if hit is not None else []
        self.chat.open_conversation(conversation_id, title, hit=hit, terms=terms)
        self.sidebar.select(conversation_id)

    def _conversation_opened(self, conversation_id: str) -> None:
        self.state.set_text("window/last_conversation", conversation_id or None)
        self._show_title(self.chat.title)

    def _show_title(self, title: str) -> None:
        """The window's title follows the chat header, whatever changed it (opening,
        the engine's title, a rename)."""
        named = bool(self.chat.conversation_id and title)
        self.setWindowTitle(f"{title} — Timothy" if named else "Timothy")

    def _title_changed(self, _conversation_id: str, _title: str) -> None:
        self.reload_conversations()

    def _conversation_started(self, conversation: ConversationSummary) -> None:
        self.state.set_text("window/last_conversation", conversation.id)
        self.reload_conversations()

    def _conversation_renamed(self, conversation_id: str, title: str) -> None:
        if conversation_id == self.chat.conversation_id:
            self.chat.set_title(title)
        self.reload_conversations()

    def _delete_conversation(self, conversation_id: str) -> None:
        """Move it to the bin at once; the banner's Undo brings it back."""
        if conversation_id == self.chat.conversation_id:
            self.new_chat()
        self.conversation_actions.delete(conversation_id)

    def _offer_restore(self, conversation_id: str) -> None:
        self.banner.show_message(
            "Conversation deleted.",
            kind="info",
            action=f"restore:{conversation_id}",
            action_label="Undo",
            timeout_ms=DELETE_UNDO_MS,
        )

    def _conversation_change_failed(self, message: str) -> None:
        self.show_error(message)
        self.reload_conversations()

    def _banner_action(self, name: str) -> None:
        kind, _sep, conversation_id = name.partition(":")
        if kind == "restore":
            self.conversation_actions.restore(conversation_id)
        elif kind == "settings":
            self.open_settings()
        elif kind == "reembed":
            self.upkeep.start_backfill()
        elif kind == TIDY_UP:
            self.upkeep.tidy_up_now()
        elif kind == TIDY_DETAILS:
            self.upkeep.show_consolidation_details()
        elif kind == RESTORE_LATEST:
            self.restore_latest_good_backup()
        elif kind == "backups":
            self.open_settings("backups")
        elif kind == STORAGE_SETTINGS:
            self.open_settings("storage")
        elif kind == RESTART:
            self.restart()
        elif kind == RETRY_SERVER and self.store is not None:
            self.store.retry_now()  # returns at once; the answer comes as reachability
        elif kind == RETRY_KEYRING and self.assistant is not None:
            self.assistant.retry_keyring(asked=True)  # on a worker; a rebuild says the rest

    def _say_store_not_opened(self, store_error: str | None) -> None:
        """Why the window has no store. A server that answered but cannot be used (a newer
        Timothy's schema, no right to create tables) is not tried again: the owner puts it
        right and restarts, or works from this computer's file meanwhile."""
        said = "Your memory store could not be opened" + (
            f": {store_error}" if store_error else "."
        )
        if self.settings.store.engine != "postgres" and not os.environ.get(STORE_URL_ENV):
            self.show_error(
                said + " Conversations and memories are kept there, so chatting waits until "
                "it opens."
            )
            return
        self.banner.show_message(
            said + " Once that is put right, restart Timothy; to work from this computer's "
            "file meanwhile, choose it in Settings ▸ Storage.",
            kind="error",
            icon="server",
            action=STORAGE_SETTINGS,
            action_label="Storage settings",
        )

    def restart(self) -> None:
        """A new Timothy starts, and this window closes as it always does."""
        if self.restart_app():
            self.close()
        else:
            self.show_error("Timothy could not start again; please quit it and start it.")

    # -- memory ------------------------------------------------------------------------

    def _proposal_settled(self, event: str, memory: Memory) -> None:
        """A memory changed: a proposal that left the queue is counted off the transcript's
        "facts to confirm" notice (an edit-then-confirm reports the new version)."""
        if event in ("promoted", "rejected", "forgotten"):
            self.chat.fact_reviewed(memory.id)
        elif event == "superseded" and memory.supersedes is not None:
            self.chat.fact_reviewed(memory.supersedes)

    def _undo_memory(self, memory: Memory) -> None:
        conversations = self.conversations

        def reject() -> Memory:  # rejected, not deleted: it stays listed under Rejected
            return conversations.undo_remember(memory.id)

        def failed(failure: Failure) -> None:
            self.chat.transcript.mark_undo_failed(memory.id)
            self._failed(failure)

        self.workers.run(
            self,
            reject,
            "rejecting the fact",
            on_success=lambda rejected: self.chat.mark_memory_rejected(rejected.id),
            on_failure=failed,
        )

    # -- the assistant (chat engine, embeddings) ---------------------------------------

    def _assistant_configured(self, setup: Setup) -> None:
        ready = setup.chat is not None
        self.chat.set_chat_ready(ready, keyring_locked="chat" in setup.locked_out)
        self.status.show_chat_problem(setup.settings, setup.chat_problem)
        unlocked = self._keyring_locked and not setup.keyring_locked
        self._keyring_locked = setup.keyring_locked
        if setup.chat_problem is not None:
            action, label = problem_action("chat" in setup.locked_out)
            self.banner.show_message(
                f"The chat model cannot be used: {setup.chat_problem}",
                kind="error",
                action=action,
                action_label=label,
            )
        elif setup.embedding.problem is not None:
            action, label = problem_action("embeddings" in setup.locked_out)
            self.banner.show_message(
                f"Vector search is off: {setup.embedding.problem} Your memories are still "
                "found by their words and names.",
                kind="error",
                action=action,
                action_label=label,
            )
        elif unlocked:
            self.banner.show_message(KEYRING_BACK_TEXT, kind="info", timeout_ms=8000)
        self._offer_chat_models(setup.settings, later=not self.start_loads.started, chat=setup.chat)
        self.upkeep.embedding_changed(setup.embedding, offer=True)
        self.upkeep.schedule_consolidation()

    def _keyring_still_locked(self, why: str) -> None:
        self.banner.show_message(
            KEYRING_STILL_LOCKED.format(why=why.rstrip(".") + "."),
            kind="error",
            action=RETRY_KEYRING,
            action_label="Try again",
        )

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        # Back at the window after unlocking the keyring elsewhere: try it again (bounded).
        is_activation = event.type() == QEvent.Type.ActivationChange
        assistant = getattr(self, "assistant", None)  # None also before __init__ set it
        if is_activation and self.isActiveWindow() and assistant is not None:
            assistant.retry_keyring()

    # -- memory pane -------------------------------------------------------------------

    def _show_recall(self, recall: RecallRecord | None, caption: str) -> None:
        self.memory_pane.show_recall(recall, caption)
        self.set_memory_pane_visible(True)
        self.memory_pane.open_recall_tab()

    def show_queue(self) -> None:
        self.set_memory_pane_visible(True)
        self.memory_pane.show_queue()

    def focus_memory_search(self) -> None:
        self.set_memory_pane_visible(True)
        self.memory_pane.focus_search()

    def _memories_forgotten(self, report: ForgetReport) -> None:
        """Say what went, as `timothy memories forget` says it (backups included), and read
        the open conversation again: its replies' records now hold "[forgotten]"."""
        self._last_forget = report
        self.chat.reload_conversation()
        summary = forget_summary(report)
        if report.compacted:
            self.show_info(summary)
            return
        self.banner.show_message(
            summary + " The database file could not be rebuilt yet (another program may "
            "have it open), so freed space in it may still hold the text until the next "
            "forget.",
            kind="error",
        )

    def _forgotten_line(self) -> str:
        report = self._last_forget
        if report is None:
            return ""
        return forget_summary(report).removesuffix(" Older backups may still hold this text.")

    def _purging_backups(self, count: int) -> None:
        report = self._last_forget
        it = "it" if report is None or report.count == 1 else "them"
        self.banner.show_message(
            f"{self._forgotten_line()} Removing {it} from {count} "
            f"backup{'' if count == 1 else 's'} too…",
            kind="info",
        )

    def _backups_purged(self, outcome: PurgeReport | Failure) -> None:
        """Say what purging did, as `timothy memories forget --purge-backups` says it."""
        report = self._last_forget
        count = report.count if report is not None else 1
        if isinstance(outcome, Failure):
            self.banner.show_message(
                f"{self._forgotten_line()} It could not be removed from the backups: "
                f"{outcome.message}",
                kind="error",
            )
            return
        text = f"{self._forgotten_line()} {purge_summary(outcome, count)}"
        if outcome.failed:
            self.banner.show_message(
                text + " Delete the backups that still hold it in Settings ▸ Backups' folder "
                "if you do not need them.",
                kind="error",
                action="backups",
                action_label="Open Backups",
            )
        else:
            self.banner.show_message(text, kind="info", timeout_ms=8000)

    # -- managing memories (the Memory menu) ------------------------------------------

    def _memory_actions(self) -> MemoryActions | None:
        if self.restoring:
            self.show_error(RESTORING)
            return None
        actions = self.memory_pane.memory_actions
        if actions is None:
            self.show_error("Your memories cannot be changed: the memory store is not open.")
        return actions

    def add_memory(self) -> MemoryEditor | None:
        """Write a memory by hand: text, type, what it is about. Saved active."""
        actions = self._memory_actions()
        if actions is None:
            return None
        editor = MemoryEditor(None, save_label="Add memory", parent=self)
        editor.accepted.connect(lambda: self._save_new_memory(actions, editor))
        editor.finished.connect(lambda _code: editor.deleteLater())
        self.memory_editor = editor
        editor.open()
        return editor

    def _save_new_memory(self, actions: MemoryActions, editor: MemoryEditor) -> None:
        change = editor.edit()
        self.memory_editor = None

        def added(memory: Memory) -> None:
            self.show_info("Added to your memories; Timothy can recall it from now on.")
            self.set_memory_pane_visible(True)
            self.memory_pane.show_memory(memory.id)

        actions.add(self, change, on_done=added, on_failure=self._failed)

    def _file_dialog(self, title: str, *, saving: bool) -> QFileDialog:
        dialog = QFileDialog(self, title, str(Path.home()), MEMORY_FILES)
        if saving:
            dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
            dialog.setDefaultSuffix("jsonl")
            dialog.selectFile(f"timothy-memories-{self.now().astimezone():%Y-%m-%d}.jsonl")
        else:
            dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        dialog.finished.connect(lambda _code: self._file_dialog_closed(dialog))
        self.file_dialog = dialog
        return dialog

    def _file_dialog_closed(self, dialog: QFileDialog) -> None:
        if self.file_dialog is dialog:
            self.file_dialog = None
        dialog.deleteLater()

    def export_memories(self) -> QFileDialog | None:
        """Every memory to a JSON Lines file, as `timothy memories export FILE` writes it."""
        actions = self._memory_actions()
        if actions is None:
            return None
        dialog = self._file_dialog("Export memories", saving=True)
        dialog.fileSelected.connect(lambda name: self._export_to(actions, Path(name)))
        dialog.open()
        return dialog

    def _export_to(self, actions: MemoryActions, path: Path) -> None:
        actions.export_to(
            self,
            path,
            on_done=lambda count: self.show_info(
                f"Exported {count:,} memor{'y' if count == 1 else 'ies'} to {path}."
            ),
            on_failure=lambda failure: self.show_error(
                f"Could not export to {path}: {failure.message}"
            ),
        )

    def import_memories(self) -> QFileDialog | None:
        """Memories from a JSON Lines file (an export), all or none."""
        actions = self._memory_actions()
        if actions is None:
            return None
        dialog = self._file_dialog("Import memories", saving=False)
        dialog.fileSelected.connect(lambda name: self._import_from(actions, Path(name)))
        dialog.open()
        return dialog

    def _import_from(self, actions: MemoryActions, path: Path) -> None:
        actions.import_from(
            self,
            path,
            on_done=lambda count: self.show_info(
                f"Imported {count:,} memor{'y' if count == 1 else 'ies'} from {path.name}."
            ),
            on_failure=lambda failure: self.show_error(
                f"Could not import {path.name}: {failure.message}"
            ),
        )

    def export_open_conversation(self) -> QFileDialog | None:
        conversation_id = self.chat.conversation_id
        if conversation_id is None:
            self.show_info("Open a conversation to export it: this chat has no messages yet.")
            return None
        return self.export_conversation(conversation_id)

    def export_conversation(self, conversation_id: str) -> QFileDialog | None:
        """The conversation as a Markdown document, in a file the owner chooses."""
        store = self.store
        if store is None:
            self.show_error("The conversation cannot be exported: the memory store is not open.")
            return None
        listed = next(
            (c for c in self.sidebar.model.conversations() if c.id == conversation_id), None
        )
        title = listed.title if listed is not None else self.chat.title
        dialog = QFileDialog(self, "Export conversation", str(Path.home()), MARKDOWN_FILES)
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setDefaultSuffix("md")
        dialog.selectFile(markdown_file_name(title, self.now()))
        dialog.finished.connect(lambda _code: self._file_dialog_closed(dialog))
        dialog.fileSelected.connect(
            lambda name: self._export_conversation_to(store, conversation_id, Path(name))
        )
        self.file_dialog = dialog
        dialog.open()
        return dialog

    def _export_conversation_to(self, store: StoreEngine, conversation_id: str, path: Path) -> None:
        self.workers.run(
            self,
            lambda: export_markdown(store, conversation_id, path),
            "exporting the conversation",
            on_success=lambda written: self.show_info(f"Exported the conversation to {written}."),
            on_failure=lambda failure: self.show_error(
                f"Could not export the conversation: {failure.message}"
            ),
        )

    def focus_conversation_search(self) -> None:
        self.set_conversations_visible(True)
        self.sidebar.focus_search()

    # -- panes -------------------------------------------------------------------------

    def set_memory_pane_visible(self, visible: bool) -> None:
        self._want_pane("memory", visible)

    def toggle_memory_pane(self) -> None:
        self.set_memory_pane_visible(self.memory_pane.isHidden())

    def set_conversations_visible(self, visible: bool) -> None:
        self._want_pane("conversations", visible)

    def toggle_conversations(self) -> None:
        self.set_conversations_visible(self.sidebar.isHidden())

    def _want_pane(self, name: str, visible: bool) -> None:
        self.panes_wanted[name] = visible
        self.state.set_flag(f"window/{name}_visible", visible)
        if visible:  # asked for now: it keeps its place when the window is narrow
            self._pane_priority.remove(name)
            self._pane_priority.insert(0, name)
        self._fit_panes()

    def _fit_panes(self) -> None:
        """Show each wanted pane that fits beside the chat at its minimum width; the View
        ticks follow what is shown. Every width the window allows thus lays out whole."""
        panes = {
            "conversations": (self.sidebar, self.menus.conversations_action),
            "memory": (self.memory_pane, self.menus.memory_action),
        }
        handle = self.splitter.handleWidth()
        room = self.width() - CHAT_MIN_WIDTH
        for name in self._pane_priority:
            pane, action = panes[name]
            need = pane.minimumWidth() + handle
            shown = self.panes_wanted[name] and need <= room
            if shown:
                room -= need
            focused = QApplication.focusWidget()
            # Hiding the pane that has the keyboard: Qt would hand it to the next widget in
            # the window (a status-bar button); the owner goes on in the chat instead.
            taken = not shown and focused is not None and pane.isAncestorOf(focused)
            pane.setVisible(shown)
            action.setChecked(shown)
            if taken:
                self.chat.take_focus()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        if hasattr(self, "menus"):  # not while __init__ lays the window out
            self._fit_panes()

    # -- backups and restoring ---------------------------------------------------------

    def _data_folder(self) -> Path:
        return self.store.data_dir if self.store is not None else paths.data_dir()

    def _backups_page(self) -> BackupsPage | None:
        dialog = self.settings_dialog
        return dialog.backups_page if dialog is not None else None

    def back_up_now(self) -> None:
        """A backup made by hand (kept until the owner deletes it), on a worker, verified."""
        store, page = self.store, self._backups_page()
        if store is None or self.restoring:
            return
        if not isinstance(store, Store):  # the page offers nothing then; said all the same
            message = server_backups_message(store.location)
            if page is not None:
                page.show_note(message)
            else:
                self.show_error(message)
            return
        now = self.now()
        if page is not None:
            page.set_busy("Backing up…")

        def made(path: Path) -> None:
            if page is not None:
                page.set_busy(None)
                page.show_note(f"Backed up to {path.name} (integrity checked).")
                page.reload()

        def failed(failure: Failure) -> None:
            if page is not None:
                page.set_busy(None)
                page.show_note(f"No backup was made: {failure.message}")
            else:
                self.show_error(f"No backup was made: {failure.message}")

        self.workers.run(
            self,
            lambda: backups.make_backup(store, now=now),
            "backing up your memories",
            on_success=made,
            on_failure=failed,
        )

    def ask_restore(self, backup: Backup, kind: str, parent: QWidget | None = None) -> None:
        """Ask, then restore `backup` in place of the store (Settings > Backups, banner)."""
        if self.store_restore is not None:
            self.store_restore.ask(backup, kind or KIND_LABELS[backup.reason], parent or self)

    def restore_latest_good_backup(self) -> None:
        """The damage banner's offer: find the newest backup that passes its check (on a
        worker: each is checked whole), then ask to restore it."""
        if self.store is None or self.store_restore is None:
            return
        data = self._data_folder()
        self.banner.show_message(
            "Looking for the newest backup that passes its check…", kind="info"
        )

        def found(backup: Backup | None) -> None:
            if backup is not None:
                self.banner.dismiss()
                self.ask_restore(backup, KIND_LABELS[backup.reason])
                return
            self.banner.show_message(
                "No backup of your memories passes its check, so none can be restored. "
                "Settings ▸ Backups lists them; `timothy doctor` in a terminal says what "
                "else can be done.",
                kind="error",
                action="backups",
                action_label="Open Backups",
            )

        self.workers.run(
            self,
            lambda: backups.newest_sound_backup(data),
            "checking the backups",
            on_success=found,
            on_failure=self._failed,
        )

    def _restore_blocker(self) -> str | None:
        """Why a restore cannot start now (work that uses the store for long), or None."""
        if self.chat.streaming:
            return "A reply is being written. Restore when it has finished, or stop it first."
        if self.upkeep.backfill.running:
            return (
                "Timothy is re-embedding your memories. Restore when it has finished, or stop "
                "it in the status bar first."
            )
        if self.upkeep.consolidation.running:
            return "Timothy is tidying up your memories. Restore when it has finished."
        return None

    def _restore_refused(self, reason: str) -> None:
        page = self._backups_page()
        if page is not None:
            page.show_note(reason)
        self.show_error(reason)

    def _restore_started(self, backup: Backup) -> None:
        self.restoring = True
        self._restoring_from = backup
        self.upkeep.paused = True
        self.chat.set_paused(RESTORING)
        self.memory_pane.setEnabled(False)
        self.banner.show_message(
            f"Restoring your memories from the backup of {made_text(backup)}; chatting and "
            "changes to memories wait until it has finished.",
            kind="info",
        )
        page = self._backups_page()
        if page is not None:
            page.set_busy("Restoring this backup…")

    def _restore_ended(self) -> None:
        self.restoring = False
        self.upkeep.paused = False
        self.chat.set_paused(None)
        self.memory_pane.setEnabled(True)
        page = self._backups_page()
        if page is not None:
            page.set_busy(None)
            page.reload()

    def _restored(self, result: RestoreResult) -> None:
        """Every view reads the restored store: conversations, the open one, the memory
        pane, the counts; the engine is rebuilt over it."""
        self._restore_ended()
        count = result.memories
        kept = (
            f" The file it replaced is kept at {result.kept_aside}."
            if result.kept_aside is not None
            else ""
        )
        source = self._restoring_from
        when = made_text(source) if source is not None else result.restored_from.name
        memories = f"{count:,} memor{'y' if count == 1 else 'ies'}"
        text = f"Restored {memories} from the backup of {when}.{kept}"
        self.banner.show_message(text, kind="info")
        page = self._backups_page()
        if page is not None:
            page.show_note(text)
        current = self.chat.conversation_id
        self.chat.new_chat()
        self.memory_pane.recall_view.show_nothing()
        self.reload_conversations(open_id=current)
        self.memory_pane.start()
        self.upkeep.refresh_counts()
        if self.assistant is not None:
            self.assistant.configure(self.settings)

    def _restore_failed(self, message: str) -> None:
        self._restore_ended()
        page = self._backups_page()
        if page is not None:
            page.show_note(message)
        self.show_error(message)
        self.memory_pane.start()  # a view that asked while the store was closed asks again
        self.upkeep.refresh_counts()

    # -- the reply ---------------------------------------------------------------------

    def stop_reply(self) -> None:
        self.chat.stop()

    # -- settings ----------------------------------------------------------------------

    def open_settings(self, page: str = "chat") -> SettingsDialog:
        if self.settings_dialog is not None:
            self.settings_dialog.show_page(page)
            self.settings_dialog.raise_()
            return self.settings_dialog
        dialog = SettingsDialog(
            self.settings,
            self.network,
            page=page,
            data=self._data_folder(),
            can_restore=self.store is not None,
            server=None
            if self.store is None or isinstance(self.store, Store)
            else self.store.location,
            parent=self,
        )
        dialog.settings_saved.connect(self.apply_settings)
        dialog.settings_saved.connect(self._retry_server_if_away)
        if self.store is not None:
            dialog.storage_page.offer_copy(self.store, self._data_folder(), self.store_copy)
        dialog.backups_page.backup_requested.connect(self.back_up_now)
        dialog.backups_page.restore_requested.connect(
            lambda backup, kind: self.ask_restore(backup, kind, dialog)
        )
        if self.restoring:
            dialog.backups_page.set_busy("Restoring a backup…")
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
        if self._loads_begun:
            self._build_for(settings)
        else:
            # At start the conversation list is read and shown first (and the window's
            # other first reads drawn, `_listed_first`): building the engine
            # imports the provider's SDK, a second of Python on a worker that held the GIL
            # the list's query and the first paint were waiting for. A message sent before
            # the engine is built waits for it.
            self._waiting_settings = settings
            if self.assistant is not None and self.store_conversations is not None:
                self.store_conversations.expect_engine()
        self._offer_restart_for_store(settings)
        self.settings_applied.emit(settings)

    def _build_for(self, settings: Settings) -> None:
        """The chat engine and the model picker's list for `settings`, each on a worker. The
        list is asked once the engine is built (`_assistant_configured`), with the key its
        build read: the keyring is read once (a locked one may prompt at each read). At
        start it then waits in `start_loads` for the engine's local model."""
        if self.assistant is not None:
            self.assistant.configure(settings)
            self._show_chat_model(settings)
        else:
            self._offer_chat_models(settings, later=not self.start_loads.started)

    def _listed_first(self) -> None:
        """The conversation list has been read once: once the window's first reads are in
        and drawn (`_start_reads_done`), the engine is built, and once it is in use with its
        local model, start-up's later loads follow one by one. A message sent meanwhile
        starts the build at once (`_sending`)."""
        if self._listed:
            return
        self._listed = True
        if self._hurry:
            self._begin_loads()
            return
        self._idle_since_ms = 0
        self._idle_check.start()

    def _start_reads_done(self) -> bool:
        """The store's first reads have arrived and the opened conversation is drawn."""
        return not self.workers.busy and not self.chat.transcript.building

    def _check_idle(self) -> None:
        self._idle_since_ms += IDLE_CHECK_MS
        if self._start_reads_done() or self._idle_since_ms >= IDLE_WAIT_MAX_MS:
            self._begin_loads()

    def _sending(self, _text: str) -> None:
        self._hurry = True
        if self._listed:
            self._begin_loads()

    def _begin_loads(self) -> None:
        self._idle_check.stop()
        if self._loads_begun:
            return
        self._loads_begun = True
        waiting, self._waiting_settings = self._waiting_settings, None
        if waiting is not None and waiting is self.settings:
            self._build_for(waiting)
        if self.assistant is None or waiting is None or waiting is not self.settings:
            self._start_later_loads()

    def _start_later_loads(self) -> None:
        """The chat engine and its local model are in (or failed): what start-up loads
        besides follows, one load at a time (`start_loads`): the code on show is coloured,
        and Pygments' other lexers are made last."""
        if self.start_loads.started:
            return
        self.start_loads.add("colouring the code on show", colour_held_code)
        if self.warm_up_code:
            self.start_loads.add("preparing code highlighting", warm_up_highlighting)
        self.start_loads.start()

    def _retry_server_if_away(self, settings: Settings) -> None:
        """Settings saved with the same storage choice (its password put right, say): a
        server that is away is tried at once, not at its next retry (a refused login's may
        be minutes away)."""
        same_choice = settings.store == self.opened_store_choice
        if same_choice and self.store is not None and self.server_away:
            self.store.retry_now()

    def _offer_restart_for_store(self, settings: Settings) -> None:
        """Another store is only opened at the next start (the open one has conversations,
        turns and upkeep running on it): say so, with a restart at hand."""
        if settings.store == self.opened_store_choice:
            return
        self.banner.show_message(
            "Timothy uses the new storage choice from its next start.",
            kind="info",
            icon="server",
            action=RESTART,
            action_label="Restart now",
        )

    def _show_chat_model(self, settings: Settings) -> None:
        """The header's model picker offers the chosen model (Bedrock's Nova models besides)
        until a list arrives."""
        picker = self.chat.model_picker
        if settings.chat_provider == "openai":
            picker.show_models([], settings.openai.chat_model)
        elif settings.chat_provider == "bedrock":
            picker.show_models(list(BEDROCK_MODELS), settings.bedrock.chat_model)
        else:
            picker.show_models([], "")

    def _offer_chat_models(
        self, settings: Settings, *, later: bool = False, chat: ChatProvider | None = None
    ) -> None:
        """Fill the header's model picker: an OpenAI-compatible server's own list, Bedrock's
        chat models for the region (both asked on a worker; Bedrock's Nova models until
        then, or when the region's cannot be listed), nothing without a provider. `later`:
        asked in `start_loads`' turn (at start). `chat`: the built provider, whose key the
        list is asked with (else the keyring's is read)."""
        picker = self.chat.model_picker
        run = self.start_loads.add if later else self._ask_network
        self._show_chat_model(settings)
        if settings.chat_provider == "openai":
            current = settings.openai.chat_model

            def listed(models: list[str]) -> None:
                if self.settings is settings:  # not replaced meanwhile
                    picker.show_models(models, current)

            if isinstance(chat, OpenAIChat):
                run("listing the server's models", chat.list_models, listed)
            elif chat is None and self.assistant is None:
                run(
                    "listing the server's models",
                    lambda: list_chat_models(settings.openai),
                    listed,
                )
            # else no chat model could be built (its key could not be read, say): the list
            # would fail the same way, or read a locked keyring once more.
        elif settings.chat_provider == "bedrock":
            current = settings.bedrock.chat_model

            def regions_models(found: BedrockModels) -> None:
                if self.settings is settings:
                    picker.show_models(list(found.models), current)

            # failing, the Nova models stay on offer
            run(
                "listing Bedrock's models",
                lambda: list_bedrock_chat_models(settings.bedrock),
                regions_models,
            )

    def _ask_network(
        self, what: str, work: Callable[[], object], on_success: Callable[[Any], None]
    ) -> None:
        self.network.run(self, work, what, on_success=on_success)

    def choose_chat_model(self, model: str) -> None:
        """The owner picked another model in the header: save it and rebuild the engine."""
        current = self.settings
        if current.chat_provider == "openai":
            chosen = current.replace(openai=dataclasses.replace(current.openai, chat_model=model))
        elif current.chat_provider == "bedrock":
            chosen = current.replace(bedrock=dataclasses.replace(current.bedrock, chat_model=model))
        else:
            return
        self.workers.run(
            self,
            lambda: save_settings(chosen),
            "saving settings",
            on_success=lambda _result: self.apply_settings(chosen),
            on_failure=self._failed,
        )

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
        store = self.store
        if self.server_away and is_unreachable_message(message):
            self._show_server_state()  # the away banner says it, and that it retries
            return
        if (
            isinstance(store, Store)
            and store.damaged
            and message.startswith(f"The memory database {store.path} is damaged")
        ):
            # A view refused by the damaged store: the damage banner says it with the way
            # back (its offer to restore, or what followed it), so it is not pushed away.
            if not (self.banner.isVisible() and self.banner.kind == "error"):
                self.upkeep.show_damage()
            return
        self.banner.show_message(message, kind="error")

    def show_info(self, message: str) -> None:
        self.banner.show_message(message, kind="info", timeout_ms=6000)

    def _failed(self, failure: Failure) -> None:
        self.show_error(failure.message)

    def _open_logs(self) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(paths.log_dir())))

    def show_user_guide(self) -> UserGuideDialog:
        dialog = UserGuideDialog(paths.readme_path(), self.workers, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def show_shortcuts(self) -> ShortcutsDialog:
        dialog = ShortcutsDialog(self.actions(), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def show_about(self) -> AboutDialog:
        dialog = AboutDialog(self._data_folder(), self.workers, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    # -- closing -----------------------------------------------------------------------

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self._closing:
            self._closing = True
            release_lexing()
            self.save_state()
            self.chat.stop()
            self.upkeep.cancel()
            self.memory_pane.close_store_events()
            if self.store_restore is not None and not self.store_restore.wait(60_000):
                log.warning("closing while a backup is still being restored")
            if self.assistant is not None:
                self.hide()  # gone for the owner while the local model finishes loading
                if not self.assistant.wait_for_embedder(EMBEDDER_QUIT_WAIT_SECONDS):
                    log.warning("closing while the local embedding model is still loading")
            pools = (self.workers, self.network, self.jobs)
            if not all(pool.wait(3000) for pool in pools):
                log.warning("closing with work still running")
            if self.assistant is not None:
                self.assistant.close()
        super().closeEvent(event)
