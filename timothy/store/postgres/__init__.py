"""The shared store: one PostgreSQL database with pgvector, that several machines use at once.

The same interface as the SQLite file (`timothy.store.engine.StoreEngine`): memories with
their lifecycle and chains, entities, the three recall legs, vectors per embedding model,
conversations, meta. The server is the one store and each app a client of it.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path

from timothy import paths
from timothy.store.engine import heard_from_another_machine
from timothy.store.postgres.changes import Announcement, ChangeFollower
from timothy.store.postgres.database import PgDatabase
from timothy.store.postgres.memories import PgMemoryRepository
from timothy.store.postgres.outbox import Outbox, outbox_path
from timothy.store.postgres.search import PgSearch
from timothy.store.postgres.sessions import PgSessionRepository
from timothy.store.postgres.vectors import PgVectorStore

__all__ = ["PostgresStore"]


class PostgresStore:
    """Everything Timothy keeps, on a PostgreSQL server (migrated on open)."""

    def __init__(
        self,
        conninfo: str,
        *,
        connect_timeout: int = 5,
        follow_changes: bool = True,
        outbox_dir: Path | None = None,
    ) -> None:
        """Open (and migrate) the store on a server. New memories made while the server does
        not answer wait in `outbox_dir` (default: the data folder) until it does."""
        self.db = PgDatabase(conninfo, connect_timeout=connect_timeout)
        folder = outbox_dir if outbox_dir is not None else paths.data_dir()
        self.outbox = Outbox(outbox_path(folder, self.db.location))
        self.memories = PgMemoryRepository(self.db, self.outbox)
        self.vectors = PgVectorStore(self.db)
        self.sessions = PgSessionRepository(self.db)
        self.search = PgSearch(self.db, self.vectors)
        # Other machines' changes reach this machine's listeners (the app's panes).
        self.changes: ChangeFollower | None = None
        if follow_changes:
            self.changes = ChangeFollower(
                self.db.conninfo,
                self.db.schema(),
                self.db.own_backends,
                self._announced,
                on_connected=self.memories.hand_over_pending,
            ).start()
        else:
            self.memories.hand_over_pending()

    def _announced(self, batch: list[Announcement]) -> None:
        if not self.memories.listeners:
            return
        found = self.memories.get_many(memory_id for _, memory_id, _ in batch)
        with heard_from_another_machine():
            for event, memory_id, record in batch:
                memory = record if record is not None else found.get(memory_id)
                if memory is not None:
                    self.memories.announce(event, memory)

    @property
    def location(self) -> str:
        """The server and database, never the password."""
        return self.db.location

    @property
    def damaged(self) -> bool:
        """A server store is never a damaged file; the server looks after its own pages."""
        return False

    def on_damage(self, listener: Callable[[str], None]) -> None:
        """Nothing to tell: see `damaged`."""

    def exclusive(self, name: str) -> AbstractContextManager[bool]:
        """A lock across every machine using this server (see PgDatabase.exclusive)."""
        return self.db.exclusive(name)

    def backup_before_merge(self, now: datetime) -> None:
        """Nothing here: a server's backups are its admin's (pg_dump, base backups); a merge
        keeps every member as a superseded version either way."""

    def close(self) -> None:
        if self.changes is not None:
            self.changes.stop()
        self.db.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
