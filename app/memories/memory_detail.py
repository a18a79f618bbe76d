"""The chosen memory in the browser: its whole version chain and what can be done with it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QPushButton, QVBoxLayout, QWidget

from app.jobs.workers import Failure, Workers
from app.look import icons
from app.look.flow_layout import FlowLayout
from app.memories.actions import MemoryActions
from app.memories.chain_view import ChainView
from app.memories.memory_editor import MemoryEditor
from timothy.errors import ChangedElsewhereError, NotFoundError
from timothy.store import Memory, MemoryStatus
from timothy.store.engine import StoreEngine
from timothy.store.records import utc_now


class MemoryDetail(QWidget):
    version_saved = Signal(object)  # the new version an edit made here
    chain_shown = Signal(list)  # the versions now on screen, oldest first
    failed = Signal(str)
    forget_requested = Signal(object)  # the memory on show: the browser asks, then forgets

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
        self.store = store
        self.workers = workers
        self.memory_actions = actions  # changes go through the pane's one MemoryActions
        self.now = now
        self.memory: Memory | None = None
        self.editor: MemoryEditor | None = None
        self._generation = 0
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        layout.setSpacing(6)
        self.title = QLabel("History", self)
        self.title.setProperty("heading", True)
        layout.addWidget(self.title)
        self.chain_view = ChainView(self)
        layout.addWidget(self.chain_view, 1)
        bar = FlowLayout(spacing=6)  # wraps in a narrow pane rather than cut the labels
        self.buttons: dict[str, QPushButton] = {}
        for name, label, icon in (
            ("confirm", "Confirm", "check"),
            ("reconfirm", "Still true", "check"),
            ("edit", "Edit…", "edit"),
            ("archive", "Archive", "archive"),
            ("reject", "Reject", "close"),
            ("restore", "Restore", "undo"),
            ("forget", "Forget for good…", "trash"),
        ):
            button = QPushButton(icons.icon(icon, "text", 16), label, self)
            button.clicked.connect(lambda _=False, action=name: self.trigger(action))
            if name in ("reject", "archive", "forget"):
                button.setProperty("danger", True)
            bar.addWidget(button)
            self.buttons[name] = button
        layout.addLayout(bar)
        self.show_memory(None)

    def show_memory(self, memory: Memory | None) -> None:
        self.memory = memory
        self._generation += 1
        self._refresh_buttons()
        if memory is None:
            self.title.setText("History")
            self.chain_view.clear_chain("Choose a memory to see every version of it.")
            return
        generation = self._generation
        self.workers.run(
            self,
            lambda: self.store.memories.chain(memory.id),
            "loading the memory's history",
            on_success=lambda chain: self._chain_loaded(generation, chain),
            on_failure=lambda failure: self._chain_failed(generation, failure),
        )

    def _chain_failed(self, generation: int, failure: Failure) -> None:
        if generation != self._generation:
            return
        if isinstance(failure.error, NotFoundError):
            # Forgotten for good meanwhile (several versions go one event at a time): there
            # is nothing to show and nothing went wrong.
            self.show_memory(None)
            return
        self._failed(failure)

    def _chain_loaded(self, generation: int, chain: list[Memory]) -> None:
        if generation != self._generation or self.memory is None:
            return
        # The browser's copy may be stale (changed elsewhere): the chain has the truth.
        fresh = next((m for m in chain if m.id == self.memory.id), self.memory)
        self.memory = fresh
        versions = len(chain)
        self.title.setText(
            "History · 1 version" if versions == 1 else f"History · {versions} versions"
        )
        self.chain_view.show_chain(chain, fresh.id)
        self._refresh_buttons()
        self.chain_shown.emit(chain)

    def _refresh_buttons(self) -> None:
        status = self.memory.status if self.memory else None
        allowed = (
            {
                MemoryStatus.STAGED: {"confirm", "edit", "reject", "forget"},
                MemoryStatus.ACTIVE: {"reconfirm", "edit", "archive", "forget"},
                MemoryStatus.REJECTED: {"restore", "forget"},
                MemoryStatus.ARCHIVED: {"restore", "forget"},
                MemoryStatus.SUPERSEDED: {"forget"},
            }.get(status, set())
            if status
            else set()
        )
        for name, button in self.buttons.items():
            button.setVisible(name in allowed)

    def trigger(self, name: str) -> None:
        memory = self.memory
        if memory is None:
            return
        if name == "edit":
            self.open_editor(memory)
            return
        if name == "forget":
            self.forget_requested.emit(memory)
            return
        for button in self.buttons.values():
            button.setEnabled(False)

        def done(changed: list[Memory], _problems: list[str]) -> None:
            self._enable()
            self.show_memory(changed[0])

        # One memory: if the store refuses it (changed meanwhile elsewhere), that is the failure.
        self.memory_actions.change(
            self,
            name,
            [memory],
            "changing the memory",
            on_done=done,
            on_failure=self._failed,
            tolerant=False,
        )

    def open_editor(self, memory: Memory) -> MemoryEditor:
        """Edit `memory` (the browser's E key too); saving supersedes it."""
        self.editor = MemoryEditor(
            memory,
            save_label="Save and confirm"
            if memory.status is MemoryStatus.STAGED
            else "Save new version",
            parent=self,
        )
        self.editor.accepted.connect(lambda: self._save_edit(memory))
        self.editor.open()
        return self.editor

    def wanted_height(self) -> int:
        """The height that shows every version of the chain without scrolling."""
        chain = self.chain_view
        document = chain.document().clone(chain)
        document.setTextWidth(chain.viewport().width() or chain.width())
        needed = int(document.size().height()) + 2 * chain.frameWidth() + 4
        document.deleteLater()
        return self.height() - chain.height() + needed

    def _save_edit(self, memory: Memory) -> None:
        editor = self.editor
        if editor is None:
            return
        change = editor.edit()
        self.editor = None
        editor.deleteLater()

        def done(new: Memory) -> None:
            self._enable()
            self.version_saved.emit(new)
            self.show_memory(new)

        self.memory_actions.edit(self, memory, change, on_done=done, on_failure=self._failed)

    def _enable(self) -> None:
        for button in self.buttons.values():
            button.setEnabled(True)

    def _failed(self, failure: Failure) -> None:
        self._enable()
        if isinstance(failure.error, ChangedElsewhereError):
            return  # the window shows both versions (MemoryActions.edit_conflicted)
        self.failed.emit(failure.message)

    def focus_actions(self) -> None:
        for button in self.buttons.values():
            if button.isVisible():
                button.setFocus(Qt.FocusReason.OtherFocusReason)
                return
