"""The memory side pane: *To confirm*, *Still true?*, *Browse* and *Last recall* in tabs.

It listens to the store, so a fact staged by extraction on another thread shows up in the
queue (and bumps the tab's count) without anyone asking.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QTabWidget, QToolButton, QVBoxLayout, QWidget

from app.jobs.workers import Workers
from app.look import icons, theme
from app.look.tips import set_tip
from app.memories.actions import MemoryActions
from app.memories.confirm_queue import ConfirmQueue
from app.memories.fading_facts import FadingFacts
from app.memories.memory_browser import MemoryBrowser
from app.memories.memory_card_list import TitleLookup
from app.memories.recall_view import RecallView
from app.memories.store_events import StoreEvents
from timothy.retrieval.settings import RecallSettings
from timothy.store import Memory
from timothy.store.engine import StoreEngine
from timothy.store.records import RecallRecord, utc_now

QUEUE_TAB, FADING_TAB, BROWSE_TAB, RECALL_TAB = range(4)

AWAY_TEXT = (
    "Your memories wait for the memory server, which is out of reach. They show again by "
    "themselves when it answers; what Timothy learns meanwhile is kept on this computer."
)
REFUSED_TEXT = (
    "Your memories wait for the memory server, which turned this computer away (the banner "
    "above says why). They show again once it lets this computer in; what Timothy learns "
    "meanwhile is kept on this computer."
)


class MemoryPane(QWidget):
    source_clicked = Signal(str)  # open this conversation
    failed = Signal(str)
    hide_requested = Signal()
    staged_count_changed = Signal(int)
    minimum_width_changed = Signal()  # the tabs' texts (their counts) need another width

    def __init__(
        self,
        store: StoreEngine | None,
        workers: Workers,
        *,
        now: Callable[[], datetime] = utc_now,
        title_of: TitleLookup | None = None,
        store_error: str | None = None,
        recall_settings: Callable[[], RecallSettings] = RecallSettings,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("MemoryPane")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.store = store
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        header = QHBoxLayout()
        header.setContentsMargins(14, 10, 8, 4)
        icon = QLabel(self)
        icon.setPixmap(icons.pixmap("memory", theme.colours().accent, 18))
        header.addWidget(icon)
        title = QLabel("Memory", self)
        title.setProperty("heading", True)
        header.addWidget(title)
        header.addStretch(1)
        self.hide_button = QToolButton(self)
        self.hide_button.setProperty("flat", True)
        self.hide_button.setIcon(icons.icon("panel-right", "muted", 16))
        set_tip(self.hide_button, "Hide the memory pane (Ctrl+Alt+B)")
        self.hide_button.clicked.connect(self.hide_requested)
        header.addWidget(self.hide_button)
        layout.addLayout(header)
        # While a server store is out of reach: what the empty lists below mean.
        self.away_label = QLabel(AWAY_TEXT, self)
        self.away_label.setWordWrap(True)
        self.away_label.setProperty("muted", True)
        self.away_label.setContentsMargins(14, 4, 14, 8)
        self.away_label.hide()
        layout.addWidget(self.away_label)

        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("MemoryTabs")
        self.tabs.setDocumentMode(True)
        self.tabs.tabBar().setExpanding(False)
        layout.addWidget(self.tabs, 1)
        self._least_width = 0
        self.events: StoreEvents | None = None
        self.memory_actions: MemoryActions | None = None  # one for every view: what the owner does
        self.queue: ConfirmQueue | None = None
        self.fading: FadingFacts | None = None
        self.browser: MemoryBrowser | None = None
        self.recall_view = RecallView(self)

        if store is None:
            message = QLabel(
                "Your memories cannot be shown because the memory store could not be opened"
                + (f": {store_error}" if store_error else ".")
            )
            message.setWordWrap(True)
            message.setAlignment(Qt.AlignmentFlag.AlignCenter)
            message.setContentsMargins(24, 0, 24, 0)
            self.tabs.addTab(message, "Memory")
            self.tabs.addTab(self.recall_view, "Last recall")
            return

        self.memory_actions = MemoryActions(store, workers, now=now, parent=self)
        self.queue = ConfirmQueue(
            store, workers, self.memory_actions, now=now, title_of=title_of, parent=self
        )
        self.fading = FadingFacts(
            store,
            workers,
            self.memory_actions,
            now=now,
            title_of=title_of,
            recall_settings=recall_settings,
            parent=self,
        )
        self.browser = MemoryBrowser(store, workers, self.memory_actions, now=now, parent=self)
        self.tabs.addTab(self.queue, "To confirm")
        self.tabs.addTab(self.fading, "Still true?")
        self.tabs.addTab(self.browser, "Browse")
        self.tabs.addTab(self.recall_view, "Last recall")
        self.queue.count_changed.connect(self._queue_count)
        self.fading.count_changed.connect(self._fading_count)
        for source in (self.queue, self.fading):
            source.emptied_with_focus.connect(self._focus_tabs)
            source.source_clicked.connect(self.source_clicked)
            source.failed.connect(self.failed)
        self.browser.failed.connect(self.failed)
        # An import writes many memories at once and the store announces none of them.
        self.memory_actions.memories_imported.connect(lambda _count: self.start())
        self.events = StoreEvents(store, self)
        self.events.memory_changed.connect(self._memory_changed)

    def start(self) -> None:
        """Load the lists (after the window is shown, so start-up never waits on the store)."""
        if self.queue is not None and self.fading is not None and self.browser is not None:
            self.queue.reload()
            self.fading.reload()
            self.browser.start()

    def set_server_away(self, away: bool, *, refused: bool = False) -> None:
        """Say (or stop saying) that the memories wait for the memory server: one out of
        reach, or (`refused`) one that turned this computer's login away."""
        self.away_label.setText(REFUSED_TEXT if refused else AWAY_TEXT)
        self.away_label.setVisible(away)

    def close_store_events(self) -> None:
        if self.events is not None:
            self.events.detach()

    def _memory_changed(self, event: str, memory: Memory) -> None:
        assert self.queue is not None and self.fading is not None and self.browser is not None
        if event in ("staged", "promoted", "rejected", "superseded", "restored", "forgotten"):
            self.queue.schedule_reload()
        if event in (
            "reconfirmed",
            "archived",
            "superseded",
            "rejected",
            "promoted",
            "restored",
            "forgotten",
        ):
            self.fading.schedule_reload()
        self.browser.memory_changed(event, memory)
        if event == "forgotten":
            self.recall_view.memory_forgotten(memory.id)

    def _queue_count(self, count: int) -> None:
        self.tabs.setTabText(QUEUE_TAB, f"To confirm · {count}" if count else "To confirm")
        self._fit_tabs()
        self.staged_count_changed.emit(count)

    def _fading_count(self, count: int) -> None:
        self.tabs.setTabText(FADING_TAB, f"Still true? · {count}" if count else "Still true?")
        self._fit_tabs()

    # -- width -------------------------------------------------------------------------

    def set_least_width(self, width: int) -> None:
        """The narrowest the pane may be laid out: `width`, or more where its tabs need it."""
        self._least_width = width
        self._fit_tabs()

    def _fit_tabs(self) -> None:
        """Keep every tab in view, counts and all: narrower than its tabs, the tab bar hid
        the last of them (Last recall) behind scroll arrows."""
        need = max(self._least_width, self.tabs.tabBar().sizeHint().width())
        if need != self.minimumWidth():
            self.setMinimumWidth(need)
            self.minimum_width_changed.emit()

    def changeEvent(self, event: QEvent) -> None:
        super().changeEvent(event)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._fit_tabs()  # the tabs' texts take another width

    # -- navigation --------------------------------------------------------------------

    def _focus_tabs(self) -> None:
        """The keyboard on the tabs, where it shows and the arrows lead on to another list."""
        self.tabs.tabBar().setFocus(Qt.FocusReason.OtherFocusReason)

    def show_queue(self) -> None:
        if self.queue is not None:
            self.tabs.setCurrentWidget(self.queue)
            self.queue.view.setFocus(Qt.FocusReason.OtherFocusReason)

    def focus_search(self) -> None:
        if self.browser is not None:
            self.tabs.setCurrentWidget(self.browser)
            self.browser.focus_search()

    def show_memory(self, memory_id: str) -> None:
        if self.browser is not None:
            self.tabs.setCurrentWidget(self.browser)
            self.browser.show_memory(memory_id)

    def show_recall(
        self, recall: RecallRecord | None, caption: str = "Latest turn", reason: str = ""
    ) -> None:
        if recall is None:
            self.recall_view.show_no_block(caption, reason)
        else:
            self.recall_view.show_recall(recall, caption)

    def open_recall_tab(self) -> None:
        self.tabs.setCurrentWidget(self.recall_view)

    def current_tab(self) -> int:
        return self.tabs.currentIndex()

    def set_current_tab(self, index: int) -> None:
        if 0 <= index < self.tabs.count():
            self.tabs.setCurrentIndex(index)
