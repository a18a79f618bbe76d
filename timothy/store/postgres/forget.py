"""Forgetting for good on the shared server: the same removal and redaction as
`timothy.store.forget` (the row, entities, vectors of every model, decay record, and the
memory's words in past turns, tool messages and stored reports), in one transaction.

What PostgreSQL keeps of deleted rows until VACUUM reclaims them is the server's business:
a plain VACUUM of the touched tables runs afterwards (outside the transaction), and the
report says whether it could (`compacted`). The server's own backups and WAL archive still
hold the text; that is for the server's admin.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from typing import Any

import psycopg

from timothy.errors import InvalidInputError, NotFoundError, StoreError
from timothy.store.forget import (
    ErasedCopies,
    ForgetReport,
    Redaction,
    redact_recalled,
    replace_lines,
)
from timothy.store.postgres.database import PgDatabase
from timothy.store.postgres.rows import COLUMNS, VERSIONS, Conn, rows_to_memories
from timothy.store.records import Memory

log = logging.getLogger(__name__)


def forget(
    db: PgDatabase,
    notify: Callable[[str, Memory], None],
    ids: list[str],
    chain: bool,
    redaction: Redaction | None,
) -> ForgetReport:
    if not ids:
        raise InvalidInputError("Name at least one memory to forget.")
    redaction = redaction or Redaction()
    with db.write() as conn:
        wanted: list[str] = []
        chains = 0
        for memory_id in ids:
            if (
                conn.execute("SELECT 1 FROM memories WHERE id = %s", (memory_id,)).fetchone()
                is None
            ):
                raise NotFoundError(f"No memory has the id {memory_id!r}.")
            if not chain:
                wanted.append(memory_id)
                continue
            versions = [
                str(row[0])
                for row in conn.execute(f"{VERSIONS} SELECT id FROM versions", {"id": memory_id})
            ]
            if len(versions) > 1 and not set(versions) <= set(wanted):
                chains += 1
            wanted += versions
        rows = conn.execute(
            f"SELECT {COLUMNS} FROM memories m WHERE m.id = ANY(%s) "
            "ORDER BY m.created_at, m.seq FOR UPDATE",
            (list(dict.fromkeys(wanted)),),
        ).fetchall()
        memories = rows_to_memories(conn, rows)
        forgotten = {memory.id: memory for memory in memories}
        seqs = [int(row[0]) for row in rows]
        turns = _redact_turns(conn, forgotten, redaction)
        tools = _redact_tool_messages(conn, forgotten, redaction)
        meta = _redact_meta(conn, forgotten, redaction)
        relinked = _relink(conn, forgotten)
        vectors = 0
        for (model_id,) in conn.execute("SELECT id FROM embedding_models ORDER BY id").fetchall():
            gone = conn.execute(
                f"DELETE FROM vec_model_{int(model_id)} WHERE memory_seq = ANY(%s) "
                "RETURNING memory_seq",
                (seqs,),
            ).fetchall()
            vectors += len(gone)
        conn.execute("DELETE FROM memories WHERE seq = ANY(%s)", (seqs,))
    report = ForgetReport(
        forgotten=tuple(forgotten),
        chains=chains,
        erased=ErasedCopies(
            relinked=tuple(relinked),
            turns_redacted=turns,
            tool_messages_redacted=tools,
            meta_redacted=tuple(meta),
            vectors_removed=vectors,
        ),
        compacted=_vacuum(db),
    )
    log.info("forgot %d memories (%d chains)", report.count, chains)
    for memory in memories:
        notify("forgotten", memory)
    return report


def _vacuum(db: PgDatabase) -> bool:
    """VACUUM the tables that held the words (it cannot run inside a transaction)."""
    if db.in_transaction:
        return False
    try:
        with db.read() as conn:
            for table in ("memories", "memory_entities", "messages", "meta"):
                conn.execute(f"VACUUM {table}")
    except (StoreError, psycopg.Error) as exc:
        log.warning("could not vacuum after forgetting: %s", exc)
        return False
    return True


def _redact_turns(conn: Conn, forgotten: Mapping[str, Memory], redaction: Redaction) -> int:
    lines = [redaction.block_line(memory) for memory in forgotten.values()]
    candidates: set[int] = set()
    for memory_id in forgotten:
        candidates.update(
            int(row[0])
            for row in conn.execute(
                "SELECT seq FROM messages WHERE strpos(recall, %s) > 0", (memory_id,)
            )
        )
    for old, _ in lines:
        if old:
            candidates.update(
                int(row[0])
                for row in conn.execute(
                    "SELECT seq FROM messages WHERE strpos(memory_block, %s) > 0", (old,)
                )
            )
    redacted = 0
    for seq in sorted(candidates):
        found = conn.execute(
            "SELECT memory_block, recall FROM messages WHERE seq = %s", (seq,)
        ).fetchone()
        assert found is not None
        block, recall = found
        new_block = None if block is None else replace_lines(str(block), lines)
        new_recall = recall
        if recall is not None:
            try:
                data = json.loads(str(recall))
            except ValueError:
                data = None
            if isinstance(data, dict):
                changed = False
                for key in ("items", "ranked", "below_floor"):
                    for entry in data.get(key) or ():
                        changed = redact_recalled(entry, forgotten) or changed
                if isinstance(data.get("block"), str):
                    record_block = replace_lines(data["block"], lines)
                    changed = changed or record_block != data["block"]
                    data["block"] = record_block
                if changed:
                    new_recall = json.dumps(data, ensure_ascii=False)
            else:
                new_recall = None
        if new_block != block or new_recall != recall:
            conn.execute(
                "UPDATE messages SET memory_block = %s, recall = %s WHERE seq = %s",
                (new_block, new_recall, seq),
            )
            redacted += 1
    return redacted


def _redact_tool_messages(conn: Conn, forgotten: Mapping[str, Memory], redaction: Redaction) -> int:
    if redaction.tool_result is None:
        return 0
    found: dict[int, tuple[str, str | None, str]] = {}
    for memory_id in forgotten:
        for seq, session_id, call_id, content in conn.execute(
            "SELECT seq, session_id, tool_call_id, content FROM messages "
            "WHERE role = 'tool' AND strpos(content, %s) > 0",
            (memory_id,),
        ):
            found[int(seq)] = (str(session_id), call_id, str(content))
    redacted = 0
    calls: dict[str, set[str]] = {}
    for seq, (session_id, call_id, content) in sorted(found.items()):
        new = redaction.tool_result(content, forgotten)
        if new is None or new == content:
            continue
        conn.execute("UPDATE messages SET content = %s WHERE seq = %s", (new, seq))
        redacted += 1
        if call_id is not None:
            calls.setdefault(session_id, set()).add(str(call_id))
    if redaction.tool_call is None:
        return redacted
    for session_id, call_ids in calls.items():
        for seq, stored in conn.execute(
            "SELECT seq, tool_calls FROM messages WHERE session_id = %s AND role = 'assistant' "
            "AND tool_calls IS NOT NULL",
            (session_id,),
        ).fetchall():
            try:
                tool_calls: Any = json.loads(str(stored))
            except ValueError:
                continue
            changed = False
            for call in tool_calls if isinstance(tool_calls, list) else ():
                if isinstance(call, dict) and call.get("id") in call_ids:
                    arguments = redaction.tool_call(str(call.get("name")), str(call["arguments"]))
                    if arguments != call["arguments"]:
                        call["arguments"] = arguments
                        changed = True
            if changed:
                conn.execute(
                    "UPDATE messages SET tool_calls = %s WHERE seq = %s",
                    (json.dumps(tool_calls), seq),
                )
                redacted += 1
    return redacted


def _redact_meta(conn: Conn, forgotten: Mapping[str, Memory], redaction: Redaction) -> list[str]:
    redacted = []
    for key, redact in redaction.meta.items():
        row = conn.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
        if row is None:
            continue
        new = redact(str(row[0]), forgotten)
        if new is not None and new != row[0]:
            conn.execute("UPDATE meta SET value = %s WHERE key = %s", (new, key))
            redacted.append(key)
    return redacted


def _relink(conn: Conn, forgotten: Mapping[str, Memory]) -> list[str]:
    def past(memory_id: str | None, step: Callable[[Memory], str | None]) -> str | None:
        seen: set[str] = set()
        while memory_id is not None and memory_id in forgotten and memory_id not in seen:
            seen.add(memory_id)
            memory_id = step(forgotten[memory_id])
        return None if memory_id in forgotten else memory_id

    relinked: set[str] = set()
    for memory_id, memory in forgotten.items():
        newer = past(memory.superseded_by, lambda m: m.superseded_by)
        older = past(memory.supersedes, lambda m: m.supersedes)
        for (survivor,) in conn.execute(
            "UPDATE memories SET superseded_by = %s WHERE superseded_by = %s RETURNING id",
            (newer, memory_id),
        ).fetchall():
            relinked.add(str(survivor))
        for (survivor,) in conn.execute(
            "UPDATE memories SET supersedes = %s WHERE supersedes = %s RETURNING id",
            (older, memory_id),
        ).fetchall():
            relinked.add(str(survivor))
    return sorted(relinked - set(forgotten))
