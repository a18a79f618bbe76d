"""The memory store: one SQLite file holding memories, their entities, text index and vectors."""

from __future__ import annotations

from pathlib import Path

from timothy import paths
from timothy.store.db import DEFAULT_BUSY_TIMEOUT_MS, Database
from timothy.store.memories import MemoryRepository
from timothy.store.records import Memory, MemorySource, MemoryStatus, MemoryType
from timothy.store.search import MemorySearch, SqliteSearch
from timothy.store.sessions import SessionRepository
from timothy.store.vectors import EmbeddingModel, VectorStore

__all__ = [
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


class Store:
    """Everything kept in the database file, opened (and migrated) once."""

    def __init__(self, path: Path | str, *, busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS) -> None:
        self.db = Database(path, busy_timeout_ms=busy_timeout_ms)
        self.memories = MemoryRepository(self.db)
        self.vectors = VectorStore(self.db)
        self.sessions = SessionRepository(self.db)
        # The recall legs' queries; holds the in-memory copy of the active model's vectors.
        self.search: MemorySearch = SqliteSearch(self.db, self.vectors)

    @classmethod
    def open(cls, data: Path | None = None, **kwargs: int) -> Store:
        """The store in a data folder (default: the configured one)."""
        folder = data if data is not None else paths.data_dir()
        return cls(paths.database_path(folder), **kwargs)

    @property
    def path(self) -> Path:
        return self.db.path

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
