"""Conversations and their messages, in the same database file as the memories."""

from __future__ import annotations

import builtins
import json
import logging
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from timothy.errors import InvalidInputError, NotFoundError
from timothy.store.db import Database
from timothy.store.ids import could_be_stored, new_id
from timothy.store.records import (
    Message,
    MessageRole,
    MessageStatus,
    RecallRecord,
    Session,
    StoredToolCall,
    format_time,
    parse_time,
    utc_now,
)
from timothy.text import fts_query

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


def _id(value: Any) -> str | None:
    return None if value is None else str(value)


def _time(value: Any) -> datetime | None:
    return None if value is None else parse_time(str(value))


def _session(row: Sequence[Any]) -> Session:
    return Session(
        id=str(row[0]),
        title=str(row[1]),
        title_source=str(row[2]),
        provider=row[3],
        model=row[4],
        created_at=parse_time(str(row[5])),
        updated_at=parse_time(str(row[6])),
        deleted_at=_time(row[7]),
        instructions=str(row[8] or ""),
        active_leaf=row[9],
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
        created_at=parse_time(str(row[4])),
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
        parent_id=row[17],
        reply_ms=row[18],
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


def _matching(conn: Any, match: str) -> set[str]:
    """The conversations whose active branch holds a message matching the full-text query
    `match`. A one-branch conversation shows all its messages; for the others the active
    branch is walked here, their messages' parents read together (by conversation, so from
    neighbouring pages). Summaries are the model's shorthand for turns shown anyway; they do
    not count."""
    hits: dict[str, set[str]] = {}
    for session_id, message_id in conn.execute(
        "SELECT m.session_id, m.id FROM messages_fts f JOIN messages m ON m.seq = f.rowid "
        "WHERE messages_fts MATCH ? AND m.role <> 'summary'",
        (match,),
    ).fetchall():
        hits.setdefault(str(session_id), set()).add(str(message_id))
    if not hits:
        return set()
    branched = {
        str(row[0]): _id(row[1])
        for row in conn.execute("SELECT id, active_leaf FROM sessions WHERE branched").fetchall()
    }
    found = {session_id for session_id in hits if session_id not in branched}
    walk = sorted(session_id for session_id in hits if session_id in branched)
    if not walk:
        return found
    parents: dict[str, dict[str, str | None]] = {}
    for session_id, message_id, parent_id in conn.execute(
        "SELECT session_id, id, parent_id FROM messages "
        "WHERE session_id IN (SELECT value FROM json_each(?)) AND role <> 'summary'",
        (json.dumps(walk),),
    ).fetchall():
        parents.setdefault(str(session_id), {})[str(message_id)] = _id(parent_id)
    for session_id in walk:
        up = parents.get(session_id, {})
        wanted = hits[session_id]
        current = branched[session_id]
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


class SessionRepository:
    """Sessions newest first; messages in the order they were said."""

    def __init__(self, db: Database) -> None:
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
                "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    session.id,
                    session.title,
                    session.title_source,
                    provider,
                    model,
                    format_time(moment),
                    format_time(moment),
                ),
            )
        return session

    def get(self, session_id: str) -> Session:
        if not could_be_stored(session_id):
            raise NotFoundError(f"No conversation has the id {session_id!r}.")
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions s WHERE s.id = ?", (session_id,)
            ).fetchall()
        if not rows:
            raise NotFoundError(f"No conversation has the id {session_id!r}.")
        return _session(rows[0])

    def list(
        self, *, search: str | None = None, include_deleted: bool = False, limit: int | None = None
    ) -> builtins.list[Session]:
        """Conversations, most recently active first; `search` looks in titles and in the
        messages of their active branches."""
        where = [] if include_deleted else ["s.deleted_at IS NULL"]
        params: list[Any] = []
        match = None
        if search is not None and search.strip():
            clauses = ["instr(lower(s.title), lower(?)) > 0"]
            params.append(search.strip())
            match = fts_query(search, operator="AND", prefix_last=True)
            if match is not None:
                # Only what the owner sees counts: words on an earlier branch (an edited
                # message, an older reply version) do not make a conversation match. A
                # one-branch conversation shows every message; the others are checked.
                clauses.append("s.id IN (SELECT value FROM json_each(?))")
            where.append("(" + " OR ".join(clauses) + ")")
        sql = f"SELECT {_SESSION_COLUMNS} FROM sessions s"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY s.updated_at DESC, s.seq DESC LIMIT ?"
        with self.db.read() as conn:
            if match is not None:
                params.append(json.dumps(sorted(_matching(conn, match))))
            params.append(-1 if limit is None else int(limit))
            return [_session(row) for row in conn.execute(sql, params).fetchall()]

    def set_title(self, session_id: str, title: str, *, source: str = "owner") -> Session:
        if source not in ("fallback", "auto", "owner"):
            raise InvalidInputError(f"Unknown title source {source!r}.")
        cleaned = clean_title(title)
        if not cleaned:
            raise InvalidInputError("A conversation's title cannot be empty.")
        with self.db.write() as conn:
            changed = conn.execute(
                "UPDATE sessions SET title = ?, title_source = ? WHERE id = ? RETURNING id",
                (cleaned, source, session_id),
            ).fetchall()
        if not changed:
            raise NotFoundError(f"No conversation has the id {session_id!r}.")
        return self.get(session_id)

    def set_model(self, session_id: str, provider: str | None, model: str | None) -> None:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE sessions SET provider = ?, model = ? WHERE id = ?",
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
        with self.db.write() as conn:
            changed = conn.execute(
                "UPDATE sessions SET instructions = ? WHERE id = ? RETURNING id",
                (text, session_id),
            ).fetchall()
        if not changed:
            raise NotFoundError(f"No conversation has the id {session_id!r}.")
        return self.get(session_id)

    def delete(self, session_id: str, *, now: datetime | None = None) -> Session:
        """Move a conversation to the bin (undoable with `restore`)."""
        with self.db.write() as conn:
            changed = conn.execute(
                "UPDATE sessions SET deleted_at = ? WHERE id = ? RETURNING id",
                (format_time(now or utc_now()), session_id),
            ).fetchall()
        if not changed:
            raise NotFoundError(f"No conversation has the id {session_id!r}.")
        return self.get(session_id)

    def restore(self, session_id: str) -> Session:
        with self.db.write() as conn:
            changed = conn.execute(
                "UPDATE sessions SET deleted_at = NULL WHERE id = ? RETURNING id", (session_id,)
            ).fetchall()
        if not changed:
            raise NotFoundError(f"No conversation has the id {session_id!r}.")
        return self.get(session_id)

    def erase(self, session_id: str) -> None:
        """Delete a conversation and its messages for good, now (a temporary chat closed)."""
        with self.db.write() as conn:
            conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))

    def purge_deleted(self, *, before: datetime) -> int:
        """Delete for good the conversations binned before `before` (with their messages)."""
        with self.db.write() as conn:
            rows = conn.execute(
                "DELETE FROM sessions WHERE deleted_at IS NOT NULL AND deleted_at < ? RETURNING id",
                (format_time(before),),
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
        with self.db.write() as conn:
            changed = conn.execute(
                "UPDATE sessions SET updated_at = max(updated_at, ?) WHERE id = ? "
                "RETURNING active_leaf",
                (format_time(moment), session_id),
            ).fetchall()
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
                        "SELECT 1 FROM messages WHERE id = ? AND session_id = ?",
                        (parent, session_id),
                    ).fetchall()
                ):
                    raise NotFoundError(f"No message {parent!r} in conversation {session_id!r}.")
            message = replace(message, parent_id=parent)
            if (
                role is not MessageRole.SUMMARY
                and conn.execute(
                    "SELECT 1 FROM messages WHERE session_id = ? AND parent_id IS ? "
                    "AND role <> 'summary' LIMIT 1",
                    (session_id, parent),
                ).fetchall()
            ):
                # a second message after the same one: an edit or another reply version
                conn.execute("UPDATE sessions SET branched = 1 WHERE id = ?", (session_id,))
            conn.execute(
                "INSERT INTO messages (id, session_id, role, content, status, tool_calls, "
                "tool_call_id, provider, model, created_at, parent_id) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                    format_time(moment),
                    parent,
                ),
            )
            if role is not MessageRole.SUMMARY:
                conn.execute(
                    "UPDATE sessions SET active_leaf = ? WHERE id = ?", (message.id, session_id)
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
            calls = [c.to_json() for c in tool_calls]
            changes["tool_calls"] = json.dumps(calls) if calls else None
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
            changes["recall"] = (
                None if recall is None else json.dumps(recall.to_json(), ensure_ascii=False)
            )
        if changes:
            assignments = ", ".join(f"{name} = ?" for name in changes)
            with self.db.write() as conn:
                changed = conn.execute(
                    f"UPDATE messages SET {assignments} WHERE id = ? RETURNING id",
                    (*changes.values(), message_id),
                ).fetchall()
            if not changed:
                raise NotFoundError(f"No message has the id {message_id!r}.")
        return self.message(message_id)

    def message(self, message_id: str) -> Message:
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {_MESSAGE_COLUMNS} FROM messages m WHERE m.id = ?", (message_id,)
            ).fetchall()
        if not rows:
            raise NotFoundError(f"No message has the id {message_id!r}.")
        return _message(rows[0])

    def messages(
        self, session_id: str, *, include_compacted: bool = True
    ) -> builtins.list[Message]:
        """Every message of the conversation, of every branch, in the order they were said."""
        sql = f"SELECT {_MESSAGE_COLUMNS} FROM messages m WHERE m.session_id = ?"
        if not include_compacted:
            sql += " AND m.compacted_by IS NULL"
        sql += " ORDER BY m.seq"
        with self.db.read() as conn:
            return [_message(row) for row in conn.execute(sql, (session_id,)).fetchall()]

    def branch(self, session_id: str, *, include_compacted: bool = True) -> builtins.list[Message]:
        """The active branch: what the owner sees and the model is sent, with the
        compaction summaries that apply to it (see `branch_of`)."""
        with self.db.read() as conn:
            leaf = conn.execute(
                "SELECT active_leaf FROM sessions WHERE id = ?", (session_id,)
            ).fetchall()
            if not leaf:
                raise NotFoundError(f"No conversation has the id {session_id!r}.")
            rows = conn.execute(
                f"SELECT {_MESSAGE_COLUMNS} FROM messages m WHERE m.session_id = ? ORDER BY m.seq",
                (session_id,),
            ).fetchall()
        messages = [_message(row) for row in rows]
        return branch_of(messages, _id(leaf[0][0]), include_compacted=include_compacted)

    def set_active_leaf(self, session_id: str, message_id: str | None) -> None:
        """Make the branch ending at `message_id` the active one."""
        with self.db.write() as conn:
            if (
                message_id is not None
                and not conn.execute(
                    "SELECT 1 FROM messages WHERE id = ? AND session_id = ? AND role <> 'summary'",
                    (message_id, session_id),
                ).fetchall()
            ):
                raise NotFoundError(f"No message {message_id!r} in conversation {session_id!r}.")
            changed = conn.execute(
                "UPDATE sessions SET active_leaf = ? WHERE id = ? RETURNING id",
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
                "UPDATE messages SET compacted_by = ? WHERE id IN (SELECT value FROM json_each(?))",
                (summary_id, json.dumps(list(message_ids))),
            )

    def delete_messages_from(self, message_id: str) -> int:
        """Delete a message and everything said after it on its branches (a reply that
        failed before any text came). When the active branch went with it, the newest
        remaining branch from its parent becomes the active one."""
        with self.db.write() as conn:
            rows = conn.execute(
                "SELECT session_id, parent_id FROM messages WHERE id = ?", (message_id,)
            ).fetchall()
            if not rows:
                raise NotFoundError(f"No message has the id {message_id!r}.")
            session_id, parent_id = rows[0]
            deleted = conn.execute(
                "WITH RECURSIVE below (id) AS (SELECT ? UNION ALL "
                "SELECT m.id FROM messages m JOIN below b "
                "ON m.session_id = ? AND m.parent_id = b.id) "
                "DELETE FROM messages WHERE id IN (SELECT id FROM below) RETURNING id",
                (message_id, session_id),
            ).fetchall()
            gone = {str(row[0]) for row in deleted}
            leaf = conn.execute(
                "SELECT active_leaf FROM sessions WHERE id = ?", (session_id,)
            ).fetchall()
            if leaf and leaf[0][0] in gone:
                rows = conn.execute(
                    f"SELECT {_MESSAGE_COLUMNS} FROM messages m WHERE m.session_id = ? "
                    "ORDER BY m.seq",
                    (session_id,),
                ).fetchall()
                children = children_of([_message(row) for row in rows])
                conn.execute(
                    "UPDATE sessions SET active_leaf = ? WHERE id = ?",
                    (newest_leaf(_id(parent_id), children), session_id),
                )
        return len(deleted)

    def import_conversation(self, session: Session, messages: Sequence[Message]) -> bool:
        """Write a conversation exactly as given (ids, times, every field of every message),
        in one transaction: what copying a store does. False, and nothing written, when a
        conversation with its id is already stored."""
        with self.db.write() as conn:
            added = conn.execute(
                "INSERT INTO sessions (id, title, title_source, provider, model, created_at, "
                "updated_at, deleted_at, instructions, active_leaf, branched) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (id) DO NOTHING RETURNING id",
                (
                    session.id,
                    session.title,
                    session.title_source,
                    session.provider,
                    session.model,
                    format_time(session.created_at),
                    format_time(session.updated_at),
                    None if session.deleted_at is None else format_time(session.deleted_at),
                    session.instructions,
                    session.active_leaf,
                    int(is_branched(messages)),
                ),
            ).fetchall()
            if not added:
                return False
            for message in messages:
                conn.execute(
                    "INSERT INTO messages (id, session_id, role, content, tool_calls, "
                    "tool_call_id, status, error, provider, model, input_tokens, output_tokens, "
                    "cached_tokens, memory_block, recall, compacted_by, created_at, parent_id, "
                    "reply_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                        format_time(message.created_at),
                        message.parent_id,
                        message.reply_ms,
                    ),
                )
        return True
