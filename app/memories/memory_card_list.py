"""A keyboard-driven list of memory cards with actions on the selection (the base of *To confirm*
and *Still true?*).

Loading and every change run on a worker; the list reloads itself when the store says a
memory changed, keeping the selection (or moving to the next card, so a reviewer can work
through a queue with the keyboard alone).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from PySide6.QtCore import QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QListView,
    QPushButton,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.jobs.workers import Failure, Workers
from app.look import icons, theme
from app.memories.actions import MemoryActions
from app.memories.memory_card_delegate import MemoryCardDelegate
from app.memories.memory_editor import MemoryEditor
from app.memories.memory_list_model import MemoryListModel
from timothy.errors import ChangedElsewhereError
from timothy.store import Memory
from timothy.store.engine import StoreEngine
from timothy.store.records import utc_now

TitleLookup = Callable[[str], str | None]


@dataclass(frozen=True, slots=True)
class CardAction:
    name: str
    label: str
    icon: str
    keys: tuple[str, ...]
    tip: str
    danger: bool = False


class MemoryCardList(QWidget):
    source_clicked = Signal(str)  # a card's conversation link: the session id
    count_changed = Signal(int)
    failed = Signal(str)  # a sentence for the owner
    loaded = Signal()  # a (re)load finished and the list shows its result
    emptied_with_focus = Signal()  # the last card went while the keyboard was on the list

    card_actions: tuple[CardAction, ...] = ()
    empty_title = ""
    empty_text = ""
    edit_label = "Save new version"

    def __init__(
        self,
        store: StoreEngine,
        workers: Workers,
        actions: MemoryActions,
        *,
        now: Callable[[], datetime] = utc_now,
        title_of: TitleLookup | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.store = store
        self.workers = workers
        self.memory_actions = actions  # changes go through the pane's one MemoryActions
        self.now = now
        self.title_of = title_of
        self.editor: MemoryEditor | None = None
        self._generation = 0
        self._busy = False

        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.setSpacing(4)
        header = QHBoxLayout()
        header.setContentsMargins(14, 0, 8, 0)
        self.count_label = QLabel(self)
        self.count_label.setProperty("muted", True)
        header.addWidget(self.count_label, 1)
        self.select_all_button = QToolButton(self)
        self.select_all_button.setProperty("flat", True)
        self.select_all_button.setText("Select all")
        self.select_all_button.setToolTip("Select every card (Ctrl+A)")
        self.select_all_button.clicked.connect(self.select_all)
        header.addWidget(self.select_all_button)
        layout.addLayout(header)

        self.stack = QStackedWidget(self)
        self.model = MemoryListModel()
        self.view = QListView(self.stack)
        self.view.setModel(self.model)
        self.delegate = MemoryCardDelegate(self.view, now=now)
        self.delegate.source_clicked.connect(self.source_clicked)
        self.view.setItemDelegate(self.delegate)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.view.setResizeMode(QListView.ResizeMode.Adjust)
        # Cards take the viewport's width; when a vertical scroll bar narrows it they are
        # laid out again, so a horizontal bar would only hide the cards' right edge.
        self.view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        # Cards have their own heights; lay them out a batch at a time so a queue of
        # hundreds never holds up the window while each card is measured.
        self.view.setLayoutMode(QListView.LayoutMode.Batched)
        self.view.setBatchSize(20)
        self.view.setFrameShape(QListView.Shape.NoFrame)
        theme.see_through(self.view)
        self.view.setAccessibleName(self.accessible_name())
        self.view.selectionModel().selectionChanged.connect(self._refresh_buttons)
        self.stack.addWidget(self.view)
        self.empty = QWidget(self.stack)
        empty_layout = QVBoxLayout(self.empty)
        empty_layout.addStretch(1)
        icon = QLabel(self.empty)
        icon.setPixmap(icons.pixmap(self.empty_icon(), theme.colours().muted, 36))
        icon.setAlignment(Qt.AlignmentFlag.AlignCenter)
        empty_layout.addWidget(icon)
        title = QLabel(self.empty_title, self.empty)
        title.setProperty("heading", True)
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        empty_layout.addWidget(title)
        text = QLabel(self.empty_text, self.empty)
        text.setWordWrap(True)
        text.setProperty("muted", True)
        text.setAlignment(Qt.AlignmentFlag.AlignCenter)
        empty_layout.addWidget(text)
        empty_layout.addStretch(2)
        empty_layout.setContentsMargins(28, 10, 28, 10)
        self.stack.addWidget(self.empty)
        layout.addWidget(self.stack, 1)

        self.action_bar = QWidget(self)
        bar = QHBoxLayout(self.action_bar)
        bar.setContentsMargins(10, 6, 10, 10)
        bar.setSpacing(6)
        self.buttons: dict[str, QPushButton] = {}
        for action in self.card_actions:
            button = QPushButton(icons.icon(action.icon, "text", 16), action.label, self)
            shown_keys = " or ".join(action.keys[:2])
            button.setToolTip(f"{action.tip} ({shown_keys})")
            if action.danger:
                button.setProperty("danger", True)
            button.clicked.connect(lambda _=False, name=action.name: self.trigger(name))
            bar.addWidget(button)
            self.buttons[action.name] = button
            for key in action.keys:
                shortcut = QShortcut(QKeySequence(key), self)
                shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
                shortcut.activated.connect(lambda name=action.name: self.trigger(name))
        bar.addStretch(1)
        layout.addWidget(self.action_bar)

        self._reload_timer = QTimer(self)
        self._reload_timer.setSingleShot(True)
        self._reload_timer.setInterval(80)
        self._reload_timer.timeout.connect(self.reload)
        self._show_count(0)
        self._refresh_buttons()

    # -- for subclasses ----------------------------------------------------------------

    def accessible_name(self) -> str:
        return "Memories"

    def empty_icon(self) -> str:
        return "check"

    def fetch(self) -> Sequence[Memory]:
        """The memories to show (runs on a worker)."""
        raise NotImplementedError

    def count_text(self, count: int) -> str:
        return f"{count} memories"

    def note_for(self, memory: Memory) -> str | None:
        """Why this memory is listed, shown on its card (none by default)."""
        return None

    # -- loading -----------------------------------------------------------------------

    def schedule_reload(self) -> None:
        self._reload_timer.start()

    def reload(self) -> None:
        self._generation += 1
        generation = self._generation
        self.workers.run(
            self,
            self._fetch_with_titles,
            "loading memories",
            on_success=lambda result: self._loaded(generation, result),
            on_failure=self._failed,
        )

    def _fetch_with_titles(self) -> tuple[list[Memory], dict[str, str]]:
        memories = list(self.fetch())
        titles: dict[str, str] = {}
        if self.title_of is not None:
            for session in {m.session_id for m in memories if m.session_id}:
                try:
                    title = self.title_of(session)
                except Exception:  # a missing title is cosmetic; the card says "a conversation"
                    title = None
                if title:
                    titles[session] = title
        return memories, titles

    def _loaded(self, generation: int, result: Any) -> None:
        if generation != self._generation:
            return  # a newer reload is on its way
        memories, titles = result
        selected = {memory.id for memory in self.selected_memories()}
        current = self.view.currentIndex().row()
        notes = {m.id: note for m in memories if (note := self.note_for(m))}
        had_focus = self.view.hasFocus()
        self.model.set_memories(memories, titles, notes)
        self.stack.setCurrentWidget(self.view if memories else self.empty)
        self._show_count(len(memories))
        self._restore_selection(selected, current)
        self._refresh_buttons()
        if had_focus and not memories:
            # The stack gave the focus to the empty page, which shows none: the keyboard
            # was nowhere to be seen after the last card was confirmed.
            self.emptied_with_focus.emit()
        self.loaded.emit()

    def _restore_selection(self, selected: set[str], current: int) -> None:
        if not self.model.memories:
            return
        selection = self.view.selectionModel()
        rows = [row for row, m in enumerate(self.model.memories) if m.id in selected]
        flags = QItemSelectionModel.SelectionFlag.Select
        if rows:
            for row in rows:
                selection.select(self.model.index(row), flags)
            selection.setCurrentIndex(
                self.model.index(rows[0]), QItemSelectionModel.SelectionFlag.NoUpdate
            )
            return
        row = min(max(current, 0), len(self.model.memories) - 1)
        selection.setCurrentIndex(
            self.model.index(row), QItemSelectionModel.SelectionFlag.ClearAndSelect
        )

    def _show_count(self, count: int) -> None:
        self.count_label.setText(self.count_text(count))
        self.count_label.setVisible(count > 0)
        self.select_all_button.setVisible(count > 1)
        self.action_bar.setVisible(count > 0)
        self.count_changed.emit(count)

    def _failed(self, failure: Failure) -> None:
        self._busy = False
        self._refresh_buttons()
        if isinstance(failure.error, ChangedElsewhereError):
            self.reload()  # the window shows both versions; the list shows theirs now
            return
        self.failed.emit(failure.message)

    # -- selection and actions ---------------------------------------------------------

    def selected_memories(self) -> list[Memory]:
        rows = sorted(index.row() for index in self.view.selectionModel().selectedRows())
        return [m for m in (self.model.memory_at(row) for row in rows) if m is not None]

    def current_memory(self) -> Memory | None:
        selected = self.selected_memories()
        current = self.model.memory_at(self.view.currentIndex().row())
        if current is not None and current in selected:
            return current
        return selected[0] if selected else None

    def select_all(self) -> None:
        self.view.selectAll()
        self.view.setFocus(Qt.FocusReason.OtherFocusReason)

    def select_ids(self, ids: Sequence[str]) -> None:
        selection = self.view.selectionModel()
        selection.clearSelection()
        for memory_id in ids:
            row = self.model.row_of(memory_id)
            if row >= 0:
                selection.select(self.model.index(row), QItemSelectionModel.SelectionFlag.Select)
                selection.setCurrentIndex(
                    self.model.index(row), QItemSelectionModel.SelectionFlag.NoUpdate
                )

    def _refresh_buttons(self) -> None:
        count = len(self.selected_memories())
        for name, button in self.buttons.items():
            button.setEnabled(not self._busy and (count == 1 if name == "edit" else count > 0))

    def trigger(self, name: str) -> None:
        if self._busy:
            return
        if name == "edit":
            self.open_editor()
            return
        memories = self.selected_memories()
        if not memories:
            return
        self._busy = True
        self._refresh_buttons()
        # A memory changed meanwhile elsewhere is a problem to report; the others still change.
        self.memory_actions.change(
            self,
            name,
            memories,
            "changing memories",
            on_done=self._performed,
            on_failure=self._failed,
        )

    def _performed(self, _done: list[Memory], problems: list[str]) -> None:
        self._busy = False
        if problems:
            more = f" ({len(problems) - 1} more like this)" if len(problems) > 1 else ""
            self.failed.emit(problems[0] + more)
        self.view.selectionModel().clearSelection()
        self.reload()

    # -- editing -----------------------------------------------------------------------

    def open_editor(self) -> None:
        memory = self.current_memory()
        if memory is None or self._busy:
            return
        self.editor = MemoryEditor(memory, save_label=self.edit_label, parent=self)
        self.editor.accepted.connect(lambda: self._save_edit(memory))
        self.editor.open()

    def _save_edit(self, memory: Memory) -> None:
        editor = self.editor
        if editor is None:
            return
        change = editor.edit()
        self.editor = None
        editor.deleteLater()
        self._busy = True
        self._refresh_buttons()
        self.memory_actions.edit(
            self, memory, change, on_done=self._edit_saved, on_failure=self._failed
        )

    def _edit_saved(self, _new: Memory) -> None:
        self._busy = False
        self.reload()
