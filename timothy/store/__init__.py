"""The memory store: one SQLite file holding memories, their entities, text index and vectors.

`Store` is the embedded engine; `timothy.store.postgres.PostgresStore` the shared one. Both
implement `timothy.store.engine.StoreEngine`, which is what the layers above depend on;
`timothy.store.location.open_store` opens whichever a location names.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

from timothy import paths
from timothy.store import backups
from timothy.store.db import DEFAULT_BUSY_TIMEOUT_MS, DamageCheck, Database
from timothy.store.memories import MemoryRepository
from timothy.store.records import Memory, MemorySource, MemoryStatus, MemoryType, utc_now
from timothy.store.search import MemorySearch, SqliteSearch
from timothy.store.sessions import SessionRepository
from timothy.store.vectors import EmbeddingModel, VectorStore

__all__ = [
    "DamageCheck",
    "Database",
    "EmbeddingModel",
    "Memory",
    "MemoryRepository",
    "MemorySearch",
    "MemorySource",
    "MemoryStatus",
    "MemoryType",
    "SessionRepository",
    "Store",
    "VectorStore",
]


def _backup_before_migration(db: Database, version: int, target: int) -> None:
    backups.backup_before_migration(db, version, target, now=utc_now())


class Store:
    """Everything kept in the database file, opened (and migrated) once.

    `check` says when the open-time damage check runs (DamageCheck): on a thread by default,
    the first write waiting for it. A store found damaged stays open for reading only
    (`damaged`); its writes raise DamagedStoreError.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        check: DamageCheck | str = DamageCheck.BACKGROUND,
    ) -> None:
        self.db = Database(
            path,
            busy_timeout_ms=busy_timeout_ms,
            check=check,
            before_migration=_backup_before_migration,
        )
        self.memories = MemoryRepository(self.db)
        self.vectors = VectorStore(self.db)
        self.sessions = SessionRepository(self.db)
        # The recall legs' queries; holds the in-memory copy of the active model's vectors.
        self.search: MemorySearch = SqliteSearch(self.db, self.vectors)

    @classmethod
    def open(
        cls,
        data: Path | None = None,
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        check: DamageCheck | str = DamageCheck.BACKGROUND,
    ) -> Store:
        """The store in a data folder (default: the configured one)."""
        folder = data if data is not None else paths.data_dir()
        return cls(paths.database_path(folder), busy_timeout_ms=busy_timeout_ms, check=check)

    @property
    def path(self) -> Path:
        return self.db.path

    @property
    def data_dir(self) -> Path:
        return self.db.path.parent

    @property
    def location(self) -> str:
        """Where the store is, for the owner: the file's path."""
        return str(self.db.path)

    @property
    def damaged(self) -> bool:
        """The file is known to be damaged: it is read, never written (see `damage`)."""
        return self.db.damaged

    @property
    def damage(self) -> str | None:
        """What SQLite found wrong with the file, or None while nothing is known."""
        return self.db.damage

    @property
    def reachable(self) -> bool:
        """A file on this machine always answers."""
        return True

    @property
    def refused(self) -> str | None:
        """A file turns no one away."""
        return None

    def on_reachability(self, listener: Callable[[bool], None]) -> None:
        """Nothing to tell: see `reachable`."""

    def retry_now(self) -> None:
        """Nothing to try again: see `reachable`."""

    @property
    def kept_here(self) -> int:
        """Nothing waits for a server: a file takes every change as it is made."""
        return 0

    def on_damage(self, listener: Callable[[str], None]) -> None:
        """Call `listener` (on any thread) once damage is found, or at once if it is known."""
        self.db.on_damage(listener)

    def wait_for_check(self, timeout: float | None = None) -> str | None:
        """Wait for the open-time damage check; what it found, or None."""
        return self.db.wait_for_check(timeout)

    @contextlib.contextmanager
    def exclusive(self, name: str) -> Iterator[bool]:
        """Always this machine's: one file is one machine's store (the shared engine's
        version takes a lock across machines)."""
        yield True

    def backup_before_merge(self, now: datetime) -> None:
        """A verified backup of the file before consolidation merges memories (then rotation)."""
        backups.backup_before_merge(self, now)

    def reopened(self) -> None:
        """The file was swapped under the open store (a restore): what the store keeps in
        memory of the old file (the vector legs' copies) is dropped and read again."""
        if isinstance(self.search, SqliteSearch):
            self.search.drop_copies()

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
