"""Conversations on a server store that go on while the server is out of reach.

Each machine keeps a mirror of the server's conversations in a SQLite file of its own (the
file engine's schema and `SessionRepository`, in the data folder, one per server). Every save
that reaches the server is written through to the mirror, every read from the server
refreshes it, and when the server answers again after an absence the whole list is brought
up to date. While the server does not answer, reads come from the mirror and writes go to it,
each marked as pending in the same SQLite transaction; when the server answers again the
pending conversations and messages are written to it (insert or update by id, so a hand-over
cut off by a crash is simply done again) and only then unmarked.

What the owner sees: the conversations this machine has seen, a turn that saves its messages
and goes on without memories, and nothing lost when the server returns.

A memory forgotten for good (on any machine) is redacted in the server's past turns; the
mirror holds copies of them, so when the server's forget mark moves (see forget.py) the
mirror reads every conversation again and rebuilds its file, as the file store does after a
forget: what it held of the words leaves this machine too.
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import json
import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import apsw

from timothy.errors import NotFoundError, StoreError, StoreUnreachableError
from timothy.store.db import DamageCheck, Database
from timothy.store.forget import compact, secure_deletion
from timothy.store.postgres.database import PgDatabase
from timothy.store.postgres.forget import FORGETS_KEY
from timothy.store.postgres.sessions import PgSessionRepository
from timothy.store.records import (
    Message,
    MessageRole,
    MessageStatus,
    RecallRecord,
    Session,
    StoredToolCall,
    format_time,
)
from timothy.store.sessions import SessionRepository

log = logging.getLogger(__name__)

T = TypeVar("T")

# Conversations whose messages one query reads when the mirror catches up (after a forget
# every conversation is read again: one query each made 500 conversations cost 500 round
# trips); a batch bounds what one answer holds in memory.
REFRESH_BATCH = 200
_UNSET: Any = object()

SESSION_FIELDS = (
    "id",
    "title",
    "title_source",
    "provider",
    "model",
    "created_at",
    "updated_at",
    "deleted_at",
    "instructions",
    "active_leaf",
)
MESSAGE_FIELDS = (
    "id",
    "session_id",
    "role",
    "content",
    "tool_calls",
    "tool_call_id",
    "status",
    "error",
    "provider",
    "model",
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "memory_block",
    "recall",
    "compacted_by",
    "created_at",
    "parent_id",
    "reply_ms",
)
# What waits for the server: a conversation's own fields, a message, a message deleted (with
# the ones after it). `mark` grows with every change, so a hand-over only unmarks what it
# wrote, never a change made while it ran.
PENDING_TABLE = """
CREATE TABLE IF NOT EXISTS server_pending (
    kind TEXT NOT NULL CHECK (kind IN ('session', 'message', 'deleted')),
    id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    mark INTEGER NOT NULL,
    PRIMARY KEY (kind, id)
)
"""


def mirror_path(folder: Path, location: str) -> Path:
    """One file per server and database, in the data folder."""
    digest = hashlib.sha256(location.encode("utf-8")).hexdigest()[:16]
    return folder / f"conversations-of-server-{digest}.sqlite3"


def upsert_sql(table: str, fields: Sequence[str], mark: str) -> str:
    """Insert a row by id, or bring the stored one to these values."""
    updates = ", ".join(f"{name} = excluded.{name}" for name in fields if name != "id")
    return (
        f"INSERT INTO {table} ({', '.join(fields)}) VALUES ({', '.join([mark] * len(fields))}) "
        f"ON CONFLICT (id) DO UPDATE SET {updates}"
    )


def branched_sql(same_parent: str, mark: str) -> str:
    """Recompute a conversation's `branched` flag from its messages."""
    return (
        "UPDATE sessions SET branched = EXISTS (SELECT 1 FROM messages a JOIN messages b "
        f"ON a.session_id = b.session_id AND a.id <> b.id AND {same_parent} "
        "WHERE a.session_id = sessions.id AND a.role <> 'summary' AND b.role <> 'summary') "
        f"WHERE id = {mark}"
    )


def session_values(session: Session, when: Callable[[datetime], object]) -> tuple[object, ...]:
    return (
        session.id,
        session.title,
        session.title_source,
        session.provider,
        session.model,
        when(session.created_at),
        when(session.updated_at),
        None if session.deleted_at is None else when(session.deleted_at),
        session.instructions,
        session.active_leaf,
    )


def message_values(message: Message, when: Callable[[datetime], object]) -> tuple[object, ...]:
    return (
        message.id,
        message.session_id,
        message.role.value,
        message.content,
        json.dumps([c.to_json() for c in message.tool_calls]) if message.tool_calls else None,
        message.tool_call_id,
        message.status.value,
        message.error,
        message.provider,
        message.model,
        message.input_tokens,
        message.output_tokens,
        message.cached_tokens,
        message.memory_block,
        None
        if message.recall is None
        else json.dumps(message.recall.to_json(), ensure_ascii=False),
        message.compacted_by,
        when(message.created_at),
        message.parent_id,
        message.reply_ms,
    )


def _same(value: datetime) -> object:
    return value


def _message_ids(conn: apsw.Connection, session_id: str) -> list[str]:
    return [
        str(row[0])
        for row in conn.execute(
            "SELECT id FROM messages WHERE session_id = ?", (session_id,)
        ).fetchall()
    ]


class ConversationMirror:
    """This machine's copy of a server's conversations, and what waits to reach it."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.db = Database(path, check=DamageCheck.OFF)
        self.repo = SessionRepository(self.db)
        with self.db.write() as conn:
            conn.execute(PENDING_TABLE)

    def has_session(self, session_id: str) -> bool:
        with self.db.read() as conn:
            return bool(
                conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchall()
            )

    def put_sessions(self, sessions: Iterable[Session]) -> None:
        """Bring these conversations' own fields to what the server has (only the rows that
        differ are written: the window lists hundreds at each reload)."""
        wanted = [session_values(session, format_time) for session in sessions]
        if not wanted:
            return
        with self.db.read() as conn:
            stored = {
                row[0]: tuple(row)
                for row in conn.execute(f"SELECT {', '.join(SESSION_FIELDS)} FROM sessions")
            }
        changed = [values for values in wanted if stored.get(values[0]) != values]
        if not changed:
            return
        with self.db.write() as conn:
            for values in changed:
                conn.execute(upsert_sql("sessions", SESSION_FIELDS, "?"), values)

    def put_messages(self, session_id: str, messages: Sequence[Message]) -> None:
        """Bring these messages to what the server has (their conversation is mirrored)."""
        if not messages:
            return
        with self.db.write() as conn:
            for message in messages:
                conn.execute(
                    upsert_sql("messages", MESSAGE_FIELDS, "?"),
                    message_values(message, format_time),
                )
            conn.execute(branched_sql("a.parent_id IS b.parent_id", "?"), (session_id,))

    def added(self, message: Message) -> None:
        """A message the server took: as its `add_message` moved the conversation."""
        self.put_messages(message.session_id, [message])
        if message.role is MessageRole.SUMMARY:
            return
        with self.db.write() as conn:
            conn.execute(
                "UPDATE sessions SET active_leaf = ?, updated_at = max(updated_at, ?) WHERE id = ?",
                (message.id, format_time(message.created_at), message.session_id),
            )

    def message_ids(self, session_id: str) -> set[str]:
        with self.db.read() as conn:
            return set(_message_ids(conn, session_id))

    def message_ids_of(self, session_ids: Sequence[str]) -> dict[str, set[str]]:
        """The mirrored messages' ids of each of these conversations, in one query."""
        found: dict[str, set[str]] = {session_id: set() for session_id in session_ids}
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT session_id, id FROM messages "
                "WHERE session_id IN (SELECT value FROM json_each(?))",
                (json.dumps(list(found)),),
            ).fetchall()
        for session_id, message_id in rows:
            found[str(session_id)].add(str(message_id))
        return found

    def replace_messages(
        self, session_id: str, messages: Sequence[Message], *, among: set[str] | None = None
    ) -> None:
        """The conversation's messages as the server has them, keeping any not handed over.
        `among`: the messages mirrored before the server was read; only those can be gone
        (one the window added while the server was read is not in its answer, and stays)."""
        keep = {m.id for m in messages} | self.pending_message_ids(session_id)
        with self.db.write() as conn:
            gone = [
                message_id
                for message_id in _message_ids(conn, session_id)
                if message_id not in keep and (among is None or message_id in among)
            ]
            for message_id in gone:
                conn.execute("DELETE FROM messages WHERE id = ?", (message_id,))
            self.put_messages(session_id, messages)

    def drop_sessions_except(self, kept: set[str], *, among: set[str] | None = None) -> None:
        """Forget conversations the server no longer has (erased on another machine),
        unless they wait to be handed over. `among`: the conversations mirrored before the
        server was asked; only those can be gone (one the window made meanwhile is not in
        the server's answer, and stays)."""
        with self.db.write() as conn:
            waiting = {
                str(row[0])
                for row in conn.execute("SELECT DISTINCT session_id FROM server_pending")
            }
            for (session_id,) in conn.execute("SELECT id FROM sessions").fetchall():
                if among is not None and str(session_id) not in among:
                    continue
                if str(session_id) not in kept and str(session_id) not in waiting:
                    conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
                    conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    def forgets_seen(self) -> str | None:
        """The server's forget mark as this mirror last caught up with it."""
        return self.db.get_meta(FORGETS_KEY)

    def saw_forgets(self, mark: str) -> None:
        self.db.set_meta(FORGETS_KEY, mark)

    def optimise(self) -> None:
        """Rewrite the messages' text index, so terms of rewritten messages leave it."""
        with self.db.write() as conn:
            conn.execute("INSERT INTO messages_fts (messages_fts) VALUES ('optimize')")

    def updated_at(self) -> dict[str, str]:
        with self.db.read() as conn:
            return {
                str(row[0]): str(row[1])
                for row in conn.execute("SELECT id, updated_at FROM sessions").fetchall()
            }

    # -- pending -----------------------------------------------------------------------

    def mark(self, kind: str, item_id: str, session_id: str) -> None:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO server_pending (kind, id, session_id, mark) VALUES (?, ?, ?, "
                "(SELECT coalesce(max(mark), 0) + 1 FROM server_pending)) "
                "ON CONFLICT (kind, id) DO UPDATE SET mark = excluded.mark",
                (kind, item_id, session_id),
            )

    def pending(self) -> list[tuple[str, str, str, int]]:
        """(kind, id, session id, mark), oldest first."""
        with self.db.read() as conn:
            return [
                (str(kind), str(item_id), str(session_id), int(str(mark)))
                for kind, item_id, session_id, mark in conn.execute(
                    "SELECT kind, id, session_id, mark FROM server_pending ORDER BY mark"
                ).fetchall()
            ]

    def pending_message_ids(self, session_id: str) -> set[str]:
        with self.db.read() as conn:
            return {
                str(row[0])
                for row in conn.execute(
                    "SELECT id FROM server_pending WHERE kind = 'message' AND session_id = ?",
                    (session_id,),
                ).fetchall()
            }

    def unmark(self, handed: Sequence[tuple[str, str, str, int]]) -> None:
        with self.db.write() as conn:
            for kind, item_id, _session_id, mark in handed:
                conn.execute(
                    "DELETE FROM server_pending WHERE kind = ? AND id = ? AND mark <= ?",
                    (kind, item_id, mark),
                )

    def close(self) -> None:
        self.db.close()


class MirroredSessions:
    """The store's `SessionRepo` on a server, that falls back to the mirror while the server
    is out of reach (see the module's notes)."""

    def __init__(self, server: PgSessionRepository, db: PgDatabase, mirror: ConversationMirror):
        self.server = server
        self.db = db
        self.mirror = mirror
        self._handing_over = threading.Lock()
        self._catching_up = threading.Lock()

    # -- the two paths -----------------------------------------------------------------

    def _through(self, on_server: Callable[[], T], keep: Callable[[T], object]) -> T:
        """Run on the server, then copy what it answered into the mirror (a mirror that
        cannot take it is logged, never the caller's failure)."""
        result = on_server()
        try:
            keep(result)
        except (StoreError, NotFoundError) as exc:
            log.warning("the conversation mirror did not take a change: %s", exc)
        return result

    def _offline(
        self,
        session_id: str | None,
        change: Callable[[], T],
        marks: Callable[[T], Iterable[tuple[str, str, str]]],
    ) -> T:
        """Make the change on the mirror and mark it pending, in one transaction."""
        with self.mirror.db.write():
            result = change()
            for kind, item_id, owner in marks(result):
                self.mirror.mark(kind, item_id, owner)
        log.info("the memory server is out of reach; kept a change of %s here", session_id)
        return result

    def _keep_message(self, message: Message) -> None:
        self._ensure_mirrored(message.session_id)
        self.mirror.put_messages(message.session_id, [message])

    def _ensure_mirrored(self, session_id: str) -> None:
        if not self.mirror.has_session(session_id):
            self.mirror.put_sessions([self.server.get(session_id)])

    # -- reads -------------------------------------------------------------------------

    def get(self, session_id: str) -> Session:
        try:
            return self._through(
                lambda: self.server.get(session_id), lambda s: self.mirror.put_sessions([s])
            )
        except StoreUnreachableError:
            return self.mirror.repo.get(session_id)

    def list(
        self, *, search: str | None = None, include_deleted: bool = False, limit: int | None = None
    ) -> builtins.list[Session]:
        try:
            return self._through(
                lambda: self.server.list(
                    search=search, include_deleted=include_deleted, limit=limit
                ),
                self.mirror.put_sessions,
            )
        except StoreUnreachableError:
            return self.mirror.repo.list(
                search=search, include_deleted=include_deleted, limit=limit
            )

    def message(self, message_id: str) -> Message:
        try:
            return self._through(
                lambda: self.server.message(message_id),
                self._keep_message,
            )
        except StoreUnreachableError:
            return self.mirror.repo.message(message_id)

    def messages(
        self, session_id: str, *, include_compacted: bool = True
    ) -> builtins.list[Message]:
        def keep(found: builtins.list[Message]) -> None:
            self._ensure_mirrored(session_id)
            self.mirror.put_messages(session_id, found)

        try:
            return self._through(
                lambda: self.server.messages(session_id, include_compacted=include_compacted),
                keep,
            )
        except StoreUnreachableError:
            return self.mirror.repo.messages(session_id, include_compacted=include_compacted)

    def branch(self, session_id: str, *, include_compacted: bool = True) -> builtins.list[Message]:
        def keep(found: builtins.list[Message]) -> None:
            self._ensure_mirrored(session_id)
            self.mirror.put_messages(session_id, found)

        try:
            return self._through(
                lambda: self.server.branch(session_id, include_compacted=include_compacted),
                keep,
            )
        except StoreUnreachableError:
            return self.mirror.repo.branch(session_id, include_compacted=include_compacted)

    # -- writes ------------------------------------------------------------------------

    def create(
        self,
        *,
        title: str = "",
        provider: str | None = None,
        model: str | None = None,
        now: datetime | None = None,
    ) -> Session:
        try:
            return self._through(
                lambda: self.server.create(title=title, provider=provider, model=model, now=now),
                lambda s: self.mirror.put_sessions([s]),
            )
        except StoreUnreachableError:
            return self._offline(
                None,
                lambda: self.mirror.repo.create(
                    title=title, provider=provider, model=model, now=now
                ),
                lambda s: [("session", s.id, s.id)],
            )

    def _session_change(
        self,
        session_id: str,
        on_server: Callable[[], Session],
        on_mirror: Callable[[], Session],
    ) -> Session:
        try:
            return self._through(on_server, lambda s: self.mirror.put_sessions([s]))
        except StoreUnreachableError:
            return self._offline(
                session_id, on_mirror, lambda _s: [("session", session_id, session_id)]
            )

    def set_title(self, session_id: str, title: str, *, source: str = "owner") -> Session:
        return self._session_change(
            session_id,
            lambda: self.server.set_title(session_id, title, source=source),
            lambda: self.mirror.repo.set_title(session_id, title, source=source),
        )

    def set_instructions(self, session_id: str, instructions: str) -> Session:
        return self._session_change(
            session_id,
            lambda: self.server.set_instructions(session_id, instructions),
            lambda: self.mirror.repo.set_instructions(session_id, instructions),
        )

    def delete(self, session_id: str, *, now: datetime | None = None) -> Session:
        return self._session_change(
            session_id,
            lambda: self.server.delete(session_id, now=now),
            lambda: self.mirror.repo.delete(session_id, now=now),
        )

    def restore(self, session_id: str) -> Session:
        return self._session_change(
            session_id,
            lambda: self.server.restore(session_id),
            lambda: self.mirror.repo.restore(session_id),
        )

    def set_model(self, session_id: str, provider: str | None, model: str | None) -> None:
        try:
            self._through(
                lambda: self.server.set_model(session_id, provider, model),
                lambda _none: self.mirror.repo.set_model(session_id, provider, model),
            )
        except StoreUnreachableError:
            self._offline(
                session_id,
                lambda: self.mirror.repo.set_model(session_id, provider, model),
                lambda _none: [("session", session_id, session_id)],
            )

    def erase(self, session_id: str) -> None:
        """For good: only with the server (a conversation erased here alone would come back
        from the server)."""
        self.server.erase(session_id)
        with self.mirror.db.write() as conn:
            conn.execute("DELETE FROM server_pending WHERE session_id = ?", (session_id,))
            self.mirror.repo.erase(session_id)

    def purge_deleted(self, *, before: datetime) -> int:
        count = self.server.purge_deleted(before=before)
        try:
            self.mirror.repo.purge_deleted(before=before)
        except StoreError as exc:
            log.warning("the conversation mirror was not purged: %s", exc)
        return count

    def add_message(
        self,
        session_id: str,
        role: MessageRole | str,
        content: str,
        *,
        status: MessageStatus | str = MessageStatus.COMPLETE,
        tool_calls: Iterable[StoredToolCall] = (),
        tool_call_id: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        parent_id: str | None = _UNSET,
        now: datetime | None = None,
    ) -> Message:
        calls = tuple(tool_calls)
        extra: dict[str, Any] = {} if parent_id is _UNSET else {"parent_id": parent_id}

        def add(repo: PgSessionRepository | SessionRepository) -> Message:
            return repo.add_message(
                session_id,
                role,
                content,
                status=status,
                tool_calls=calls,
                tool_call_id=tool_call_id,
                provider=provider,
                model=model,
                now=now,
                **extra,
            )

        def keep(message: Message) -> None:
            self._ensure_mirrored(session_id)
            self.mirror.added(message)

        try:
            return self._through(lambda: add(self.server), keep)
        except StoreUnreachableError:
            return self._offline(
                session_id,
                lambda: add(self.mirror.repo),
                lambda m: [("message", m.id, session_id), ("session", session_id, session_id)],
            )

    def update_message(
        self,
        message_id: str,
        *,
        content: str = _UNSET,
        status: MessageStatus | str = _UNSET,
        error: str | None = _UNSET,
        tool_calls: Iterable[StoredToolCall] = _UNSET,
        input_tokens: int | None = _UNSET,
        output_tokens: int | None = _UNSET,
        cached_tokens: int | None = _UNSET,
        memory_block: str | None = _UNSET,
        recall: RecallRecord | None = _UNSET,
        reply_ms: int | None = _UNSET,
    ) -> Message:
        given: dict[str, Any] = {
            name: value
            for name, value in (
                ("content", content),
                ("status", status),
                ("error", error),
                ("tool_calls", tuple(tool_calls) if tool_calls is not _UNSET else _UNSET),
                ("input_tokens", input_tokens),
                ("output_tokens", output_tokens),
                ("cached_tokens", cached_tokens),
                ("memory_block", memory_block),
                ("recall", recall),
                ("reply_ms", reply_ms),
            )
            if value is not _UNSET
        }
        try:
            return self._through(
                lambda: self.server.update_message(message_id, **given),
                self._keep_message,
            )
        except StoreUnreachableError:
            return self._offline(
                None,
                lambda: self.mirror.repo.update_message(message_id, **given),
                lambda m: [
                    ("message", m.id, m.session_id),
                    ("session", m.session_id, m.session_id),
                ],
            )

    def set_active_leaf(self, session_id: str, message_id: str | None) -> None:
        try:
            self._through(
                lambda: self.server.set_active_leaf(session_id, message_id),
                lambda _none: self.mirror.repo.set_active_leaf(session_id, message_id),
            )
        except StoreUnreachableError:
            self._offline(
                session_id,
                lambda: self.mirror.repo.set_active_leaf(session_id, message_id),
                lambda _none: [("session", session_id, session_id)],
            )

    def select_branch(self, session_id: str, message_id: str) -> str | None:
        try:
            return self._through(
                lambda: self.server.select_branch(session_id, message_id),
                lambda leaf: self.mirror.repo.set_active_leaf(session_id, leaf),
            )
        except StoreUnreachableError:
            return self._offline(
                session_id,
                lambda: self.mirror.repo.select_branch(session_id, message_id),
                lambda _leaf: [("session", session_id, session_id)],
            )

    def mark_compacted(self, message_ids: Iterable[str], summary_id: str) -> None:
        ids = tuple(message_ids)
        try:
            self._through(
                lambda: self.server.mark_compacted(ids, summary_id),
                lambda _none: self.mirror.repo.mark_compacted(ids, summary_id),
            )
        except StoreUnreachableError:
            owner = self.mirror.repo.message(summary_id).session_id
            self._offline(
                owner,
                lambda: self.mirror.repo.mark_compacted(ids, summary_id),
                lambda _none: [("message", m, owner) for m in ids],
            )

    def delete_messages_from(self, message_id: str) -> int:
        try:
            return self._through(
                lambda: self.server.delete_messages_from(message_id),
                lambda _count: self._mirror_delete_from(message_id),
            )
        except StoreUnreachableError:
            owner = self.mirror.repo.message(message_id).session_id
            return self._offline(
                owner,
                lambda: self.mirror.repo.delete_messages_from(message_id),
                lambda _count: [("deleted", message_id, owner), ("session", owner, owner)],
            )

    def _mirror_delete_from(self, message_id: str) -> None:
        with contextlib.suppress(NotFoundError):
            self.mirror.repo.delete_messages_from(message_id)

    def import_conversation(self, session: Session, messages: Sequence[Message]) -> bool:
        """Only with the server (copying a store onto it)."""
        added = self.server.import_conversation(session, messages)
        if added:
            try:
                self.mirror.put_sessions([session])
                self.mirror.put_messages(session.id, messages)
            except StoreError as exc:
                log.warning("the conversation mirror did not take an import: %s", exc)
        return added

    def import_missing_messages(self, session: Session, messages: Sequence[Message]) -> int:
        """Only with the server (copying a store onto it again)."""
        added = self.server.import_missing_messages(session, messages)
        if added:
            try:
                self.mirror.put_sessions([self.server.get(session.id)])
                self.mirror.put_messages(session.id, messages)
            except StoreError as exc:
                log.warning("the conversation mirror did not take an import: %s", exc)
        return added

    def take_forgets(
        self, session_id: str, messages: Sequence[Message], *, settle: bool = True
    ) -> int:
        """Only with the server (copying a store onto it again); this machine's mirror then
        reads its conversations again, as after a forget (at once, or at `settle_forgets`)."""
        rewritten = self.server.take_forgets(session_id, messages, settle=settle)
        if rewritten and settle:
            self._mirror_forgets()
        return rewritten

    def settle_forgets(self) -> None:
        self.server.settle_forgets()
        self._mirror_forgets()

    def _mirror_forgets(self) -> None:
        try:
            self.catch_up_forgets()
        except StoreError as exc:
            log.warning("the conversation mirror did not take the forgets: %s", exc)

    # -- when the server answers again -------------------------------------------------

    def pending_count(self) -> int:
        """How many changes wait for the server."""
        return len(self.mirror.pending())

    def hand_over_pending(self) -> int:
        """Write what was changed here while the server was away to the server, in one
        transaction, then unmark it. Idempotent: a hand-over cut off half way is done
        again in full. How many conversations were handed over."""
        with self._handing_over:
            pending = self.mirror.pending()
            if not pending:
                return 0
            sessions = sorted({owner for _kind, _id, owner, _mark in pending})
            messages = [item for kind, item, _owner, _mark in pending if kind == "message"]
            deleted = [item for kind, item, _owner, _mark in pending if kind == "deleted"]
            stored_messages = self._mirrored_messages(messages)
            with self.db.write() as conn:
                for session_id in sessions:
                    try:
                        session = self.mirror.repo.get(session_id)
                    except NotFoundError:
                        continue  # erased here since: nothing to hand over
                    conn.execute(
                        upsert_sql("sessions", SESSION_FIELDS, "%s"),
                        session_values(session, _same),
                    )
                for message in stored_messages:
                    conn.execute(
                        upsert_sql("messages", MESSAGE_FIELDS, "%s"),
                        message_values(message, _same),
                    )
                for message_id in deleted:
                    with contextlib.suppress(NotFoundError):  # never reached it, or gone
                        self.server.delete_messages_from(message_id)
                for session_id in sessions:
                    conn.execute(
                        branched_sql("a.parent_id IS NOT DISTINCT FROM b.parent_id", "%s"),
                        (session_id,),
                    )
            self.mirror.unmark(pending)
        log.info("handed %d conversations kept here to the memory server", len(sessions))
        return len(sessions)

    def _mirrored_messages(self, message_ids: Sequence[str]) -> builtins.list[Message]:
        """The pending messages as the mirror has them, parents before children."""
        wanted = set(message_ids)
        with self.mirror.db.read() as conn:
            order = [
                str(row[0])
                for row in conn.execute("SELECT id FROM messages ORDER BY seq").fetchall()
                if str(row[0]) in wanted
            ]  # deleted here since: not listed
        return [self.mirror.repo.message(message_id) for message_id in order]

    def refresh(self, *, every: bool = False) -> int:
        """Bring the mirror up to what the server has (after an absence, or at start):
        every conversation's own fields, and the messages of those changed since (`every`:
        of all of them). How many conversations' messages were read."""
        # The refresh runs on the change feed's thread while the window goes on: what the
        # mirror held before each read of the server is all that read can say is gone.
        known = self.mirror.updated_at()
        sessions = self.server.list(include_deleted=True)
        self.mirror.put_sessions(sessions)
        changed = [s.id for s in sessions if every or known.get(s.id) != format_time(s.updated_at)]
        for start in range(0, len(changed), REFRESH_BATCH):
            batch = changed[start : start + REFRESH_BATCH]
            before = self.mirror.message_ids_of(batch)
            found = self.server.messages_of(batch)
            with self.mirror.db.write():  # one transaction for the batch: nested writes join it
                for session_id in batch:
                    self.mirror.replace_messages(
                        session_id, found[session_id], among=before[session_id]
                    )
        self.mirror.drop_sessions_except({s.id for s in sessions}, among=set(known))
        return len(changed)

    def catch_up_forgets(self) -> bool:
        """After a forget on any machine (the server's mark moved since this mirror last
        looked): every conversation read again, with what it rewrites overwritten, then the
        file rebuilt and its log truncated, so the forgotten words leave this machine's copy.
        False when the file could not be rebuilt (the words may linger in its free space;
        the next forget tries again)."""
        with self._catching_up:
            mark = self.db.get_meta(FORGETS_KEY)
            if mark is None or mark == self.mirror.forgets_seen():
                return True
            with secure_deletion(self.mirror.db):
                self.refresh(every=True)
                self.mirror.optimise()
            rebuilt = compact(self.mirror.db)
            if rebuilt:
                self.mirror.saw_forgets(mark)
            log.info("the conversation mirror caught up with a forget on the memory server")
            return rebuilt

    def close(self) -> None:
        self.mirror.close()
