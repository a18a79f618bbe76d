"""Conversations and their messages on the shared server (as `timothy.store.sessions`)."""

from __future__ import annotations

import builtins
import json
import logging
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from timothy.errors import InvalidInputError, NotFoundError
from timothy.store.ids import could_be_stored, new_id
from timothy.store.postgres.database import PgDatabase
from timothy.store.records import (
    Message,
    MessageRole,
    MessageStatus,
    RecallRecord,
    Session,
    StoredToolCall,
    utc_now,
)
from timothy.store.sessions import clean_title
from timothy.text import query_terms

log = logging.getLogger(__name__)

_SESSION_COLUMNS = (
    "s.id, s.title, s.title_source, s.provider, s.model, s.created_at, s.updated_at, s.deleted_at"
)
_MESSAGE_COLUMNS = (
    "m.id, m.session_id, m.role, m.content, m.created_at, m.status, m.tool_calls, "
    "m.tool_call_id, m.error, m.provider, m.model, m.input_tokens, m.output_tokens, "
    "m.cached_tokens, m.memory_block, m.recall, m.compacted_by"
)
_UNSET: Any = object()


def _time(value: Any) -> datetime | None:
    return None if value is None else value.astimezone(UTC)


def _moment(value: Any) -> datetime:
    return value.astimezone(UTC)  # type: ignore[no-any-return]


def _session(row: Sequence[Any]) -> Session:
    return Session(
        id=str(row[0]),
        title=str(row[1]),
        title_source=str(row[2]),
        provider=row[3],
        model=row[4],
        created_at=_moment(row[5]),
        updated_at=_moment(row[6]),
        deleted_at=_time(row[7]),
    )


def _message(row: Sequence[Any]) -> Message:
    calls = tuple(
        StoredToolCall(str(c["id"]), str(c["name"]), str(c["arguments"]))
        for c in json.loads(row[6] or "[]")
    )
    return Message(
        id=str(row[0]),
        session_id=str(row[1]),
        role=MessageRole(str(row[2])),
        content=str(row[3]),
        created_at=_moment(row[4]),
        status=MessageStatus(str(row[5])),
        tool_calls=calls,
        tool_call_id=row[7],
        error=row[8],
        provider=row[9],
        model=row[10],
        input_tokens=row[11],
        output_tokens=row[12],
        cached_tokens=row[13],
        memory_block=row[14],
        recall=_recall(row[15]),
        compacted_by=row[16],
    )


def _recall(stored: Any) -> RecallRecord | None:
    """A turn's stored recall record; one that no longer reads is dropped, not fatal (the
    turn's exact block is kept in its own column either way)."""
    if stored is None:
        return None
    try:
        data = json.loads(stored)
        return RecallRecord.from_json(data) if isinstance(data, dict) else None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        log.warning("a stored recall record does not read (%s); left out", exc)
        return None


class PgSessionRepository:
    """Sessions newest first; messages in the order they were said."""

    def __init__(self, db: PgDatabase) -> None:
        self.db = db

    # -- sessions ----------------------------------------------------------------------

    def create(
        self,
        *,
        title: str = "",
        provider: str | None = None,
        model: str | None = None,
        now: datetime | None = None,
    ) -> Session:
        moment = now or utc_now()
        session = Session(
            id=new_id(moment),
            title=clean_title(title),
            title_source="owner" if title.strip() else "none",
            provider=provider,
            model=model,
            created_at=moment,
            updated_at=moment,
        )
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO sessions (id, title, title_source, provider, model, created_at, "
                "updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (
                    session.id,
                    session.title,
                    session.title_source,
                    provider,
                    model,
                    moment,
                    moment,
                ),
            )
        return session

    def get(self, session_id: str) -> Session:
        if not could_be_stored(session_id):
            raise NotFoundError(f"No conversation has the id {session_id!r}.")
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions s WHERE s.id = %s", (session_id,)
            ).fetchall()
        if not rows:
            raise NotFoundError(f"No conversation has the id {session_id!r}.")
        return _session(rows[0])

    def list(
        self, *, search: str | None = None, include_deleted: bool = False, limit: int | None = None
    ) -> builtins.list[Session]:
        """Conversations, most recently active first; `search` looks in titles and messages."""
        where = [] if include_deleted else ["s.deleted_at IS NULL"]
        params: list[Any] = []
        if search is not None and search.strip():
            clauses = ["strpos(lower(s.title), lower(%s)) > 0"]
            params.append(search.strip())
            terms = query_terms(search)
            if terms:
                clauses.append(
                    "s.id IN (SELECT m.session_id FROM messages m "
                    "WHERE m.tsv @@ to_tsquery('english', %s))"
                )
                # \\w+ terms: no quote or operator reaches the query; the last is a prefix.
                params.append(" & ".join(f"'{t}'" for t in terms) + ":*")
            where.append("(" + " OR ".join(clauses) + ")")
        sql = f"SELECT {_SESSION_COLUMNS} FROM sessions s"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY s.updated_at DESC, s.seq DESC LIMIT %s"
        params.append(limit)
        with self.db.read() as conn:
            return [_session(row) for row in conn.execute(sql, params).fetchall()]

    def set_title(self, session_id: str, title: str, *, source: str = "owner") -> Session:
        if source not in ("fallback", "auto", "owner"):
            raise InvalidInputError(f"Unknown title source {source!r}.")
        cleaned = clean_title(title)
        if not cleaned:
            raise InvalidInputError("A conversation's title cannot be empty.")
        with self.db.write() as conn:
            changed = conn.execute(
                "UPDATE sessions SET title = %s, title_source = %s WHERE id = %s RETURNING id",
                (cleaned, source, session_id),
            ).fetchall()
        if not changed:
            raise NotFoundError(f"No conversation has the id {session_id!r}.")
        return self.get(session_id)

    def set_model(self, session_id: str, provider: str | None, model: str | None) -> None:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE sessions SET provider = %s, model = %s WHERE id = %s",
                (provider, model, session_id),
            )

    def delete(self, session_id: str, *, now: datetime | None = None) -> Session:
        """Move a conversation to the bin (undoable with `restore`)."""
        with self.db.write() as conn:
            changed = conn.execute(
                "UPDATE sessions SET deleted_at = %s WHERE id = %s RETURNING id",
                (now or utc_now(), session_id),
            ).fetchall()
        if not changed:
            raise NotFoundError(f"No conversation has the id {session_id!r}.")
        return self.get(session_id)

    def restore(self, session_id: str) -> Session:
        with self.db.write() as conn:
            changed = conn.execute(
                "UPDATE sessions SET deleted_at = NULL WHERE id = %s RETURNING id", (session_id,)
            ).fetchall()
        if not changed:
            raise NotFoundError(f"No conversation has the id {session_id!r}.")
        return self.get(session_id)

    def purge_deleted(self, *, before: datetime) -> int:
        """Delete for good the conversations binned before `before` (with their messages)."""
        with self.db.write() as conn:
            rows = conn.execute(
                "DELETE FROM sessions WHERE deleted_at IS NOT NULL AND deleted_at < %s "
                "RETURNING id",
                (before,),
            ).fetchall()
        return len(rows)

    # -- messages ----------------------------------------------------------------------

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
        now: datetime | None = None,
    ) -> Message:
        moment = now or utc_now()
        message = Message(
            id=new_id(moment),
            session_id=session_id,
            role=MessageRole(role),
            content=content,
            created_at=moment,
            status=MessageStatus(status),
            tool_calls=tuple(tool_calls),
            tool_call_id=tool_call_id,
            provider=provider,
            model=model,
        )
        with self.db.write() as conn:
            changed = conn.execute(
                "UPDATE sessions SET updated_at = greatest(updated_at, %s) WHERE id = %s "
                "RETURNING id",
                (moment, session_id),
            ).fetchall()
            if not changed:
                raise NotFoundError(f"No conversation has the id {session_id!r}.")
            conn.execute(
                "INSERT INTO messages (id, session_id, role, content, status, tool_calls, "
                "tool_call_id, provider, model, created_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    message.id,
                    session_id,
                    message.role.value,
                    content,
                    message.status.value,
                    json.dumps([c.to_json() for c in message.tool_calls]) if tool_calls else None,
                    tool_call_id,
                    provider,
                    model,
                    moment,
                ),
            )
        return message

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
    ) -> Message:
        """Change the given fields of a message (a streaming reply as it grows and ends)."""
        changes: dict[str, Any] = {}
        if content is not _UNSET:
            changes["content"] = content
        if status is not _UNSET:
            changes["status"] = MessageStatus(status).value
        if error is not _UNSET:
            changes["error"] = error
        if tool_calls is not _UNSET:
            calls = [c.to_json() for c in tool_calls]
            changes["tool_calls"] = json.dumps(calls) if calls else None
        for name, value in (
            ("input_tokens", input_tokens),
            ("output_tokens", output_tokens),
            ("cached_tokens", cached_tokens),
            ("memory_block", memory_block),
        ):
            if value is not _UNSET:
                changes[name] = value
        if recall is not _UNSET:
            changes["recall"] = (
                None if recall is None else json.dumps(recall.to_json(), ensure_ascii=False)
            )
        if changes:
            assignments = ", ".join(f"{name} = %s" for name in changes)
            with self.db.write() as conn:
                changed = conn.execute(
                    f"UPDATE messages SET {assignments} WHERE id = %s RETURNING id",
                    (*changes.values(), message_id),
                ).fetchall()
            if not changed:
                raise NotFoundError(f"No message has the id {message_id!r}.")
        return self.message(message_id)

    def message(self, message_id: str) -> Message:
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {_MESSAGE_COLUMNS} FROM messages m WHERE m.id = %s", (message_id,)
            ).fetchall()
        if not rows:
            raise NotFoundError(f"No message has the id {message_id!r}.")
        return _message(rows[0])

    def messages(
        self, session_id: str, *, include_compacted: bool = True
    ) -> builtins.list[Message]:
        sql = f"SELECT {_MESSAGE_COLUMNS} FROM messages m WHERE m.session_id = %s"
        if not include_compacted:
            sql += " AND m.compacted_by IS NULL"
        sql += " ORDER BY m.seq"
        with self.db.read() as conn:
            return [_message(row) for row in conn.execute(sql, (session_id,)).fetchall()]

    def mark_compacted(self, message_ids: Iterable[str], summary_id: str) -> None:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE messages SET compacted_by = %s WHERE id = ANY(%s)",
                (summary_id, list(message_ids)),
            )

    def delete_messages_from(self, message_id: str) -> int:
        """Delete a message and every later one in its conversation (regenerating a reply)."""
        with self.db.write() as conn:
            rows = conn.execute(
                "SELECT seq, session_id FROM messages WHERE id = %s", (message_id,)
            ).fetchall()
            if not rows:
                raise NotFoundError(f"No message has the id {message_id!r}.")
            seq, session_id = rows[0]
            deleted = conn.execute(
                "DELETE FROM messages WHERE session_id = %s AND seq >= %s RETURNING id",
                (session_id, seq),
            ).fetchall()
        return len(deleted)

    def import_conversation(self, session: Session, messages: Sequence[Message]) -> bool:
        """Write a conversation exactly as given (ids, times, every field of every message),
        in one transaction: what copying a store does. False, and nothing written, when a
        conversation with its id is already stored."""
        with self.db.write() as conn:
            added = conn.execute(
                "INSERT INTO sessions (id, title, title_source, provider, model, created_at, "
                "updated_at, deleted_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (id) DO NOTHING RETURNING id",
                (
                    session.id,
                    session.title,
                    session.title_source,
                    session.provider,
                    session.model,
                    session.created_at,
                    session.updated_at,
                    None if session.deleted_at is None else session.deleted_at,
                ),
            ).fetchall()
            if not added:
                return False
            for message in messages:
                conn.execute(
                    "INSERT INTO messages (id, session_id, role, content, tool_calls, "
                    "tool_call_id, status, error, provider, model, input_tokens, output_tokens, "
                    "cached_tokens, memory_block, recall, compacted_by, created_at) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    (
                        message.id,
                        session.id,
                        message.role.value,
                        message.content,
                        json.dumps([c.to_json() for c in message.tool_calls])
                        if message.tool_calls
                        else None,
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
                        message.created_at,
                    ),
                )
        return True
