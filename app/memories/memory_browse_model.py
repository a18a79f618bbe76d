"""Every memory matching a search and filters, fetched a page at a time on a worker.

The view asks for more as it scrolls (`canFetchMore` / `fetchMore`), so a store of 10k
memories costs one page up front. Each new query bumps a generation number: pages that
arrive for an older query are dropped.

Every listed row keeps its memory's id, but only the memories around the rows last shown
(and the ones pinned: the selection) are held: scrolling through a large store once no
longer keeps all of it for good. A row whose memory was let go is read again by id on a
worker when it is shown (or when the selection reaches it); it paints empty meanwhile.
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
from timothy.text import symbols, words

Index = QModelIndex | QPersistentModelIndex
PAGE_SIZE = 200
# At most this many rows' memories are held besides the pinned ones (about 0.6 KB each):
# those around the row last shown, half on either side.
HELD_ROWS = 1_000


@dataclass(frozen=True, slots=True)
class BrowseQuery:
    text: str = ""
    type: MemoryType | None = None
    status: MemoryStatus | None = None

    def matches(self, memory: Memory) -> bool:
        """Whether a memory that just changed belongs in this list (text: every word and
        every symbol, as the store searches)."""
        if self.type is not None and memory.type is not self.type:
            return False
        if self.status is not None and memory.status is not self.status:
            return False
        if self.text.strip():
            if not all(mark in memory.content for mark in symbols(self.text)):
                return False
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
        self._ids: list[str] = []  # every listed row's memory, in row order
        self._held: dict[str, Memory] = {}  # the memories held now, by id
        self._pinned: set[str] = set()  # never let go (the selection)
        self._reading: set[str] = set()  # let go and being read again
        self._shown_row = 0  # the middle of the rows the view shows (`show`)
        self._shown = (0, 0)  # the first and last rows the view shows
        self._rows: dict[str, int] = {}
        self._generation = 0
        self._loading = False
        self._exhausted = True

    # -- Qt model ----------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's API)
        return 0 if parent.isValid() else len(self._ids)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self._ids):
            return None
        row = index.row()
        memory = self._held.get(self._ids[row])
        if memory is None:
            self._read_again(range(row - PAGE_SIZE // 2, row + PAGE_SIZE // 2))
            return None
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
    def memories(self) -> list[Memory]:
        """The memories held now, in row order (rows whose memory was let go are left out)."""
        held = self._held
        return [held[i] for i in self._ids if i in held]

    @property
    def held(self) -> int:
        """How many rows' memories are held now."""
        return len(self._held)

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
        self._ids = []
        self._held = {}
        self._reading = set()
        self._shown_row = 0
        self._shown = (0, 0)
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
        offset = len(self._ids)

        def work() -> list[Memory]:
            return self.store.memories.list(
                status=query.status,
                type=query.type,
                text=query.text or None,
                limit=PAGE_SIZE,
                offset=offset,
                keep=False,  # held here (a window of them): recall's cache is not for this
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
            first = len(self._ids)
            self.beginInsertRows(QModelIndex(), first, first + len(fresh) - 1)
            for memory in fresh:
                self._rows[memory.id] = len(self._ids)
                self._ids.append(memory.id)
                self._held[memory.id] = memory
            self.endInsertRows()
            self._let_go()
        if len(page) < PAGE_SIZE:
            self._exhausted = True
        self.page_loaded.emit()

    # -- holding a window of memories ----------------------------------------------------

    def show(self, first: int, last: int) -> None:
        """The view shows rows `first` to `last`: hold the memories around them, reading
        again (a page's worth on either side, ahead of the scrolling) those let go."""
        self._shown_row = (first + last) // 2
        self._shown = (first, last)
        # Whole pages, so that the reads (and the repaint each brings) come a page at a time.
        start = max(first - PAGE_SIZE // 2, 0) // PAGE_SIZE * PAGE_SIZE
        end = (last + PAGE_SIZE // 2) // PAGE_SIZE * PAGE_SIZE + PAGE_SIZE
        if self.missing(range(first - PAGE_SIZE // 2, last + PAGE_SIZE // 2 + 1)):
            self._read_again(range(start, end))

    def pin(self, memory_ids: Iterable[str]) -> None:
        """Hold these rows' memories whatever is shown (the selection: its actions need
        them), reading again any that were let go."""
        self._pinned = set(memory_ids)
        rows = self._rows
        self._read_again(rows[i] for i in self._pinned if i in rows)

    def missing(self, rows: Iterable[int]) -> list[int]:
        """Of `rows`, those whose memory is not held now (let go, or being read again)."""
        ids, held = self._ids, self._held
        return [r for r in rows if 0 <= r < len(ids) and ids[r] not in held]

    def _let_go(self) -> None:
        """Once more than `HELD_ROWS` are held, let go of those far from the row last shown
        (never a pinned one)."""
        if len(self._held) - len(self._pinned) <= HELD_ROWS:
            return
        ids = self._ids
        first = max(self._shown_row - HELD_ROWS // 2, 0)
        near = set(ids[first : first + HELD_ROWS])
        near |= self._pinned
        self._held = {i: m for i, m in self._held.items() if i in near}

    def _read_again(self, rows: Iterable[int]) -> None:
        """Read the memories of `rows` that were let go (by id, on a worker)."""
        ids, held, reading = self._ids, self._held, self._reading
        wanted = [ids[r] for r in rows if 0 <= r < len(ids) and ids[r] not in held]
        wanted = [i for i in wanted if i not in reading]
        if not wanted:
            return
        reading.update(wanted)
        generation = self._generation
        memories = self.store.memories
        self.workers.run(
            self,
            lambda: memories.get_many(wanted, keep=False),
            "loading memories",
            on_success=lambda found: self._read_arrived(generation, wanted, found),
            on_failure=lambda failure: self._read_failed(generation, wanted, failure),
        )

    def _read_arrived(self, generation: int, wanted: list[str], found: dict[str, Memory]) -> None:
        if generation != self._generation:
            return
        self._reading.difference_update(wanted)
        rows: list[int] = []
        for memory_id in wanted:
            row = self._rows.get(memory_id)
            memory = found.get(memory_id)
            # A change heard meanwhile (`update_rows`) is newer than this read: it stays.
            if row is None or memory is None or memory_id in self._held:
                continue
            if not self.query.matches(memory):
                continue  # changed meanwhile; its own event updates or removes the row
            self._held[memory_id] = memory
            rows.append(row)
        # Only the rows on show are repainted (a range of rows repaints the whole list).
        first, last = self._shown
        shown = [row for row in rows if first <= row <= last]
        if shown:
            self.dataChanged.emit(self.index(min(shown)), self.index(max(shown)))
        if rows:
            self.page_loaded.emit()
        self._let_go()

    def _read_failed(self, generation: int, wanted: list[str], failure: Failure) -> None:
        if generation != self._generation:
            return
        self._reading.difference_update(wanted)
        self.load_failed.emit(failure.message)

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
            self._ids.insert(0, memory.id)
            self._held[memory.id] = memory
            self._reindex()
            self.endInsertRows()

    def update_rows(self, memories: Iterable[Memory]) -> None:
        for memory in memories:
            row = self._rows.get(memory.id)
            if row is None:
                continue
            if not self.query.matches(memory):
                self._remove_row(row)
                continue
            self._held[memory.id] = memory
            self.dataChanged.emit(self.index(row), self.index(row))

    def remove(self, memory_id: str) -> None:
        """Drop a memory that is gone from the store (forgotten for good)."""
        row = self._rows.get(memory_id)
        if row is None:
            return
        self._remove_row(row)

    def _remove_row(self, row: int) -> None:
        self.beginRemoveRows(QModelIndex(), row, row)
        memory_id = self._ids.pop(row)
        self._held.pop(memory_id, None)
        self._reindex()
        self.endRemoveRows()

    def _reindex(self) -> None:
        self._rows = {memory_id: position for position, memory_id in enumerate(self._ids)}

    def row_of(self, memory_id: str) -> int:
        return self._rows.get(memory_id, -1)

    def id_at(self, row: int) -> str | None:
        return self._ids[row] if 0 <= row < len(self._ids) else None

    def memory_at(self, row: int) -> Memory | None:
        """The row's memory, or None when there is no such row or it is not held now."""
        return self._held.get(self._ids[row]) if 0 <= row < len(self._ids) else None
