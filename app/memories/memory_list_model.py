"""A small, fully loaded list of memories (the confirmation queue, the fading facts)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt

from timothy.store import Memory

MEMORY_ROLE = Qt.ItemDataRole.UserRole + 1
SOURCE_TITLE_ROLE = Qt.ItemDataRole.UserRole + 2  # the title of the conversation it came from
NOTE_ROLE = Qt.ItemDataRole.UserRole + 3  # why the memory is listed here, or None

Index = QModelIndex | QPersistentModelIndex


class MemoryListModel(QAbstractListModel):
    def __init__(self) -> None:
        super().__init__()
        self.memories: list[Memory] = []
        self.titles: dict[str, str] = {}
        self.notes: dict[str, str] = {}

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's API)
        return 0 if parent.isValid() else len(self.memories)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.memories):
            return None
        memory = self.memories[index.row()]
        if role == MEMORY_ROLE:
            return memory
        if role == SOURCE_TITLE_ROLE:
            return self.titles.get(memory.session_id or "")
        if role == NOTE_ROLE:
            return self.notes.get(memory.id)
        if role == Qt.ItemDataRole.DisplayRole:
            return memory.content
        if role == Qt.ItemDataRole.AccessibleTextRole:
            note = self.notes.get(memory.id)
            return f"{memory.content} ({note})" if note else memory.content
        if role == Qt.ItemDataRole.ToolTipRole:
            return f"{memory.type.value} · confidence {memory.confidence:.0%}"
        return None

    def set_memories(
        self,
        memories: Sequence[Memory],
        titles: dict[str, str],
        notes: dict[str, str] | None = None,
    ) -> None:
        self.beginResetModel()
        self.memories = list(memories)
        self.titles = dict(titles)
        self.notes = dict(notes or {})
        self.endResetModel()

    def memory_at(self, row: int) -> Memory | None:
        return self.memories[row] if 0 <= row < len(self.memories) else None

    def row_of(self, memory_id: str) -> int:
        for row, memory in enumerate(self.memories):
            if memory.id == memory_id:
                return row
        return -1
