"""A database that lives in memory only, for temporary conversations.

A temporary chat is never written to the memory file: not its rows, not its log, not a freed
page that still holds its words. It runs on the same schema and the same `SessionRepository`
as every conversation, over one in-memory SQLite connection that is gone when it is closed.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import apsw

from timothy.store.db import DamageCheck, Database
from timothy.store.sessions import SessionRepository


class ScratchDatabase(Database):
    """One in-memory connection shared by every thread, a transaction at a time."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._conn: apsw.Connection | None = None
        super().__init__(":memory:", check=DamageCheck.OFF)

    def _open(self, check: DamageCheck, before_migration: object) -> None:
        self._checked.set()
        with self._lock:
            self._migrate(self.connection())

    def connect(self) -> apsw.Connection:
        conn = apsw.Connection(":memory:")
        conn.execute("PRAGMA foreign_keys = ON")
        with self._connections_lock:
            self._connections.append(conn)
        return conn

    def connection(self) -> apsw.Connection:
        with self._lock:
            if self._conn is None:
                self._conn = self.connect()
            return self._conn

    @contextlib.contextmanager
    def write(self) -> Iterator[apsw.Connection]:
        with self._lock, super().write() as conn:
            yield conn

    @contextlib.contextmanager
    def read(self) -> Iterator[apsw.Connection]:
        with self._lock, super().read() as conn:
            yield conn

    def close(self) -> None:
        with self._lock:
            super().close()
            self._conn = None


def scratch_sessions() -> SessionRepository:
    """Conversations kept in memory only (temporary chats)."""
    return SessionRepository(ScratchDatabase())
