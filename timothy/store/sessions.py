"""Conversations and their messages, in branches: one implementation for both engines.

`BaseSessionRepository` holds every query and rule; an engine's subclass names its `Dialect`
(`dialect.py`) and how a conversation-list search finds messages: here the file's FTS5 index
(`SessionRepository`), on the server its tsvector column (`postgres/sessions.py`).
"""

from __future__ import annotations

import builtins
import contextlib
import json
import logging
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from datetime import datetime
from typing import Any, ClassVar, Generic, TypeVar

from timothy.errors import InvalidInputError, NotFoundError
from timothy.store.db import Database
from timothy.store.dialect import SQLITE, Dialect, Transactions
from timothy.store.forget import MessageCopies, compact, secure_deletion, take_forgets
from timothy.store.ids import could_be_stored, new_id
from timothy.store.records import (
    Message,
    MessageRole,
    MessageStatus,
    RecallRecord,
    Session,
    StoredToolCall,
    utc_now,
)
from timothy.text import fold, fts_query

log = logging.getLogger(__name__)

MAX_TITLE_CHARS = 200
MAX_INSTRUCTIONS_CHARS = 4_000
_SESSION_COLUMNS = (
    "s.id, s.title, s.title_source, s.provider, s.model, s.created_at, s.updated_at, "
    "s.deleted_at, s.instructions, s.active_leaf"
)
_MESSAGE_COLUMNS = (
    "m.id, m.session_id, m.role, m.content, m.created_at, m.status, m.tool_calls, "
    "m.tool_call_id, m.error, m.provider, m.model, m.input_tokens, m.output_tokens, "
    "m.cached_tokens, m.memory_block, m.recall, m.compacted_by, m.parent_id, m.reply_ms"
)
_UNSET: Any = object()
DbT = TypeVar("DbT", bound=Transactions)


def _id(value: Any) -> str | None:
    return None if value is None else str(value)


def _session(row: Sequence[Any], dialect: Dialect) -> Session:
    return Session(
        id=str(row[0]),
        title=str(row[1]),
        title_source=str(row[2]),
        provider=row[3],
        model=row[4],
        created_at=dialect.moment(row[5]),
        updated_at=dialect.moment(row[6]),
        deleted_at=dialect.time_in(row[7]),
        instructions=str(row[8] or ""),
        active_leaf=_id(row[9]),
    )


def _message(row: Sequence[Any], dialect: Dialect) -> Message:
    calls = tuple(
        StoredToolCall(str(c["id"]), str(c["name"]), str(c["arguments"]))
        for c in json.loads(row[6] or "[]")
    )
    return Message(
        id=str(row[0]),
        session_id=str(row[1]),
        role=MessageRole(str(row[2])),
        content=str(row[3]),
        created_at=dialect.moment(row[4]),
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
        parent_id=_id(row[17]),
        reply_ms=row[18],
    )


def _tool_calls_json(calls: Sequence[StoredToolCall]) -> str | None:
    return json.dumps([c.to_json() for c in calls]) if calls else None


def _recall_json(recall: RecallRecord | None) -> str | None:
    return None if recall is None else json.dumps(recall.to_json(), ensure_ascii=False)


def _recall(stored: Any) -> RecallRecord | None:
    """A turn's stored recall record; one that no longer reads is dropped, not fatal (the
    turn's exact block is kept in its own column either way)."""
    if stored is None:
        return None
    try:
        data = json.loads(stored)
        if not isinstance(data, dict):
            return None
        return RecallRecord.from_json(data, text=stored if isinstance(stored, str) else None)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        log.warning("a stored recall record does not read (%s); left out", exc)
        return None


def children_of(messages: Sequence[Message]) -> dict[str | None, builtins.list[Message]]:
    """Each message's children (messages sent after it on some branch), oldest first;
    summaries stand beside the branches and are nobody's child."""
    children: dict[str | None, builtins.list[Message]] = {}
    for message in messages:
        if message.role is not MessageRole.SUMMARY:
            children.setdefault(message.parent_id, []).append(message)
    return children


def is_branched(messages: Sequence[Message]) -> bool:
    """Whether some message has more than one continuation (an edit, a reply version)."""
    return any(len(kids) > 1 for kids in children_of(messages).values())


def newest_leaf(
    start: str | None, children: dict[str | None, builtins.list[Message]]
) -> str | None:
    """The end of the newest branch below `start`: at each step the newest child."""
    leaf = start
    while children.get(leaf):
        leaf = children[leaf][-1].id
    return leaf


def path_to(leaf: str | None, messages: Sequence[Message]) -> builtins.list[Message]:
    """The branch that ends at `leaf`, oldest first."""
    by_id = {m.id: m for m in messages}
    path: builtins.list[Message] = []
    seen: set[str] = set()
    current = by_id.get(leaf) if leaf is not None else None
    while current is not None and current.id not in seen:
        seen.add(current.id)
        path.append(current)
        current = by_id.get(current.parent_id) if current.parent_id is not None else None
    path.reverse()
    return path


def branch_of(
    messages: Sequence[Message], leaf: str | None, *, include_compacted: bool = True
) -> builtins.list[Message]:
    """The branch ending at `leaf` with the compaction summaries that apply to it, in the
    order they were written. A summary applies when every message it replaced is on this
    branch (or is itself an applying summary); a message replaced by a summary that does
    not apply (it also covers turns of another branch) counts as not replaced here."""
    path = path_to(leaf, messages)
    on_branch = {m.id for m in path}
    replaced: dict[str, builtins.list[str]] = {}
    for message in messages:
        if message.compacted_by is not None:
            replaced.setdefault(message.compacted_by, []).append(message.id)
    applying: set[str] = set()
    summaries = [m for m in messages if m.role is MessageRole.SUMMARY]
    for summary in summaries:  # oldest first: a summary may cover an earlier one
        covered = replaced.get(summary.id, [])
        if covered and all(c in on_branch or c in applying for c in covered):
            applying.add(summary.id)
    shown = [m for m in messages if m.id in on_branch or m.id in applying]
    if include_compacted:
        return shown
    return [m for m in shown if m.compacted_by is None or m.compacted_by not in applying]


def on_active_branch(conn: Any, dialect: Dialect, hits: dict[str, set[str]]) -> set[str]:
    """The conversations among `hits` (conversation -> its messages that match a text
    search) whose active branch holds one of those messages. A one-branch conversation
    shows all its messages; for the others the active branch is walked here, over one read
    of their messages' parents. Summaries are the model's shorthand for turns shown anyway;
    they do not count."""
    if not hits:
        return set()
    branched = {
        str(row[0]): _id(row[1])
        for row in conn.execute(
            dialect.sql(
                f"SELECT id, active_leaf FROM sessions WHERE branched AND {dialect.among('id')}"
            ),
            (dialect.items(sorted(hits)),),
        ).fetchall()
    }
    found = {session_id for session_id in hits if session_id not in branched}
    if not branched:
        return found
    parents: dict[str, dict[str, str | None]] = {}
    for session_id, message_id, parent_id in conn.execute(
        dialect.sql(
            "SELECT session_id, id, parent_id FROM messages "
            f"WHERE {dialect.among('session_id')} AND role <> 'summary'"
        ),
        (dialect.items(sorted(branched)),),
    ).fetchall():
        parents.setdefault(str(session_id), {})[str(message_id)] = _id(parent_id)
    for session_id, leaf in branched.items():
        up = parents.get(session_id, {})
        wanted = hits[session_id]
        current = leaf
        steps = 0
        while current is not None and steps <= len(up):
            if current in wanted:
                found.add(session_id)
                break
            current = up.get(current)
            steps += 1
    return found


def clean_title(title: str) -> str:
    flat = " ".join(title.split())
    return flat[:MAX_TITLE_CHARS].rstrip()


class BaseSessionRepository(Generic[DbT]):
    """Sessions newest first; messages in the order they were said. One implementation for
    both engines: each engine's subclass names its `dialect` and finds the messages a text
    search matches (`_text_query`)."""

    dialect: ClassVar[Dialect] = SQLITE

    def __init__(self, db: DbT) -> None:
        self.db = db

    def _text_query(self, search: str) -> tuple[str, tuple[Any, ...]] | None:
        """The query (in the engine's own SQL) and its parameters that find the messages
        (not summaries) a conversation-list search matches, every word of it, the last
        one as a prefix, as (conversation id, message id) rows; None when `search` holds
        no word to look for."""
        raise NotImplementedError

    def _text_hits(self, conn: Any, search: str) -> dict[str, set[str]] | None:
        """Conversation -> its messages that a conversation-list search matches."""
        query = self._text_query(search)
        if query is None:
            return None
        hits: dict[str, set[str]] = {}
        for session_id, message_id in conn.execute(*query).fetchall():
            hits.setdefault(str(session_id), set()).add(str(message_id))
        return hits

    def _titled(self, conn: Any, search: str, where: Sequence[str]) -> builtins.list[str]:
        """The conversations whose title holds `search`, compared case-folded in Python:
        SQLite's lower() folds ASCII only, so "über" never found "Über Berlin" (and folding
        makes "ß" and "ss" alike, as the text search does). Titles are short and few."""
        needle = fold(search.strip())
        sql = "SELECT s.id, s.title FROM sessions s"
        if where:
            sql += " WHERE " + " AND ".join(where)
        return [
            str(session_id)
            for session_id, title in conn.execute(self.dialect.sql(sql)).fetchall()
            if needle in fold(str(title))
        ]

    def _session_rows(self, rows: Iterable[Sequence[Any]]) -> builtins.list[Session]:
        return [_session(row, self.dialect) for row in rows]

    def _message_rows(self, rows: Iterable[Sequence[Any]]) -> builtins.list[Message]:
        return [_message(row, self.dialect) for row in rows]

    def _changed(self, sql: str, params: Sequence[Any]) -> bool:
        """Run one write that RETURNs the rows it changed; whether it changed any."""
        with self.db.write() as conn:
            return bool(conn.execute(self.dialect.sql(sql), params).fetchall())

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
        at = self.dialect.time_out(moment)
        with self.db.write() as conn:
            conn.execute(
                self.dialect.sql(
                    "INSERT INTO sessions (id, title, title_source, provider, model, created_at, "
                    "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
                ),
                (session.id, session.title, session.title_source, provider, model, at, at),
            )
        return session

    def get(self, session_id: str) -> Session:
        if not could_be_stored(session_id):
            raise NotFoundError(f"No conversation has the id {session_id!r}.")
        with self.db.read() as conn:
            rows = conn.execute(
                self.dialect.sql(f"SELECT {_SESSION_COLUMNS} FROM sessions s WHERE s.id = ?"),
                (session_id,),
            ).fetchall()
        if not rows:
            raise NotFoundError(f"No conversation has the id {session_id!r}.")
        return _session(rows[0], self.dialect)

    def list(
        self, *, search: str | None = None, include_deleted: bool = False, limit: int | None = None
    ) -> builtins.list[Session]:
        """Conversations, most recently active first; `search` looks in titles and in the
        messages of their active branches."""
        dialect = self.dialect
        where = [] if include_deleted else ["s.deleted_at IS NULL"]
        params: builtins.list[Any] = []
        with self.db.read() as conn:
            if search is not None and search.strip():
                clauses = [dialect.among("s.id")]
                params.append(dialect.items(self._titled(conn, search, where)))
                hits = self._text_hits(conn, search)
                if hits is not None:
                    # Only what the owner sees counts: words on an earlier branch (an edited
                    # message, an older reply version) do not make a conversation match.
                    clauses.append(dialect.among("s.id"))
                    params.append(dialect.items(sorted(on_active_branch(conn, dialect, hits))))
                where.append("(" + " OR ".join(clauses) + ")")
            sql = f"SELECT {_SESSION_COLUMNS} FROM sessions s"
            if where:
                sql += " WHERE " + " AND ".join(where)
            sql += " ORDER BY s.updated_at DESC, s.seq DESC LIMIT ?"
            params.append(dialect.no_limit if limit is None else int(limit))
            return self._session_rows(conn.execute(dialect.sql(sql), params).fetchall())

    def set_title(self, session_id: str, title: str, *, source: str = "owner") -> Session:
        if source not in ("fallback", "auto", "owner"):
            raise InvalidInputError(f"Unknown title source {source!r}.")
        cleaned = clean_title(title)
        if not cleaned:
            raise InvalidInputError("A conversation's title cannot be empty.")
        if not self._changed(
            "UPDATE sessions SET title = ?, title_source = ? WHERE id = ? RETURNING id",
            (cleaned, source, session_id),
        ):
            raise NotFoundError(f"No conversation has the id {session_id!r}.")
        return self.get(session_id)

    def set_model(self, session_id: str, provider: str | None, model: str | None) -> None:
        with self.db.write() as conn:
            conn.execute(
                self.dialect.sql("UPDATE sessions SET provider = ?, model = ? WHERE id = ?"),
                (provider, model, session_id),
            )

    def set_instructions(self, session_id: str, instructions: str) -> Session:
        """The owner's note for this conversation ("" for none)."""
        text = instructions.strip()
        if len(text) > MAX_INSTRUCTIONS_CHARS:
            raise InvalidInputError(
                f"Instructions can be at most {MAX_INSTRUCTIONS_CHARS:,} characters; these "
                f"have {len(text):,}."
            )
        if not self._changed(
            "UPDATE sessions SET instructions = ? WHERE id = ? RETURNING id", (text, session_id)
        ):
            raise NotFoundError(f"No conversation has the id {session_id!r}.")
        return self.get(session_id)

    def delete(self, session_id: str, *, now: datetime | None = None) -> Session:
        """Move a conversation to the bin (undoable with `restore`)."""
        if not self._changed(
            "UPDATE sessions SET deleted_at = ? WHERE id = ? RETURNING id",
            (self.dialect.time_out(now or utc_now()), session_id),
        ):
            raise NotFoundError(f"No conversation has the id {session_id!r}.")
        return self.get(session_id)

    def restore(self, session_id: str) -> Session:
        if not self._changed(
            "UPDATE sessions SET deleted_at = NULL WHERE id = ? RETURNING id", (session_id,)
        ):
            raise NotFoundError(f"No conversation has the id {session_id!r}.")
        return self.get(session_id)

    def erase(self, session_id: str) -> None:
        """Delete a conversation and its messages for good, now (a temporary chat closed)."""
        with self.db.write() as conn:
            conn.execute(
                self.dialect.sql("DELETE FROM messages WHERE session_id = ?"), (session_id,)
            )
            conn.execute(self.dialect.sql("DELETE FROM sessions WHERE id = ?"), (session_id,))

    def purge_deleted(self, *, before: datetime) -> int:
        """Delete for good the conversations binned before `before` (with their messages)."""
        with self.db.write() as conn:
            rows = conn.execute(
                self.dialect.sql(
                    "DELETE FROM sessions WHERE deleted_at IS NOT NULL AND deleted_at < ? "
                    "RETURNING id"
                ),
                (self.dialect.time_out(before),),
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
        parent_id: str | None = _UNSET,
        now: datetime | None = None,
    ) -> Message:
        """Add a message to a conversation. It follows `parent_id` (default: the newest
        message of the active branch) and becomes the active branch's newest; a summary
        stands beside the branches and moves nothing."""
        dialect = self.dialect
        moment = now or utc_now()
        role = MessageRole(role)
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
        at = dialect.time_out(moment)
        with self.db.write() as conn:
            changed = conn.execute(
                dialect.sql(
                    f"UPDATE sessions SET updated_at = {dialect.greatest}(updated_at, ?) "
                    "WHERE id = ? RETURNING active_leaf"
                ),
                (at, session_id),
            ).fetchall()  # on the server the row stays locked: two writers add in turn
            if not changed:
                raise NotFoundError(f"No conversation has the id {session_id!r}.")
            if role is MessageRole.SUMMARY:
                parent = None
            elif parent_id is _UNSET:
                parent = _id(changed[0][0])
            else:
                parent = parent_id
                if (
                    parent is not None
                    and not conn.execute(
                        dialect.sql("SELECT 1 FROM messages WHERE id = ? AND session_id = ?"),
                        (parent, session_id),
                    ).fetchall()
                ):
                    raise NotFoundError(f"No message {parent!r} in conversation {session_id!r}.")
            message = replace(message, parent_id=parent)
            if (
                role is not MessageRole.SUMMARY
                and conn.execute(
                    dialect.sql(
                        "SELECT 1 FROM messages WHERE session_id = ? "
                        "AND parent_id IS NOT DISTINCT FROM CAST(? AS TEXT) "
                        "AND role <> 'summary' LIMIT 1"
                    ),
                    (session_id, parent),
                ).fetchall()
            ):
                # a second message after the same one: an edit or another reply version
                conn.execute(
                    dialect.sql("UPDATE sessions SET branched = ? WHERE id = ?"),
                    (True, session_id),
                )
            conn.execute(
                dialect.sql(
                    "INSERT INTO messages (id, session_id, role, content, status, tool_calls, "
                    "tool_call_id, provider, model, created_at, parent_id) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                ),
                (
                    message.id,
                    session_id,
                    message.role.value,
                    content,
                    message.status.value,
                    _tool_calls_json(message.tool_calls),
                    tool_call_id,
                    provider,
                    model,
                    at,
                    parent,
                ),
            )
            if role is not MessageRole.SUMMARY:
                conn.execute(
                    dialect.sql("UPDATE sessions SET active_leaf = ? WHERE id = ?"),
                    (message.id, session_id),
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
        reply_ms: int | None = _UNSET,
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
            changes["tool_calls"] = _tool_calls_json(tuple(tool_calls))
        for name, value in (
            ("input_tokens", input_tokens),
            ("output_tokens", output_tokens),
            ("cached_tokens", cached_tokens),
            ("memory_block", memory_block),
            ("reply_ms", reply_ms),
        ):
            if value is not _UNSET:
                changes[name] = value
        if recall is not _UNSET:
            changes["recall"] = _recall_json(recall)
        if changes:
            assignments = ", ".join(f"{name} = ?" for name in changes)
            if not self._changed(
                f"UPDATE messages SET {assignments} WHERE id = ? RETURNING id",
                (*changes.values(), message_id),
            ):
                raise NotFoundError(f"No message has the id {message_id!r}.")
        return self.message(message_id)

    def message(self, message_id: str) -> Message:
        with self.db.read() as conn:
            rows = conn.execute(
                self.dialect.sql(f"SELECT {_MESSAGE_COLUMNS} FROM messages m WHERE m.id = ?"),
                (message_id,),
            ).fetchall()
        if not rows:
            raise NotFoundError(f"No message has the id {message_id!r}.")
        return _message(rows[0], self.dialect)

    def messages(
        self, session_id: str, *, include_compacted: bool = True
    ) -> builtins.list[Message]:
        """Every message of the conversation, of every branch, in the order they were said."""
        sql = f"SELECT {_MESSAGE_COLUMNS} FROM messages m WHERE m.session_id = ?"
        if not include_compacted:
            sql += " AND m.compacted_by IS NULL"
        sql += " ORDER BY m.seq"
        with self.db.read() as conn:
            return self._message_rows(conn.execute(self.dialect.sql(sql), (session_id,)).fetchall())

    def messages_of(self, session_ids: Sequence[str]) -> dict[str, builtins.list[Message]]:
        """Every message of each of these conversations (as `messages`), in one query: a
        conversation with none has an empty list."""
        found: dict[str, builtins.list[Message]] = {session_id: [] for session_id in session_ids}
        if not found:
            return found
        dialect = self.dialect
        sql = (
            f"SELECT {_MESSAGE_COLUMNS} FROM messages m WHERE {dialect.among('m.session_id')} "
            "ORDER BY m.seq"
        )
        with self.db.read() as conn:
            rows = conn.execute(dialect.sql(sql), (dialect.items(found),)).fetchall()
        for message in self._message_rows(rows):
            found[message.session_id].append(message)
        return found

    def _all_messages(self, conn: Any, session_id: str) -> builtins.list[Message]:
        return self._message_rows(
            conn.execute(
                self.dialect.sql(
                    f"SELECT {_MESSAGE_COLUMNS} FROM messages m WHERE m.session_id = ? "
                    "ORDER BY m.seq"
                ),
                (session_id,),
            ).fetchall()
        )

    def branch(self, session_id: str, *, include_compacted: bool = True) -> builtins.list[Message]:
        """The active branch: what the owner sees and the model is sent, with the
        compaction summaries that apply to it (see `branch_of`)."""
        with self.db.read() as conn:
            leaf = conn.execute(
                self.dialect.sql("SELECT active_leaf FROM sessions WHERE id = ?"), (session_id,)
            ).fetchall()
            if not leaf:
                raise NotFoundError(f"No conversation has the id {session_id!r}.")
            messages = self._all_messages(conn, session_id)
        return branch_of(messages, _id(leaf[0][0]), include_compacted=include_compacted)

    def set_active_leaf(self, session_id: str, message_id: str | None) -> None:
        """Make the branch ending at `message_id` the active one."""
        with self.db.write() as conn:
            if (
                message_id is not None
                and not conn.execute(
                    self.dialect.sql(
                        "SELECT 1 FROM messages WHERE id = ? AND session_id = ? "
                        "AND role <> 'summary'"
                    ),
                    (message_id, session_id),
                ).fetchall()
            ):
                raise NotFoundError(f"No message {message_id!r} in conversation {session_id!r}.")
            changed = conn.execute(
                self.dialect.sql("UPDATE sessions SET active_leaf = ? WHERE id = ? RETURNING id"),
                (message_id, session_id),
            ).fetchall()
        if not changed:
            raise NotFoundError(f"No conversation has the id {session_id!r}.")

    def select_branch(self, session_id: str, message_id: str) -> str | None:
        """Show the branch through `message_id` (a version the owner switched to): its
        newest continuation becomes the active branch. Returns the new leaf."""
        children = children_of(self.messages(session_id))
        leaf = newest_leaf(message_id, children)
        self.set_active_leaf(session_id, leaf)
        return leaf

    def mark_compacted(self, message_ids: Iterable[str], summary_id: str) -> None:
        with self.db.write() as conn:
            conn.execute(
                self.dialect.sql(
                    f"UPDATE messages SET compacted_by = ? WHERE {self.dialect.among('id')}"
                ),
                (summary_id, self.dialect.items(message_ids)),
            )

    def delete_messages_from(self, message_id: str) -> int:
        """Delete a message and everything said after it on its branches (a reply that
        failed before any text came). When the active branch went with it, the newest
        remaining branch from its parent becomes the active one."""
        dialect = self.dialect
        with self.db.write() as conn:
            rows = conn.execute(
                dialect.sql("SELECT session_id, parent_id FROM messages WHERE id = ?"),
                (message_id,),
            ).fetchall()
            if not rows:
                raise NotFoundError(f"No message has the id {message_id!r}.")
            session_id, parent_id = rows[0]
            leaf = conn.execute(
                dialect.sql(f"SELECT active_leaf FROM sessions WHERE id = ?{dialect.for_update}"),
                (session_id,),
            ).fetchall()
            deleted = conn.execute(
                dialect.sql(
                    "WITH RECURSIVE below (id) AS (SELECT CAST(? AS TEXT) UNION ALL "
                    "SELECT m.id FROM messages m JOIN below b "
                    "ON m.session_id = ? AND m.parent_id = b.id) "
                    "DELETE FROM messages WHERE id IN (SELECT id FROM below) RETURNING id"
                ),
                (message_id, session_id),
            ).fetchall()
            gone = {str(row[0]) for row in deleted}
            if leaf and leaf[0][0] in gone:
                children = children_of(self._all_messages(conn, session_id))
                conn.execute(
                    dialect.sql("UPDATE sessions SET active_leaf = ? WHERE id = ?"),
                    (newest_leaf(_id(parent_id), children), session_id),
                )
        return len(deleted)

    def import_conversation(self, session: Session, messages: Sequence[Message]) -> bool:
        """Write a conversation exactly as given (ids, times, every field of every message),
        in one transaction: what copying a store does. False, and nothing written, when a
        conversation with its id is already stored."""
        dialect = self.dialect
        with self.db.write() as conn:
            added = conn.execute(
                dialect.sql(
                    "INSERT INTO sessions (id, title, title_source, provider, model, created_at, "
                    "updated_at, deleted_at, instructions, active_leaf, branched) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (id) DO NOTHING RETURNING id"
                ),
                (
                    session.id,
                    session.title,
                    session.title_source,
                    session.provider,
                    session.model,
                    dialect.time_out(session.created_at),
                    dialect.time_out(session.updated_at),
                    dialect.time_out(session.deleted_at),
                    session.instructions,
                    session.active_leaf,
                    is_branched(messages),
                ),
            ).fetchall()
            if not added:
                return False
            self._insert_messages(conn, session.id, messages)
        return True

    def import_missing_messages(self, session: Session, messages: Sequence[Message]) -> int:
        """For a conversation stored already (copied before): write the messages of
        `messages` it lacks, exactly as given, and when any were, take `session`'s own
        fields (title, active branch, times) if it is the newer, in one transaction. How
        many messages were added. A store copied back after the conversation went on
        elsewhere gets the rest of it; messages already stored are left as they are."""
        dialect = self.dialect
        with self.db.write() as conn:
            stored = {
                str(row[0])
                for row in conn.execute(
                    dialect.sql("SELECT id FROM messages WHERE session_id = ?"), (session.id,)
                ).fetchall()
            }
            missing = [message for message in messages if message.id not in stored]
            if not missing:
                return 0
            self._insert_messages(conn, session.id, missing)
            conn.execute(
                dialect.sql(
                    "UPDATE sessions SET title = ?, title_source = ?, provider = ?, model = ?, "
                    "updated_at = ?, deleted_at = ?, instructions = ?, active_leaf = ?, "
                    "branched = ? WHERE id = ? AND updated_at <= ?"
                ),
                (
                    session.title,
                    session.title_source,
                    session.provider,
                    session.model,
                    dialect.time_out(session.updated_at),
                    dialect.time_out(session.deleted_at),
                    session.instructions,
                    session.active_leaf,
                    is_branched(messages),
                    session.id,
                    dialect.time_out(session.updated_at),
                ),
            )
        return len(missing)

    def take_forgets(
        self, session_id: str, messages: Sequence[Message], *, settle: bool = True
    ) -> int:
        """For a conversation stored already (copied before), `messages` its copy in another
        store: what forgets for good redacted there since (a memory's block line, its recall
        entry, a `remember` result and call) is redacted in the messages stored here too, so
        a copy back does not keep words forgotten on the other side. Words are only ever
        taken out (see `take_forgets` in forget.py). How many messages were rewritten.

        The storage is then rid of the old words (`settle_forgets`); a caller taking many
        conversations' forgets passes `settle=False` and settles once at the end (rebuilding
        a large file once per conversation would take minutes)."""
        theirs = {message.id: message for message in messages}
        # Looked at first without a write transaction: a copy passes every conversation it
        # finds there already, and almost none has anything to take.
        with self.db.read() as conn:
            if not self._forgets_to_take(conn, session_id, theirs):
                return 0
        with self._forgetting(), self.db.write() as conn:
            # Read again under the write: a forget made here meanwhile is kept.
            taken = self._forgets_to_take(conn, session_id, theirs)
            for message_id, copies in taken:
                columns = (copies.content, copies.tool_calls, copies.memory_block, copies.recall)
                conn.execute(
                    self.dialect.sql(
                        "UPDATE messages SET content = ?, tool_calls = ?, memory_block = ?, "
                        "recall = ? WHERE id = ?"
                    ),
                    (*columns, message_id),
                )
            if taken:
                self._forgets_taken(conn)
        if taken and settle:
            self.settle_forgets()
        return len(taken)

    def settle_forgets(self) -> None:
        """Rid the storage of the words that taking forgets left behind (see take_forgets)."""
        self._compact()

    def _forgets_to_take(
        self, conn: Any, session_id: str, theirs: dict[str, Message]
    ) -> builtins.list[tuple[str, MessageCopies]]:
        """The messages of `session_id` stored here that the other store's copies `theirs`
        have more redacted, each with its columns redacted so."""
        rows = conn.execute(
            self.dialect.sql(
                "SELECT id, role, content, tool_calls, memory_block, recall "
                "FROM messages WHERE session_id = ?"
            ),
            (session_id,),
        ).fetchall()
        taken: builtins.list[tuple[str, MessageCopies]] = []
        for message_id, role, content, tool_calls, memory_block, recall in rows:
            their = theirs.get(str(message_id))
            if their is None:
                continue
            ours = MessageCopies(str(content), tool_calls, memory_block, recall)
            redacted = take_forgets(
                str(role),
                ours,
                MessageCopies(
                    their.content,
                    _tool_calls_json(their.tool_calls),
                    their.memory_block,
                    _recall_json(their.recall),
                ),
            )
            if redacted != ours:
                taken.append((str(message_id), redacted))
        return taken

    def _forgetting(self) -> AbstractContextManager[Any]:
        """Held around rewriting messages without forgotten words (see take_forgets)."""
        return contextlib.nullcontext()

    def _forgets_taken(self, conn: Any) -> None:
        """Inside the transaction that took other forgets' redactions: the engine's upkeep."""

    def _compact(self) -> None:
        """After that transaction: rid the storage of the words the rewrite left behind."""

    def _insert_messages(self, conn: Any, session_id: str, messages: Sequence[Message]) -> None:
        """Write `messages` of conversation `session_id` as they are (inside the caller's
        transaction), parents first as given."""
        dialect = self.dialect
        dialect.executemany(
            conn,
            "INSERT INTO messages (id, session_id, role, content, tool_calls, "
            "tool_call_id, status, error, provider, model, input_tokens, output_tokens, "
            "cached_tokens, memory_block, recall, compacted_by, created_at, parent_id, "
            "reply_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    message.id,
                    session_id,
                    message.role.value,
                    message.content,
                    _tool_calls_json(message.tool_calls),
                    message.tool_call_id,
                    message.status.value,
                    message.error,
                    message.provider,
                    message.model,
                    message.input_tokens,
                    message.output_tokens,
                    message.cached_tokens,
                    message.memory_block,
                    _recall_json(message.recall),
                    message.compacted_by,
                    dialect.time_out(message.created_at),
                    message.parent_id,
                    message.reply_ms,
                )
                for message in messages
            ],
        )


class SessionRepository(BaseSessionRepository[Database]):
    """Conversations in the SQLite file; a conversation-list search reads its FTS5 index."""

    dialect = SQLITE

    def _forgetting(self) -> AbstractContextManager[Any]:
        return secure_deletion(self.db)

    def _forgets_taken(self, conn: Any) -> None:
        # The text index rewritten without the terms of the rewritten messages.
        conn.execute("INSERT INTO messages_fts (messages_fts) VALUES ('optimize')")

    def _compact(self) -> None:
        compact(self.db)  # as after a forget made here (it logs what it could not do)

    def _text_query(self, search: str) -> tuple[str, tuple[Any, ...]] | None:
        match = fts_query(search, operator="AND", prefix_last=True)
        if match is None:
            return None
        return (
            "SELECT m.session_id, m.id FROM messages_fts f JOIN messages m ON m.seq = f.rowid "
            "WHERE messages_fts MATCH ? AND m.role <> 'summary'",
            (match,),
        )
