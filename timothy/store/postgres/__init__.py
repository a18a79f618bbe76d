"""The shared store: one PostgreSQL database with pgvector, that several machines use at once.

The same interface as the SQLite file (`timothy.store.engine.StoreEngine`): memories with
their lifecycle and chains, entities, the three recall legs, vectors per embedding model,
conversations, meta. The server is the one store and each app a client of it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path

from timothy import paths
from timothy.errors import StoreError, StoreUnreachableError
from timothy.store.engine import heard_from_another_machine
from timothy.store.postgres.changes import (
    Announcement,
    ChangeFollower,
    refusal_in,
    refused_pause,
)
from timothy.store.postgres.database import PgDatabase
from timothy.store.postgres.link import ReachabilityListener, ServerLink
from timothy.store.postgres.memories import PgMemoryRepository
from timothy.store.postgres.offline import ConversationMirror, MirroredSessions, mirror_path
from timothy.store.postgres.outbox import Outbox, outbox_path
from timothy.store.postgres.search import PgSearch
from timothy.store.postgres.sessions import PgSessionRepository
from timothy.store.postgres.unsure import UnsureChanges, unsure_path
from timothy.store.postgres.vectors import PgVectorStore

__all__ = ["PostgresStore"]

log = logging.getLogger(__name__)

RETRY_SECONDS = 2.0  # how often a connected feed checks a server found away by a call


class PostgresStore:
    """Everything Timothy keeps, on a PostgreSQL server (migrated on open)."""

    def __init__(
        self,
        conninfo: str,
        *,
        connect_timeout: int = 5,
        follow_changes: bool = True,
        outbox_dir: Path | None = None,
        start_offline: bool = False,
        conninfo_source: Callable[[], str] | None = None,
    ) -> None:
        """Open (and migrate) the store on a server. New memories made while the server does
        not answer wait in `outbox_dir` (default: the data folder) until it does, and the
        conversations are mirrored there (see offline.py).

        With `start_offline` (the app's), a store that follows changes opens even when the
        server does not answer:
        conversations come from the mirror, memories wait in the outbox, and the change
        feed keeps trying; when it reaches the server, the store migrates it if need be,
        hands everything over and refreshes the mirror (`reachable` turns True).

        `conninfo_source` gives the address afresh (the keyring's password read again): a
        server that refused the login is tried with it, so a password stored meanwhile is
        used without a restart."""
        self._conninfo_source = conninfo_source
        self.link = ServerLink(latching=follow_changes)
        self.db = PgDatabase(
            conninfo,
            connect_timeout=connect_timeout,
            link=self.link,
            start_offline=start_offline and follow_changes,
        )
        folder = outbox_dir if outbox_dir is not None else paths.data_dir()
        self.data_dir = folder
        self.outbox = Outbox(outbox_path(folder, self.db.location))
        self.sessions = MirroredSessions(
            PgSessionRepository(self.db),
            self.db,
            ConversationMirror(mirror_path(folder, self.db.location)),
        )
        self.memories = PgMemoryRepository(
            self.db,
            self.outbox,
            local_copies=self.sessions.catch_up_forgets,
            unsure=UnsureChanges(unsure_path(folder, self.db.location)),
        )
        self.vectors = PgVectorStore(self.db)
        self.search = PgSearch(self.db, self.vectors)
        self._last_retry = 0.0
        self._refused_retries = 0  # refused tries in a row by `_retry_if_away`
        # What the last hand-over left here (refused by the server): see `kept_here`.
        self._kept_here = 0
        # Other machines' changes reach this machine's listeners (the app's panes).
        self.changes: ChangeFollower | None = None
        if follow_changes:
            self.changes = ChangeFollower(
                self._feed_conninfo,
                self.db.schema() if self.db.ready else None,
                self.db.own_backends,
                self._announced,
                on_connected=self._reconnected,
                on_idle=self._retry_if_away,
            ).start()
        else:
            self.memories.hand_over_pending()
            self.sessions.hand_over_pending()
            self._count_kept()

    def _reconnected(self) -> None:
        """The change feed reached the server: calls go through again, everything kept here
        goes to it, the changes whose outcome was not learned are asked about, the mirror
        catches up, and then the listeners hear it is back."""
        self.db.reconnected()
        steps = (
            self.memories.hand_over_pending,
            self.sessions.hand_over_pending,
            self.memories.settle_unsure,
        )
        for step in steps:
            try:
                step()
            except StoreUnreachableError:
                raise
            except Exception:  # refused by the server: it stays here, nothing is dropped
                log.exception("what was kept on this machine could not be settled")
        self._count_kept()
        try:
            self.sessions.refresh()
            self.sessions.catch_up_forgets()  # a forget made while this machine was away
        except StoreUnreachableError:
            raise
        except Exception as exc:  # the mirror catches up on the next reconnection
            log.warning("the conversation mirror was not refreshed: %s", exc)
        if not self.link.reachable:  # lost again while handing over: not connected yet
            raise StoreUnreachableError(
                f"The memory server {self.location} did not answer the hand-over; retrying."
            )
        self.link.regained()

    def _retry_if_away(self) -> None:
        """A call found the server away while the feed stayed up (a pool that timed out):
        try again now and then (a refused login less and less often, as the feed does).
        Reachable: ask about changes noted of unknown outcome after the server was found
        again (their own question was still unanswered then), now and then as well."""
        if self.link.reachable:
            if self.memories.unsure_waiting.is_set() and self._retry_due(RETRY_SECONDS):
                try:
                    self.memories.settle_unsure()
                except StoreError as exc:
                    log.info("changes of unknown outcome wait for the server: %s", exc)
            return
        every = RETRY_SECONDS
        if self._refused_retries:
            every = refused_pause(self._refused_retries)
        if not self._retry_due(every):
            return
        try:
            self._reconnected()
            self._refused_retries = 0
        except StoreError as exc:
            if refusal_in(exc) is not None or self.link.refusal is not None:
                self._refused_retries += 1
            log.info("the memory server is still out of reach: %s", exc)

    def _retry_due(self, every: float) -> bool:
        """Whether `every` seconds have passed since the last try (then this is one)."""
        if time.monotonic() - self._last_retry < every:
            return False
        self._last_retry = time.monotonic()
        return True

    def _feed_conninfo(self, renew: bool) -> str:
        """The address the change feed tries (`renew`: read afresh; see `retry_now`)."""
        if renew and self._conninfo_source is not None:
            try:
                self.db.renew_conninfo(self._conninfo_source())
            except Exception as exc:  # a keyring that cannot be read leaves the last address
                log.warning("the memory server's address could not be read again: %s", exc)
        return self.db.conninfo

    def retry_now(self) -> None:
        """Try the server at once, with the password read again (the owner changed the
        settings or asked to): a refused login is otherwise tried less and less often."""
        if self.link.reachable:
            return
        self._refused_retries = 0
        self._last_retry = 0.0
        if self.changes is not None:
            self.changes.retry_now()

    @property
    def reachable(self) -> bool:
        """Whether the server answered the last call (False: working from this machine)."""
        return self.link.reachable

    @property
    def refused(self) -> str | None:
        """Why the server turned this machine away (its words), when that is why it is out
        of reach; None when it only does not answer."""
        return self.link.refusal

    def on_reachability(self, listener: ReachabilityListener) -> None:
        """Call `listener(reachable)` (on a store thread) when the server goes or returns."""
        self.link.on_change(listener)

    @property
    def kept_here(self) -> int:
        """How many changes the last hand-over left on this machine (the server refused
        them; the log says why): they are offered again at each reconnection."""
        return self._kept_here

    def _count_kept(self) -> None:
        try:
            self._kept_here = self.outbox.waiting() + self.sessions.pending_count()
        except Exception:  # a count that cannot be read only leaves the last one
            log.exception("what is kept on this machine could not be counted")
        if self._kept_here:
            log.warning(
                "%d change(s) kept on this machine were not handed over; offered again at "
                "the next reconnection",
                self._kept_here,
            )

    def _announced(self, batch: list[Announcement]) -> None:
        if any(event == "forgotten" for event, _, _ in batch):
            # Before the window hears it: this machine's copies of the words go first.
            try:
                self.sessions.catch_up_forgets()
            except StoreError as exc:  # tried again at the next reconnection
                log.warning("the conversation mirror did not catch up with a forget: %s", exc)
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
        self.sessions.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
