"""Every memory matching a search and filters, fetched a page at a time on a worker.

The view asks for more as it scrolls (`canFetchMore` / `fetchMore`), so a store of 10k
memories costs one page up front. Each new query bumps a generation number: pages that
arrive for an older query are dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt, Signal

from app.jobs.workers import Failure, Workers
from app.memories.memory_list_model import MEMORY_ROLE
from timothy.store import Memory, MemoryStatus, MemoryType
from timothy.store.engine import StoreEngine
from timothy.text import words

Index = QModelIndex | QPersistentModelIndex
PAGE_SIZE = 200


@dataclass(frozen=True, slots=True)
class BrowseQuery:
    text: str = ""
    type: MemoryType | None = None
    status: MemoryStatus | None = None

    def matches(self, memory: Memory) -> bool:
        """Whether a memory that just changed belongs in this list (text: every word)."""
        if self.type is not None and memory.type is not self.type:
            return False
        if self.status is not None and memory.status is not self.status:
            return False
        if self.text.strip():
            have = set(words(memory.content))
            wanted = words(self.text)
            # The store matches the last word as a prefix (search as you type).
            for position, word in enumerate(wanted):
                last = position == len(wanted) - 1
                if not (word in have or (last and any(h.startswith(word) for h in have))):
                    return False
        return True


class MemoryBrowseModel(QAbstractListModel):
    page_loaded = Signal()
    load_failed = Signal(str)
    # (how many match, how many of those are active) for queries the store can count
    # (no text); the second is None when the query names a status.
    total_known = Signal(int, object)

    def __init__(self, store: StoreEngine, workers: Workers) -> None:
        super().__init__()
        self.store = store
        self.workers = workers
        self.query = BrowseQuery()
        self.memories: list[Memory] = []
        self._rows: dict[str, int] = {}
        self._generation = 0
        self._loading = False
        self._exhausted = True

    # -- Qt model ----------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's API)
        return 0 if parent.isValid() else len(self.memories)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.memories):
            return None
        memory = self.memories[index.row()]
        if role == MEMORY_ROLE:
            return memory
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.AccessibleTextRole):
            return memory.content
        return None

    def canFetchMore(self, parent: Index = QModelIndex()) -> bool:  # noqa: B008
        return not parent.isValid() and not self._exhausted and not self._loading

    def fetchMore(self, parent: Index = QModelIndex()) -> None:  # noqa: B008
        if self.canFetchMore(parent):
            self._load_page()

    # -- queries -----------------------------------------------------------------------

    @property
    def exhausted(self) -> bool:
        return self._exhausted

    @property
    def loading(self) -> bool:
        return self._loading

    def set_query(self, query: BrowseQuery) -> None:
        self.query = query
        self.refresh()

    def refresh(self) -> None:
        """Start over from the first page (and recount)."""
        self._generation += 1
        self.beginResetModel()
        self.memories = []
        self._rows = {}
        self._exhausted = False
        self._loading = False
        self.endResetModel()
        self._load_page()
        self._count()

    def _load_page(self) -> None:
        self._loading = True
        generation = self._generation
        query = self.query
        offset = len(self.memories)

        def work() -> list[Memory]:
            return self.store.memories.list(
                status=query.status,
                type=query.type,
                text=query.text or None,
                limit=PAGE_SIZE,
                offset=offset,
            )

        self.workers.run(
            self,
            work,
            "loading memories",
            on_success=lambda page: self._page_arrived(generation, page),
            on_failure=lambda failure: self._page_failed(generation, failure),
        )

    def _page_arrived(self, generation: int, page: list[Memory]) -> None:
        if generation != self._generation:
            return
        self._loading = False
        fresh = [memory for memory in page if memory.id not in self._rows]
        if fresh:
            first = len(self.memories)
            self.beginInsertRows(QModelIndex(), first, first + len(fresh) - 1)
            for memory in fresh:
                self._rows[memory.id] = len(self.memories)
                self.memories.append(memory)
            self.endInsertRows()
        if len(page) < PAGE_SIZE:
            self._exhausted = True
        self.page_loaded.emit()

    def _page_failed(self, generation: int, failure: Failure) -> None:
        if generation != self._generation:
            return
        self._loading = False
        self._exhausted = True
        self.load_failed.emit(failure.message)

    def recount(self) -> None:
        self._count()

    def _count(self) -> None:
        if self.query.text.strip():
            return  # a text search is counted as its pages arrive
        generation = self._generation
        query = self.query
        memories = self.store.memories

        def work() -> tuple[int, int | None]:
            total = memories.count(status=query.status, type=query.type)
            if query.status is not None:
                return total, None
            return total, memories.count(status=MemoryStatus.ACTIVE, type=query.type)

        self.workers.run(
            self,
            work,
            "counting memories",
            on_success=lambda counts: self._counted(generation, counts),
        )

    def _counted(self, generation: int, counts: tuple[int, int | None]) -> None:
        if generation == self._generation:
            self.total_known.emit(*counts)

    # -- changes from elsewhere --------------------------------------------------------

    def memory_changed(self, memory: Memory) -> None:
        """Show a change made anywhere: update the row (or drop it when it no longer matches
        the filters, so the list and its count agree), or add a new memory at the top."""
        if memory.id in self._rows:
            self.update_rows([memory])
            return
        if self.query.matches(memory):
            self.beginInsertRows(QModelIndex(), 0, 0)
            self.memories.insert(0, memory)
            self._reindex()
            self.endInsertRows()

    def update_rows(self, memories: Iterable[Memory]) -> None:
        for memory in memories:
            row = self._rows.get(memory.id)
            if row is None:
                continue
            if not self.query.matches(memory):
                self.beginRemoveRows(QModelIndex(), row, row)
                del self.memories[row]
                self._reindex()
                self.endRemoveRows()
                continue
            self.memories[row] = memory
            self.dataChanged.emit(self.index(row), self.index(row))

    def remove(self, memory_id: str) -> None:
        """Drop a memory that is gone from the store (forgotten for good)."""
        row = self._rows.get(memory_id)
        if row is None:
            return
        self.beginRemoveRows(QModelIndex(), row, row)
        del self.memories[row]
        self._reindex()
        self.endRemoveRows()

    def _reindex(self) -> None:
        self._rows = {m.id: position for position, m in enumerate(self.memories)}

    def row_of(self, memory_id: str) -> int:
        return self._rows.get(memory_id, -1)

    def memory_at(self, row: int) -> Memory | None:
        return self.memories[row] if 0 <= row < len(self.memories) else None
