"""Changes made on other machines, as they happen: LISTEN on the store's channel.

The server announces every change to a memory (migration 2's trigger). A thread of the store
holds one connection that LISTENs and turns each announcement made by another machine into
the same memory event this machine's own writes give its listeners ("staged", "promoted",
"superseded", "forgotten", ...), so the queue pane, the browser and the counts follow within
moments without a restart. Announcements of this machine's own writes are skipped (its
listeners heard those already). A lost connection is re-made, with a pause that grows to
10 s. A server that turns the login away (a wrong password, an unknown user or database)
will not mend by waiting, and each try is a failed login in its log: those tries slow down
to every 5 minutes, unless the owner asks for one (`retry_now`: new settings, *Try again*).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql

from timothy.errors import StoreError, causes
from timothy.store.postgres.database import login_refusal
from timothy.store.records import Memory, MemorySource, MemoryStatus, MemoryType

log = logging.getLogger(__name__)

CHANNEL_PREFIX = "timothy_changes_"
POLL_SECONDS = 0.5
MAX_PAUSE_SECONDS = 10.0  # a server that returns is found again within this
# The pauses after each refused login in a row; the last repeats.
REFUSED_PAUSES_SECONDS = (10.0, 30.0, 60.0, 300.0)

# (event, the memory's id, the memory as the announcement describes it, for "forgotten")
Announcement = tuple[str, str, Memory | None]


def event_of(payload: dict[str, Any]) -> str | None:
    """The memory event an announcement stands for (None: nothing the owner would see)."""
    op, status, old = payload.get("op"), payload.get("status"), payload.get("old_status")
    if op == "DELETE":
        return "forgotten"
    if op == "INSERT":
        if status == "staged":
            return "staged"
        return "superseded" if payload.get("supersedes") else "added"
    if status != old:
        if status == "active" and old == "staged":
            return "promoted"
        if old in ("rejected", "archived") and status in ("staged", "active"):
            return "restored"
        if status in ("rejected", "archived"):
            return str(status)
        return None  # -> superseded: the new version's INSERT tells it
    if payload.get("confirmed"):
        return "reconfirmed"
    if payload.get("confidence"):
        return "decayed"
    return None


def refused_pause(refusals: int) -> float:
    """The pause after `refusals` refused logins in a row (at least one)."""
    return REFUSED_PAUSES_SECONDS[min(refusals, len(REFUSED_PAUSES_SECONDS)) - 1]


def refusal_in(exc: BaseException) -> str | None:
    """Why the server turned the login away, wherever in `exc`'s causes it says so."""
    found = (login_refusal(cause) for cause in causes(exc))
    return next((why for why in found if why is not None), None)


def forgotten_record(payload: dict[str, Any]) -> Memory:
    """What a listener gets for a memory forgotten elsewhere: its id and kind, no words."""
    created = datetime.fromisoformat(str(payload["created_at"]))
    return Memory(
        id=str(payload["id"]),
        type=MemoryType(str(payload.get("type") or "semantic")),
        content="",
        status=MemoryStatus(str(payload.get("status") or "active")),
        confidence=0.0,
        source=MemorySource.MANUAL,
        session_id=None,
        supersedes=None,
        superseded_by=None,
        created_at=created,
        last_confirmed_at=None,
        last_retrieved_at=None,
    )


class ChangeFollower:
    """One LISTEN connection on a thread; `deliver` gets each other machine's change."""

    def __init__(
        self,
        conninfo: Callable[[bool], str],
        schema: str | None,
        own_backends: Callable[[], set[int]],
        deliver: Callable[[list[Announcement]], None],
        *,
        on_connected: Callable[[], object] | None = None,
        on_idle: Callable[[], object] | None = None,
    ) -> None:
        """`conninfo(renew)` gives the address for each attempt (`renew`: the last one was
        refused, or the owner asked to try again: the password may have changed). `schema`
        None: the connection's own (a store opened while the server was away learns it when
        the feed first connects)."""
        self.conninfo = conninfo
        self.channel = "" if schema is None else CHANNEL_PREFIX + schema
        self.on_idle = on_idle  # between polls, while connected
        self.own_backends = own_backends
        self.deliver = deliver
        self.on_connected = on_connected  # each time the feed is (re)connected
        self.listening = threading.Event()  # set while the LISTEN connection is up
        self.connections = 0  # how many times the feed has connected (and handed over)
        self._connected = threading.Condition()
        self._stop = threading.Event()
        self._wake = threading.Event()  # ends the pause between attempts (stop, retry_now)
        self._asked = False  # the owner asked for an attempt now
        self.refusals = 0  # refused logins in a row
        self._conn: psycopg.Connection[Any] | None = None
        self._thread = threading.Thread(target=self._run, name="timothy-changes", daemon=True)

    def start(self) -> ChangeFollower:
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout)

    def retry_now(self) -> None:
        """Try the server at once, with the address read again (the owner changed the
        settings or asked), whatever pause a refused login had set."""
        self._asked = True
        self._wake.set()

    def wait_connected(self, after: int, timeout: float) -> bool:
        """Wait until the feed has connected more than `after` times (a reconnection)."""
        with self._connected:
            return self._connected.wait_for(lambda: self.connections > after, timeout)

    def _run(self) -> None:
        pause = 0.5
        while not self._stop.is_set():
            renew, self._asked = self.refusals > 0 or self._asked, False
            refused: str | None = None
            try:
                with psycopg.connect(self.conninfo(renew), autocommit=True) as conn:
                    if not self.channel:
                        row = conn.execute("SELECT current_schema()").fetchone()
                        schema = "public" if row is None or row[0] is None else str(row[0])
                        self.channel = CHANNEL_PREFIX + schema
                    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
                    pause = 0.5
                    self.refusals = 0
                    if self.on_connected is not None:
                        self.on_connected()
                    with self._connected:
                        self.connections += 1
                        self.listening.set()
                        self._connected.notify_all()
                    self._listen(conn)
            except psycopg.Error as exc:
                if self._stop.is_set():
                    break
                refused = refusal_in(exc)
                if refused is None:
                    log.warning("lost the change feed of the memory server (%s); retrying", exc)
            except StoreError as exc:  # on_connected found the server gone again
                refused = refusal_in(exc)
                if refused is None:
                    log.warning("the memory server is not back yet (%s); retrying", exc)
            except Exception:  # a listener's failure must not end the feed
                log.exception("the change feed failed; retrying")
            finally:
                self.listening.clear()
            if refused is not None:
                self.refusals += 1
                wait = refused_pause(self.refusals)
                log.warning(
                    "the memory server refused this machine's login (%s); trying again in %g s",
                    refused,
                    wait,
                )
            else:
                self.refusals = 0
                wait = pause
                pause = min(pause * 2, MAX_PAUSE_SECONDS)
            if not self._asked:
                self._wake.wait(wait)
            self._wake.clear()

    def _listen(self, conn: psycopg.Connection[Any]) -> None:
        while not self._stop.is_set():
            batch: list[Announcement] = []
            for notice in conn.notifies(timeout=POLL_SECONDS):
                if notice.pid in self.own_backends():
                    continue
                try:
                    payload = json.loads(notice.payload)
                except ValueError:
                    continue
                event = event_of(payload)
                if event is None:
                    continue
                record = forgotten_record(payload) if event == "forgotten" else None
                batch.append((event, str(payload["id"]), record))
            if batch:
                self.deliver(batch)
            if self.on_idle is not None:
                self.on_idle()
