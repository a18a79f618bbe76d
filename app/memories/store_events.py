"""The store's change listeners, turned into a Qt signal delivered on the GUI thread.

Any write (a pane's confirm, the chat engine's extraction thread, a `remember` call) tells
every pane through this one signal, so the panes never poll and never miss a change.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from timothy.store import Memory
from timothy.store.engine import StoreEngine


class StoreEvents(QObject):
    # (what happened: "staged", "added", "promoted", "reconfirmed", "rejected", "archived",
    #  "restored", "superseded", "decayed"; the memory as it is now; or "forgotten" with the
    #  record as it was before it was removed). Queued to the GUI thread by Qt.
    memory_changed = Signal(str, object)

    def __init__(self, store: StoreEngine, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.store = store
        store.memories.listeners.append(self._heard)

    def _heard(self, event: str, memory: Memory) -> None:
        self.memory_changed.emit(event, memory)

    def detach(self) -> None:
        if self._heard in self.store.memories.listeners:
            self.store.memories.listeners.remove(self._heard)
