"""*Browse*: every memory, searched with recall's own text normalisation, filtered by type and
status, with the chosen memory's version chain below."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.jobs.workers import Workers
from app.look import icons, theme
from app.memories.actions import MemoryActions
from app.memories.memory_browse_model import BrowseQuery, MemoryBrowseModel
from app.memories.memory_detail import MemoryDetail
from app.memories.memory_row_delegate import MemoryRowDelegate
from timothy.store import Memory, MemoryStatus, MemoryType, Store
from timothy.store.records import utc_now

SEARCH_DELAY_MS = 180


class MemoryBrowser(QWidget):
    failed = Signal(str)

    def __init__(
        self,
        store: Store,
        workers: Workers,
        actions: MemoryActions,
        *,
        now: Callable[[], datetime] = utc_now,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self.apply_query)
        self.store = store
        self.workers = workers
        self._select_when_loaded: str | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 8, 0, 0)
        layout.setSpacing(6)

        self.search = QLineEdit(self)
        self.search.setProperty("search", True)
        self.search.setPlaceholderText("Search memories")
        self.search.setClearButtonEnabled(True)
        self.search.addAction(
            icons.icon("search", "muted", 16),
            QLineEdit.ActionPosition.LeadingPosition,
        )
        self.search.textChanged.connect(lambda _text: self._search_timer.start())
        self.search.returnPressed.connect(self._focus_list)
        search_row = QHBoxLayout()
        search_row.setContentsMargins(10, 0, 10, 0)
        search_row.addWidget(self.search)
        layout.addLayout(search_row)

        filters = QHBoxLayout()
        filters.setContentsMargins(10, 0, 10, 0)
        self.type_filter = QComboBox(self)
        self.type_filter.addItem("All types", None)
        for kind in MemoryType:
            self.type_filter.addItem(kind.value.capitalize(), kind.value)
        self.type_filter.currentIndexChanged.connect(self.apply_query)
        filters.addWidget(self.type_filter)
        self.status_filter = QComboBox(self)
        self.status_filter.addItem("Any status", None)
        for status in MemoryStatus:
            self.status_filter.addItem(status.value.capitalize(), status.value)
        self.status_filter.currentIndexChanged.connect(self.apply_query)
        filters.addWidget(self.status_filter)
        filters.addStretch(1)
        self.count_label = QLabel(self)
        self.count_label.setProperty("muted", True)
        filters.addWidget(self.count_label)
        layout.addLayout(filters)

        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.model = MemoryBrowseModel(store, workers)
        self.model.page_loaded.connect(self._page_loaded)
        self.model.total_known.connect(self._show_total)
        self.model.load_failed.connect(self.failed)
        self.view = QListView(self.splitter)
        self.view.setModel(self.model)
        self.view.setItemDelegate(MemoryRowDelegate(self.view, now=now))
        self.view.setUniformItemSizes(True)
        self.view.setFrameShape(QListView.Shape.NoFrame)
        theme.see_through(self.view)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.view.setMouseTracking(True)
        self.view.setAccessibleName("All memories")
        self.view.selectionModel().currentChanged.connect(self._current_changed)
        self.detail = MemoryDetail(store, workers, actions, now=now, parent=self.splitter)
        self.detail.version_saved.connect(self._edited_here)
        self.detail.failed.connect(self.failed)
        self.splitter.addWidget(self.view)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        layout.addWidget(self.splitter, 1)

        self._total: int | None = None
        self._recount_timer = QTimer(self)
        self._recount_timer.setSingleShot(True)
        self._recount_timer.setInterval(150)
        self._recount_timer.timeout.connect(self.model.recount)

    # -- queries -----------------------------------------------------------------------

    def query(self) -> BrowseQuery:
        # Qt keeps combo data as plain strings: turn them back into the domain's enums.
        kind = self.type_filter.currentData()
        status = self.status_filter.currentData()
        return BrowseQuery(
            text=self.search.text().strip(),
            type=MemoryType(kind) if kind else None,
            status=MemoryStatus(status) if status else None,
        )

    def apply_query(self) -> None:
        self._search_timer.stop()
        self._total = None
        self.count_label.setText("Searching…" if self.search.text().strip() else "")
        self.model.set_query(self.query())

    def start(self) -> None:
        """First load (called once the window is up)."""
        self.apply_query()

    def _show_total(self, total: int) -> None:
        self._total = total
        self._refresh_count()

    def _page_loaded(self) -> None:
        self._refresh_count()
        if self._select_when_loaded:
            self.select_memory(self._select_when_loaded)
        elif not self.view.currentIndex().isValid() and self.model.rowCount() > 0:
            self.view.selectionModel().setCurrentIndex(
                self.model.index(0), QItemSelectionModel.SelectionFlag.ClearAndSelect
            )

    def _refresh_count(self) -> None:
        shown = self.model.rowCount()
        if self._total is not None:
            noun = "memory" if self._total == 1 else "memories"
            self.count_label.setText(f"{self._total:,} {noun}")
        elif self.model.exhausted:
            self.count_label.setText(
                "No matches" if shown == 0 else f"{shown:,} match{'es' if shown != 1 else ''}"
            )
        else:
            self.count_label.setText(f"{shown:,}+ matches")

    # -- selection ---------------------------------------------------------------------

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        self.detail.show_memory(self.model.memory_at(current.row()))

    def _focus_list(self) -> None:
        self.view.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    def select_memory(self, memory_id: str) -> bool:
        row = self.model.row_of(memory_id)
        if row < 0:
            self._select_when_loaded = memory_id
            return False
        self._select_when_loaded = None
        index = self.model.index(row)
        self.view.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
        )
        self.view.scrollTo(index)
        return True

    def show_memory(self, memory_id: str) -> None:
        """Open one memory: clear the search and filters if needed so it can be listed."""
        if self.select_memory(memory_id):
            return
        self.search.blockSignals(True)
        self.search.clear()
        self.search.blockSignals(False)
        self.type_filter.blockSignals(True)
        self.type_filter.setCurrentIndex(0)
        self.type_filter.blockSignals(False)
        self.status_filter.blockSignals(True)
        self.status_filter.setCurrentIndex(0)
        self.status_filter.blockSignals(False)
        self._select_when_loaded = memory_id
        self.apply_query()

    def _edited_here(self, new: Memory) -> None:
        self._select_when_loaded = new.id

    # -- changes from anywhere ---------------------------------------------------------

    def memory_changed(self, event: str, memory: Memory) -> None:
        self.model.memory_changed(memory)
        if event == "superseded" and memory.supersedes:
            old_id = memory.supersedes
            self.workers.run(
                self,
                lambda: list(self.store.memories.get_many([old_id]).values()),
                "refreshing the memory list",
                on_success=self.model.update_rows,
            )
        if self._select_when_loaded == memory.id:
            self.select_memory(memory.id)
        shown = self.detail.memory
        if shown is not None and shown.id in (memory.id, memory.supersedes):
            self.detail.show_memory(memory if shown.id == memory.id else shown)
        self._recount_timer.start()
