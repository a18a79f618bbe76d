"""*Browse*: every memory, searched with recall's own text normalisation, filtered by type and
status, with the chosen memory's version chain below.

The queue's keys work on the selection here too (C confirms, or says an active memory is
still true; E edits; R rejects; A archives; Del forgets for good, after a confirmation that
says exactly what goes), and so does a context menu with the same actions and Restore (a
rejected memory back to staged, an archived one back to active). The list and the history
share the height: the history gets what its versions need, the list keeps at least a few rows
(until the owner drags the divider).
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPoint,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QKeyEvent, QKeySequence, QResizeEvent, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from app.jobs.workers import Failure, Workers
from app.look import icons, theme
from app.look.search_escape import empties_on_escape
from app.memories.actions import MemoryActions
from app.memories.forget_confirmation import ForgetConfirmation
from app.memories.memory_browse_model import BrowseQuery, MemoryBrowseModel
from app.memories.memory_detail import MemoryDetail
from app.memories.memory_row_delegate import MemoryRowDelegate
from timothy.store import Memory, MemoryStatus, MemoryType, Store
from timothy.store.backup_folder import backups_dir
from timothy.store.engine import StoreEngine
from timothy.store.forget import ForgetReport
from timothy.store.records import utc_now

SEARCH_DELAY_MS = 180
LIST_MIN_ROWS = 3  # the list keeps this many rows in sight when the history is long


@dataclass(frozen=True, slots=True)
class BrowseAction:
    name: str
    label: str
    key: str  # "": no key of its own (the context menu and the detail's button offer it)
    statuses: frozenset[MemoryStatus]  # what a memory must be for the action to apply to it
    single: bool = False  # only for one memory at a time


# The queue's keys, on the selection. "confirm" on an active memory says it is still true.
BROWSE_ACTIONS = (
    BrowseAction("confirm", "Confirm", "C", frozenset({MemoryStatus.STAGED, MemoryStatus.ACTIVE})),
    BrowseAction(
        "edit", "Edit…", "E", frozenset({MemoryStatus.STAGED, MemoryStatus.ACTIVE}), single=True
    ),
    BrowseAction("reject", "Reject", "R", frozenset({MemoryStatus.STAGED})),
    BrowseAction("archive", "Archive", "A", frozenset({MemoryStatus.ACTIVE})),
    BrowseAction(
        "restore", "Restore", "", frozenset({MemoryStatus.REJECTED, MemoryStatus.ARCHIVED})
    ),
    BrowseAction("forget", "Forget for good…", "Del", frozenset(MemoryStatus)),
)


def count_text(
    query: BrowseQuery, shown: int, exhausted: bool, total: int | None, active: int | None
) -> str:
    """What the count under the filters counts: "12 active · 18 in all", "3 staged",
    "4 matches"."""
    if total is not None:
        if query.status is not None:
            return f"{total:,} {query.status.value}"
        return f"{active or 0:,} active · {total:,} in all"
    if exhausted:
        return "No matches" if shown == 0 else f"{shown:,} match{'es' if shown != 1 else ''}"
    return f"{shown:,}+ matches"


def empty_text(query: BrowseQuery) -> str:
    """What an empty list means: no memory at all yet, or none that this search or these
    filters let through (and what to change)."""
    if not query.text and query.type is None and query.status is None:
        return (
            "<b>No memories yet</b><br>Facts you confirm, ask Timothy to remember or add "
            "with Memory ▸ Add a memory… are listed here."
        )
    kind = f"{query.type.value} " if query.type is not None else ""
    status = f"{query.status.value} " if query.status is not None else ""
    if not query.text:
        return f"<b>No {status}{kind}memories</b><br>Other filters may show some."
    searched = html.escape(query.text, quote=False)
    filtered = " or other filters" if kind or status else ""
    return f"<b>No {status}{kind}memory matches “{searched}”</b><br>Try other words{filtered}."


class MemoryBrowser(QWidget):
    failed = Signal(str)

    def __init__(
        self,
        store: StoreEngine,
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
        # An action asked for while some chosen rows' memories were being read again.
        self._waiting_action: str | None = None
        self._detail_waiting = False  # the current row's memory is being read again
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
        # Down goes on into the list, Escape empties a search (as search fields do).
        self.search.installEventFilter(self)
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
        # Beside the search box, which gives way in a narrow pane: the count is never cut off.
        self.count_label = QLabel(self)
        self.count_label.setProperty("muted", True)
        search_row.addWidget(self.count_label)
        layout.addLayout(filters)

        self.splitter = QSplitter(Qt.Orientation.Vertical, self)
        self.model = MemoryBrowseModel(store, workers)
        self.model.setParent(self)  # goes with the browser: no row signal reaches a dead label
        self.model.page_loaded.connect(self._page_loaded)
        self.model.total_known.connect(self._show_total)
        self.model.load_failed.connect(self.failed)
        self.model.load_failed.connect(lambda _message: self._forget_waiting_action())
        self.view = QListView(self.splitter)
        self.view.setModel(self.model)
        self.view.setItemDelegate(MemoryRowDelegate(self.view, now=now))
        self.view.setUniformItemSizes(True)
        self.view.setFrameShape(QListView.Shape.NoFrame)
        theme.see_through(self.view)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.view.setMouseTracking(True)
        self.view.setAccessibleName("All memories")
        self.view.selectionModel().currentChanged.connect(self._current_changed)
        self.view.selectionModel().selectionChanged.connect(lambda *_args: self._pin_selection())
        self.view.verticalScrollBar().valueChanged.connect(lambda _value: self._tell_shown())
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._context_menu)
        # Over the empty list: what its emptiness means (not a blank space).
        self.empty_label = QLabel(self.view.viewport())
        self.empty_label.setWordWrap(True)
        self.empty_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_label.setTextFormat(Qt.TextFormat.RichText)
        self.empty_label.setProperty("muted", True)
        self.empty_label.setContentsMargins(24, 24, 24, 24)
        self.empty_label.hide()
        self.view.viewport().installEventFilter(self)
        self.memory_actions = actions
        self.context_menu: QMenu | None = None
        self.shortcuts: dict[str, QShortcut] = {}
        self.forget_confirmation: ForgetConfirmation | None = None
        for action in BROWSE_ACTIONS:
            if not action.key:
                continue
            # On the list only: typing in the search box never confirms anything.
            shortcut = QShortcut(QKeySequence(action.key), self.view)
            shortcut.setContext(Qt.ShortcutContext.WidgetShortcut)
            shortcut.activated.connect(lambda name=action.name: self.trigger(name))
            self.shortcuts[action.name] = shortcut
        self.detail = MemoryDetail(store, workers, actions, now=now, parent=self.splitter)
        self.detail.version_saved.connect(self._edited_here)
        self.detail.failed.connect(self.failed)
        self.detail.forget_requested.connect(lambda memory: self.ask_forget([memory]))
        self.detail.chain_shown.connect(lambda _chain: self.share_height())
        self.splitter.addWidget(self.view)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        self.splitter.setChildrenCollapsible(False)
        self.splitter.splitterMoved.connect(self._divider_dragged)
        self._sized_by_hand = False
        self._asked_sizes: list[int] = []  # what `share_height` last gave the splitter
        layout.addWidget(self.splitter, 1)
        for signal in (self.model.rowsInserted, self.model.rowsRemoved):
            signal.connect(lambda *_args: self._rows_changed())

        self._total: int | None = None
        self._active: int | None = None
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
        self._active = None
        self.count_label.setText("Searching…" if self.search.text().strip() else "")
        self.model.set_query(self.query())

    def start(self) -> None:
        """First load (called once the window is up)."""
        self.apply_query()

    def _show_total(self, total: int, active: int | None) -> None:
        self._total, self._active = total, active
        self._refresh_count()

    def _page_loaded(self) -> None:
        self._refresh_count()
        self._show_emptiness()
        if self._detail_waiting:
            current = self.model.memory_at(self.view.currentIndex().row())
            if current is not None:
                self._detail_waiting = False
                self.detail.show_memory(current)
        if self._waiting_action is not None and not self._missing_chosen():
            name, self._waiting_action = self._waiting_action, None
            self.trigger(name)
        if self._select_when_loaded:
            self.select_memory(self._select_when_loaded)
        elif not self.view.currentIndex().isValid() and self.model.rowCount() > 0:
            self.view.selectionModel().setCurrentIndex(
                self.model.index(0), QItemSelectionModel.SelectionFlag.ClearAndSelect
            )
        elif self.model.rowCount() == 0 and self.detail.memory is not None:
            # A new query resets the list without a current-row change: with nothing
            # listed, the history must not keep (and act on) the last query's memory.
            self.detail.show_memory(None)

    def _refresh_count(self) -> None:
        self.count_label.setText(
            count_text(
                self.model.query,
                self.model.rowCount(),
                self.model.exhausted,
                self._total,
                self._active,
            )
        )

    def _show_emptiness(self) -> None:
        """Say why the list is empty once its query has answered (not while it loads)."""
        empty = self.model.rowCount() == 0 and not self.model.loading
        if empty:
            self.empty_label.setText(empty_text(self.model.query))
            self.empty_label.setGeometry(self.view.viewport().rect())
        self.empty_label.setVisible(empty)

    def _rows_changed(self) -> None:
        if not self.model.loading:
            self._refresh_count()
        self._show_emptiness()
        self.share_height()
        self._tell_shown()

    def _tell_shown(self) -> None:
        """Which rows the list shows: the model holds the memories around them."""
        rows = self.model.rowCount()
        if not rows:
            return
        viewport = self.view.viewport()
        first = self.view.indexAt(QPoint(0, 0)).row()
        last = self.view.indexAt(QPoint(0, viewport.height() - 1)).row()
        self.model.show(max(first, 0), rows - 1 if last < 0 else last)

    # -- selection ---------------------------------------------------------------------

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        memory = self.model.memory_at(current.row())
        # A row whose memory was let go is being read again: it shows when it arrives.
        self._detail_waiting = memory is None and current.isValid()
        if self._detail_waiting:
            self._pin_selection()
            return
        self.detail.show_memory(memory)

    def _chosen_rows(self) -> list[int]:
        rows = {index.row() for index in self.view.selectionModel().selectedRows()}
        current = self.view.currentIndex()
        if current.isValid():
            rows.add(current.row())
        return sorted(rows)

    def _pin_selection(self) -> None:
        """The chosen rows' memories are held (and read again if let go): the keys and the
        context menu act on them wherever the list has scrolled."""
        model = self.model
        self.model.pin(
            memory_id
            for memory_id in (model.id_at(row) for row in self._chosen_rows())
            if memory_id is not None
        )

    def _forget_waiting_action(self) -> None:
        # A read that failed says so (the banner); the action is not done later unasked.
        self._waiting_action = None

    def _missing_chosen(self) -> bool:
        return bool(self.model.missing(self._chosen_rows()))

    def _focus_list(self) -> None:
        self.view.setFocus(Qt.FocusReason.ShortcutFocusReason)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """In the search box: Down moves into the list (onto its first memory when none is
        current), Escape empties a search; an empty box lets Escape go on to the window. The
        list's viewport: the empty list's words follow its size."""
        if watched is self.view.viewport() and event.type() == QEvent.Type.Resize:
            self.empty_label.setGeometry(self.view.viewport().rect())
        if watched is self.search and empties_on_escape(self.search, event):
            return True
        if (
            watched is self.search
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.modifiers() == Qt.KeyboardModifier.NoModifier
            and event.key() == Qt.Key.Key_Down
            and self.model.rowCount() > 0
        ):
            if not self.view.currentIndex().isValid():
                self.view.setCurrentIndex(self.model.index(0))
            self._focus_list()
            return True
        return super().eventFilter(watched, event)

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
        if event == "forgotten":
            self._forgotten(memory)
            return
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

    def _forgotten(self, memory: Memory) -> None:
        """A memory is gone for good: its row goes; a surviving version on show is read
        again (its chain now skips the gap)."""
        self.model.remove(memory.id)
        shown = self.detail.memory
        if shown is not None and shown.id == memory.id:
            current = self.model.memory_at(self.view.currentIndex().row())
            self.detail.show_memory(current)
        elif shown is not None:
            self.detail.show_memory(shown)
        self._recount_timer.start()

    # -- actions on the selection --------------------------------------------------------

    def selected_memories(self) -> list[Memory]:
        rows = sorted(index.row() for index in self.view.selectionModel().selectedRows())
        return [m for m in (self.model.memory_at(row) for row in rows) if m is not None]

    def applicable(self, name: str, memories: list[Memory] | None = None) -> list[Memory]:
        """The chosen memories `name` applies to (none: the action is not offered)."""
        action = next(a for a in BROWSE_ACTIONS if a.name == name)
        chosen = self.selected_memories() if memories is None else memories
        if action.single and len(chosen) != 1:
            return []
        return [m for m in chosen if m.status in action.statuses]

    def trigger(self, name: str) -> None:
        if self._missing_chosen():
            # Some chosen memories are being read again: the action waits for them.
            self._waiting_action = name
            self._pin_selection()
            return
        memories = self.applicable(name)
        if not memories:
            return
        if name == "edit":
            [memory] = memories
            self.detail.open_editor(memory)
            return
        if name == "forget":
            self.ask_forget(memories)
            return
        groups: dict[str, list[Memory]] = {}
        for memory in memories:
            change = (
                "reconfirm" if name == "confirm" and memory.status is MemoryStatus.ACTIVE else name
            )
            groups.setdefault(change, []).append(memory)
        for change, chosen in groups.items():
            # Tolerant: one changed meanwhile elsewhere is reported, the others still change.
            self.memory_actions.change(
                self,
                change,
                chosen,
                "changing memories",
                on_done=self._changed,
                on_failure=self._change_failed,
            )

    def ask_forget(self, memories: list[Memory]) -> None:
        """Read each memory's version chain (on a worker), then ask, saying exactly what
        goes; forgetting happens only on the owner's answer."""
        chosen = list(memories)
        if not chosen:
            return
        self.memory_actions.chains(
            self,
            chosen,
            on_done=lambda chains: self._find_backups(chosen, chains),
            on_failure=self._change_failed,
        )

    def _find_backups(self, chosen: list[Memory], chains: dict[str, list[Memory]]) -> None:
        """Which backups hold any version (on a worker): the question offers to purge them."""
        versions = [m.id for chain in chains.values() for m in chain] or [m.id for m in chosen]
        self.memory_actions.backups_holding(
            self,
            versions,
            on_done=lambda holding: self._confirm_forget(chosen, chains, holding),
            on_failure=lambda _failure: self._confirm_forget(chosen, chains, []),
        )

    def _confirm_forget(
        self, chosen: list[Memory], chains: dict[str, list[Memory]], holding: list[Path]
    ) -> None:
        # The chains are the store's truth now: the browser's copies may be stale.
        fresh = {m.id: m for chain in chains.values() for m in chain}
        chosen = [fresh.get(m.id, m) for m in chosen]
        if self.forget_confirmation is not None:
            self.forget_confirmation.deleteLater()
        # The backups that may still hold the words: this machine's file's (a server's own
        # backups are its administrator's: the question says so, and nothing is purged).
        folder = backups_dir(self.store.path) if isinstance(self.store, Store) else None
        dialog = ForgetConfirmation(chosen, chains, folder, self, holding=holding)
        dialog.chosen.connect(
            lambda chain: self._forget(chosen, chain, len(holding) if dialog.purge_backups() else 0)
        )
        dialog.finished.connect(lambda _result: self._confirmation_closed(dialog))
        self.forget_confirmation = dialog
        dialog.open()

    def _confirmation_closed(self, dialog: ForgetConfirmation) -> None:
        if self.forget_confirmation is dialog:
            self.forget_confirmation = None
        dialog.deleteLater()
        self.view.setFocus(Qt.FocusReason.OtherFocusReason)  # the keys work on the list again

    def _forget(self, chosen: list[Memory], chain: bool, purge: int) -> None:
        """`purge`: how many backups to remove it from as well (0: none)."""
        self.memory_actions.forget(
            self,
            chosen,
            chain=chain,
            on_done=self._forget_done,
            on_failure=self._change_failed,
            purge=purge,
        )

    def _forget_done(self, _report: ForgetReport) -> None:
        # The rows go on the store's own "forgotten" events; the window says what went
        # (it hears `MemoryActions.memories_forgotten`).
        pass

    def _changed(self, _done: list[Memory], problems: list[str]) -> None:
        # The rows update from the store's own events (`memory_changed`).
        if problems:
            more = f" ({len(problems) - 1} more like this)" if len(problems) > 1 else ""
            self.failed.emit(problems[0] + more)

    def _change_failed(self, failure: Failure) -> None:
        self.failed.emit(failure.message)

    def menu_for(self, memories: list[Memory]) -> QMenu:
        """The context menu: every browse action, enabled where it applies to the selection."""
        menu = QMenu(self)
        for action in BROWSE_ACTIONS:
            applies = self.applicable(action.name, memories)
            label = action.label
            if (
                action.name == "confirm"
                and applies
                and all(m.status is MemoryStatus.ACTIVE for m in applies)
            ):
                label = "Still true"
            if applies and len(applies) > 1:
                label += f" ({len(applies)})"
            item = menu.addAction(label)
            if action.key:
                item.setShortcut(QKeySequence(action.key))
            item.setObjectName(action.name)
            item.setEnabled(bool(applies))
            item.triggered.connect(lambda _checked=False, name=action.name: self.trigger(name))
        return menu

    def _context_menu(self, position: QPoint) -> None:
        index = self.view.indexAt(position)
        if not index.isValid():
            return
        if not self.view.selectionModel().isSelected(index):
            self.view.selectionModel().setCurrentIndex(
                index, QItemSelectionModel.SelectionFlag.ClearAndSelect
            )
        if self.context_menu is not None:
            self.context_menu.deleteLater()
        self.context_menu = self.menu_for(self.selected_memories())
        self.context_menu.popup(self.view.viewport().mapToGlobal(position))

    # -- sharing the height between the list and the history ------------------------------

    def _divider_dragged(self, _position: int, _index: int) -> None:
        self._sized_by_hand = True

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self.share_height()
        self._tell_shown()

    def share_height(self) -> None:
        """The history gets the height its versions need, the list keeps what its rows need
        (at least a few rows); whatever is left goes to the list."""
        if self._sized_by_hand:
            return
        available = self.splitter.height() - self.splitter.handleWidth()
        if available <= 0:
            return
        row = max(self.view.sizeHintForRow(0), 1) if self.model.rowCount() else 40
        rows = self.model.rowCount()
        list_floor = min(max(rows, 1), LIST_MIN_ROWS) * row + 2 * self.view.frameWidth() + 4
        wanted = self.detail.wanted_height()
        detail = max(min(wanted, available - list_floor), self.detail.minimumSizeHint().height())
        sizes = [max(available - detail, 0), detail]
        # Compared with what was last asked, not with the splitter's sizes: it may clamp
        # them to its children's minimums, and then they never matched and every page that
        # arrived laid the whole list out again (~50 ms a page at 10k rows).
        if sizes != self._asked_sizes:
            self._asked_sizes = sizes
            current = self.view.currentIndex()
            # The chosen row stays in sight if it was: a list the owner scrolled away from
            # it stays where it is (a page arriving as it scrolls changes the sizes too).
            in_sight = current.isValid() and self.view.visualRect(current).intersects(
                self.view.viewport().rect()
            )
            self.splitter.setSizes(sizes)
            if in_sight:
                self.view.scrollTo(current)
