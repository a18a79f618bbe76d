"""Forgetting for good: a memory (or its whole version chain) and every copy of its text.

Rejecting keeps a refused fact so it is not proposed again; forgetting removes it: the row,
its entities, text index rows, vectors (every model), decay record, and its words wherever the
store copied them: the memory blocks and recall records kept with past turns, `remember` tool
results and the tool calls that carried it, and stored reports (the meta values whose owners
say how to redact them). A past turn's block keeps its shape; the memory's line says
FORGOTTEN instead.

Deleted rows leave their bytes behind in SQLite's pages, in FTS5's index segments, in vec0's
chunk blobs and in the write-ahead log, and every earlier update of a row left its former
bytes in free space. So the forget transaction runs with `secure_delete` on (what it frees
is overwritten with zeros), vectors are overwritten with zeros before their rows go, the
full-text indexes are optimised (rewritten without the deleted terms), and afterwards the
file is rebuilt from its live content (VACUUM: rowids are kept, which the vector tables and
their in-memory copy rely on) and the WAL checkpointed and truncated. Older backups are files
of their own and still hold the text.

The finding and redacting of copies, and relinking chains, is one implementation for both
engines (in the engine's `Dialect`); what removing rows leaves behind is each engine's own:
here the file's, on the server `postgres/forget.py`.

The store does not render blocks or know the shape of other packages' JSON: the caller
passes a `Redaction` saying what a memory's rendered line looks like and how a tool result,
a tool call and a meta value are redacted (`timothy.memory.forget` builds the one the app and
the CLI use).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import apsw

from timothy.errors import StoreError
from timothy.store.db import Database, scalar
from timothy.store.dialect import Dialect
from timothy.store.records import Memory, MemorySource, MemoryStatus, MemoryType

log = logging.getLogger(__name__)

FORGOTTEN = "[forgotten]"
# The time in a `gone_record`, which has none of its own.
_GONE_TIME = datetime(1970, 1, 1, tzinfo=UTC)

# (the line as rendered in a block, the line put in its place)
BlockLine = Callable[[Memory], tuple[str, str]]
# A tool message's content -> its redacted content, or None when it names none of them.
ToolResultRedaction = Callable[[str, Mapping[str, Memory]], str | None]
# (tool name, arguments JSON) of the call whose result named a forgotten memory -> arguments.
ToolCallRedaction = Callable[[str, str], str]
# A meta value -> its redacted value, or None when it holds none of them.
MetaRedaction = Callable[[str, Mapping[str, Memory]], str | None]


def _no_block_line(memory: Memory) -> tuple[str, str]:
    return ("", "")


@dataclass(frozen=True, slots=True)
class Redaction:
    """How copies of a memory's text that other packages wrote are found and redacted."""

    block_line: BlockLine = _no_block_line
    tool_result: ToolResultRedaction | None = None
    tool_call: ToolCallRedaction | None = None
    meta: Mapping[str, MetaRedaction] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ErasedCopies:
    """What erasing some memories touched besides their own rows."""

    relinked: tuple[str, ...]  # surviving versions whose chain links now skip the gap
    turns_redacted: int  # past turns whose memory block or recall record named one of them
    tool_messages_redacted: int  # `remember` results and the calls that carried the text
    meta_redacted: tuple[str, ...]  # stored reports (meta keys) that quoted one of them
    vectors_removed: int  # across every embedding model


# What a forget found done already touched (an earlier request of it landed unseen).
NOTHING_ERASED = ErasedCopies(
    relinked=(), turns_redacted=0, tool_messages_redacted=0, meta_redacted=(), vectors_removed=0
)


def gone_record(memory_id: str) -> Memory:
    """What a listener hears for a memory found forgotten when its record is not at hand (a
    forget whose reply was lost): its id, which is what a window needs, and no words."""
    return Memory(
        id=memory_id,
        type=MemoryType.SEMANTIC,
        content="",
        status=MemoryStatus.ACTIVE,
        confidence=0.0,
        source=MemorySource.MANUAL,
        session_id=None,
        supersedes=None,
        superseded_by=None,
        created_at=_GONE_TIME,
        last_confirmed_at=None,
        last_retrieved_at=None,
    )


@dataclass(frozen=True, slots=True)
class ForgetReport:
    """What one forget removed and redacted."""

    forgotten: tuple[str, ...]  # the memories removed, oldest first
    chains: int  # version chains of more than one memory removed whole
    erased: ErasedCopies
    compacted: bool  # False: the file could not be rebuilt or its WAL truncated (see compact)

    @property
    def count(self) -> int:
        return len(self.forgotten)

    def to_json(self) -> dict[str, Any]:
        return {
            "forgotten": list(self.forgotten),
            "chains": self.chains,
            "relinked": list(self.erased.relinked),
            "turns_redacted": self.erased.turns_redacted,
            "tool_messages_redacted": self.erased.tool_messages_redacted,
            "meta_redacted": list(self.erased.meta_redacted),
            "vectors_removed": self.erased.vectors_removed,
            "compacted": self.compacted,
        }


def replace_lines(text: str, lines: Sequence[tuple[str, str]]) -> str:
    """Every whole line `old` of a block (it follows a line break) replaced by `new`."""
    for old, new in lines:
        if old:
            text = text.replace("\n" + old, "\n" + new)
    return text


def redact_recalled(entry: Any, forgotten: Container[str]) -> bool:
    """A recall record's entry for a forgotten memory keeps its place and scores; its words
    go, and so do its floor verdicts (a text verdict names the words it matched)."""
    if isinstance(entry, dict) and entry.get("id") in forgotten:
        entry["content"] = FORGOTTEN
        entry["entities"] = []
        if "floors" in entry:
            entry["floors"] = {}
        if "reason" in entry:
            entry["reason"] = FORGOTTEN
        return True
    return False


# The keys of a recall record that list memories (each entry with its id and words).
_RECALL_LISTS = ("items", "ranked", "below_floor", "faded")


@dataclass(frozen=True, slots=True)
class MessageCopies:
    """The columns of a stored message that a forget rewrites, as stored (JSON as text)."""

    content: str
    tool_calls: str | None
    memory_block: str | None
    recall: str | None


def take_forgets(role: str, ours: MessageCopies, theirs: MessageCopies) -> MessageCopies:
    """The message `ours` with what forgets redacted in another store's copy of it (`theirs`:
    the same message, copied between stores before) redacted here too: a block line, a
    recall entry (by its memory id), a `remember` result or its call's arguments that say
    FORGOTTEN there and not here take theirs. Only words are ever taken out: nothing else of
    theirs replaces ours (a forget made here and not there stays made)."""
    content = ours.content
    if role == "tool" and _newly_forgotten(ours.content, theirs.content):
        content = theirs.content  # a `remember` result names one memory
    return MessageCopies(
        content=content,
        tool_calls=_calls_forgotten(ours.tool_calls, theirs.tool_calls),
        memory_block=_lines_forgotten(ours.memory_block, theirs.memory_block),
        recall=_recall_forgotten(ours.recall, theirs.recall),
    )


def _newly_forgotten(ours: str, theirs: str) -> bool:
    return ours != theirs and FORGOTTEN in theirs and FORGOTTEN not in ours


def _lines_forgotten(ours: str | None, theirs: str | None) -> str | None:
    """A block whose lines theirs redacted, redacted (both of one shape: one line each)."""
    if ours is None or theirs is None:
        return ours
    mine, other = ours.splitlines(keepends=True), theirs.splitlines(keepends=True)
    if len(mine) != len(other):
        return ours
    return "".join(
        line if not _newly_forgotten(line, their) else their
        for line, their in zip(mine, other, strict=True)
    )


def _calls_forgotten(ours: str | None, theirs: str | None) -> str | None:
    """Tool calls whose arguments theirs redacted (by call id), redacted."""
    calls, other = _json(ours), _json(theirs)
    if not isinstance(calls, list) or not isinstance(other, list):
        return ours
    redacted = {
        str(call.get("id")): call.get("arguments")
        for call in other
        if isinstance(call, dict) and isinstance(call.get("arguments"), str)
    }
    changed = False
    for call in calls:
        if not isinstance(call, dict) or not isinstance(call.get("arguments"), str):
            continue
        their = redacted.get(str(call.get("id")))
        if their is not None and _newly_forgotten(call["arguments"], their):
            call["arguments"] = their
            changed = True
    return json.dumps(calls) if changed else ours


def _recall_forgotten(ours: str | None, theirs: str | None) -> str | None:
    """A recall record whose entries (and block lines) theirs redacted, redacted."""
    data, other = _json(ours), _json(theirs)
    if not isinstance(data, dict) or not isinstance(other, dict):
        return ours
    gone = {
        str(entry.get("id"))
        for key in _RECALL_LISTS
        for entry in other.get(key) or ()
        if isinstance(entry, dict) and entry.get("content") == FORGOTTEN
    }
    changed = False
    for key in _RECALL_LISTS:
        for entry in data.get(key) or ():
            if isinstance(entry, dict) and entry.get("content") != FORGOTTEN:
                changed = redact_recalled(entry, gone) or changed
    if isinstance(data.get("block"), str) and isinstance(other.get("block"), str):
        block = _lines_forgotten(data["block"], other["block"])
        changed = changed or block != data["block"]
        data["block"] = block
    return json.dumps(data, ensure_ascii=False) if changed else ours


def _json(text: str | None) -> Any:
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _redact_turns(
    conn: Any, dialect: Dialect, forgotten: Mapping[str, Memory], redaction: Redaction
) -> int:
    """Past turns' memory blocks and recall records: the line and the entries redacted."""
    lines = [redaction.block_line(memory) for memory in forgotten.values()]
    candidates: set[int] = set()
    for memory_id in forgotten:
        candidates.update(
            int(row[0])
            for row in conn.execute(
                dialect.sql(f"SELECT seq FROM messages WHERE {dialect.instr}(recall, ?) > 0"),
                (memory_id,),
            )
        )
    for old, _ in lines:
        if old:
            candidates.update(
                int(row[0])
                for row in conn.execute(
                    dialect.sql(
                        f"SELECT seq FROM messages WHERE {dialect.instr}(memory_block, ?) > 0"
                    ),
                    (old,),
                )
            )
    redacted = 0
    for seq in sorted(candidates):
        block, recall = conn.execute(
            dialect.sql("SELECT memory_block, recall FROM messages WHERE seq = ?"), (seq,)
        ).fetchall()[0]
        new_block = None if block is None else replace_lines(str(block), lines)
        new_recall = recall
        if recall is not None:
            try:
                data = json.loads(str(recall))
            except ValueError:
                data = None
            if isinstance(data, dict):
                changed = False
                for key in ("items", "ranked", "below_floor", "faded"):
                    for entry in data.get(key) or ():
                        changed = redact_recalled(entry, forgotten) or changed
                if isinstance(data.get("block"), str):
                    record_block = replace_lines(data["block"], lines)
                    changed = changed or record_block != data["block"]
                    data["block"] = record_block
                if changed:
                    new_recall = json.dumps(data, ensure_ascii=False)
            else:  # a record that no longer reads: it cannot be redacted, so it goes
                new_recall = None
        if new_block != block or new_recall != recall:
            conn.execute(
                dialect.sql("UPDATE messages SET memory_block = ?, recall = ? WHERE seq = ?"),
                (new_block, new_recall, seq),
            )
            redacted += 1
    return redacted


def _redact_tool_messages(
    conn: Any, dialect: Dialect, forgotten: Mapping[str, Memory], redaction: Redaction
) -> int:
    """Tool results that name a forgotten memory, and the tool calls they answer."""
    if redaction.tool_result is None:
        return 0
    found: dict[int, tuple[str, str | None, str]] = {}
    for memory_id in forgotten:
        for seq, session_id, call_id, content in conn.execute(
            dialect.sql(
                "SELECT seq, session_id, tool_call_id, content FROM messages "
                f"WHERE role = 'tool' AND {dialect.instr}(content, ?) > 0"
            ),
            (memory_id,),
        ):
            found[int(seq)] = (str(session_id), call_id, str(content))
    redacted = 0
    calls: dict[str, set[str]] = {}  # session -> the tool call ids to redact
    for seq, (session_id, call_id, content) in sorted(found.items()):
        new = redaction.tool_result(content, forgotten)
        if new is None or new == content:
            continue
        conn.execute(dialect.sql("UPDATE messages SET content = ? WHERE seq = ?"), (new, seq))
        redacted += 1
        if call_id is not None:
            calls.setdefault(session_id, set()).add(str(call_id))
    if redaction.tool_call is None:
        return redacted
    for session_id, call_ids in calls.items():
        for seq, stored in conn.execute(
            dialect.sql(
                "SELECT seq, tool_calls FROM messages WHERE session_id = ? "
                "AND role = 'assistant' AND tool_calls IS NOT NULL"
            ),
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
                    dialect.sql("UPDATE messages SET tool_calls = ? WHERE seq = ?"),
                    (json.dumps(tool_calls), seq),
                )
                redacted += 1
    return redacted


def _redact_meta(
    conn: Any, dialect: Dialect, forgotten: Mapping[str, Memory], redaction: Redaction
) -> list[str]:
    redacted = []
    for key, redact in redaction.meta.items():
        rows = conn.execute(dialect.sql("SELECT value FROM meta WHERE key = ?"), (key,)).fetchall()
        if not rows:
            continue
        value = str(rows[0][0])
        new = redact(value, forgotten)
        if new is not None and new != value:
            conn.execute(dialect.sql("UPDATE meta SET value = ? WHERE key = ?"), (new, key))
            redacted.append(key)
    return redacted


def _relink(conn: Any, dialect: Dialect, forgotten: Mapping[str, Memory]) -> list[str]:
    """Chain links from surviving versions to forgotten ones skip over them: an older
    version points at the next surviving newer one (or at nothing when the newest went),
    a newer one at the previous survivor. The chain reads whole, minus the gap."""

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
            dialect.sql(
                "UPDATE memories SET superseded_by = ? WHERE superseded_by = ? RETURNING id"
            ),
            (newer, memory_id),
        ).fetchall():
            relinked.add(str(survivor))
        for (survivor,) in conn.execute(
            dialect.sql("UPDATE memories SET supersedes = ? WHERE supersedes = ? RETURNING id"),
            (older, memory_id),
        ).fetchall():
            relinked.add(str(survivor))
    return sorted(relinked - set(forgotten))


def _remove_vectors(conn: apsw.Connection, seqs: Sequence[int]) -> int:
    """Each vector overwritten with zeros, then deleted, in every model's table: vec0 keeps
    a deleted row's slot in its chunk blob (sqlite-vec 0.1.9 clears it on delete; older ones
    did not, and the layout is theirs to change). The change is noted so an in-memory copy of the
    vectors (vector_index.py) reads the row again, finds it gone and zeroes it too."""
    removed = 0
    models = conn.execute("SELECT id, dimension FROM embedding_models ORDER BY id").fetchall()
    for model_id, dimension in models:
        table = f"vec_model_{int(str(model_id))}"
        present = [
            int(row[0])
            for row in conn.execute(
                f"SELECT rowid FROM {table} WHERE rowid IN (SELECT value FROM json_each(?))",
                (json.dumps(list(seqs)),),
            )
        ]
        zeros = bytes(4 * int(str(dimension)))
        conn.executemany(
            f"UPDATE {table} SET embedding = ? WHERE rowid = ?", [(zeros, s) for s in present]
        )
        conn.executemany(f"DELETE FROM {table} WHERE rowid = ?", [(s,) for s in present])
        removed += len(present)
        noted = {
            int(row[0])
            for row in conn.execute(
                "SELECT memory_seq FROM vector_changes WHERE model_id = ? "
                "AND memory_seq IN (SELECT value FROM json_each(?))",
                (model_id, json.dumps(list(seqs))),
            )
        }
        touched = sorted(noted | set(present))
        if touched:
            change = int(
                scalar(
                    conn,
                    "SELECT coalesce(max(change), 0) + 1 FROM vector_changes WHERE model_id = ?",
                    (model_id,),
                )
            )
            conn.executemany(
                "INSERT INTO vector_changes (model_id, memory_seq, change) VALUES (?, ?, ?) "
                "ON CONFLICT (model_id, memory_seq) DO UPDATE SET change = excluded.change",
                [(model_id, seq, change) for seq in touched],
            )
    return removed


@contextlib.contextmanager
def secure_deletion(db: Database) -> Iterator[None]:
    """`secure_delete` on for this thread's connection while the block runs: whatever is
    deleted or overwritten meanwhile is overwritten with zeros in the file."""
    with db.read() as conn:
        previous = int(scalar(conn, "PRAGMA secure_delete"))
        conn.execute("PRAGMA secure_delete = ON").fetchall()
    try:
        yield
    finally:
        with db.read() as conn:
            conn.execute(f"PRAGMA secure_delete = {previous}").fetchall()


# Deletes the memories `seqs` with everything that hangs on them, inside the forget
# transaction once their copies are redacted; told whether tool messages were rewritten.
# Returns the vectors removed (each engine's own: `remove_memories` here).
Removal = Callable[[Any, Sequence[int], bool], int]


def erase(
    conn: Any,
    dialect: Dialect,
    forgotten: Mapping[str, Memory],
    seqs: Sequence[int],
    redaction: Redaction,
    remove: Removal,
) -> ErasedCopies:
    """Inside the caller's write transaction: redact every copy of the memories' text,
    relink their chains around them, and delete them with `remove` (the engine's)."""
    turns = _redact_turns(conn, dialect, forgotten, redaction)
    tools = _redact_tool_messages(conn, dialect, forgotten, redaction)
    meta = _redact_meta(conn, dialect, forgotten, redaction)
    relinked = _relink(conn, dialect, forgotten)
    vectors = remove(conn, seqs, tools > 0)
    return ErasedCopies(
        relinked=tuple(relinked),
        turns_redacted=turns,
        tool_messages_redacted=tools,
        meta_redacted=tuple(meta),
        vectors_removed=vectors,
    )


def remove_memories(conn: apsw.Connection, seqs: Sequence[int], messages_rewritten: bool) -> int:
    """The file's removal (with secure deletion on): the memories with their vectors,
    entities, decay records and text index rows; the vectors removed."""
    vectors = _remove_vectors(conn, seqs)
    as_json = json.dumps(list(seqs))
    conn.execute(
        "DELETE FROM memory_decay WHERE memory_seq IN (SELECT value FROM json_each(?))",
        (as_json,),
    )
    conn.execute(
        "DELETE FROM memory_entities WHERE memory_seq IN (SELECT value FROM json_each(?))",
        (as_json,),
    )
    # The text index rows (memories_fts, memory_words) go with the rows (triggers);
    # optimising rewrites a text index into one fresh segment, so the deleted terms leave
    # the file.
    conn.execute("DELETE FROM memories WHERE seq IN (SELECT value FROM json_each(?))", (as_json,))
    conn.execute("INSERT INTO memories_fts (memories_fts) VALUES ('optimize')")
    conn.execute("INSERT INTO memory_words (memory_words) VALUES ('optimize')")
    if messages_rewritten:
        conn.execute("INSERT INTO messages_fts (messages_fts) VALUES ('optimize')")
    return vectors


def compact(db: Database) -> bool:
    """Rebuild the database file from its live content (VACUUM), then copy the WAL into it
    and truncate the WAL to nothing. Rows deleted or rewritten before secure deletion was on
    (every ordinary update of a row, which moves it) leave stale copies in free space that
    only a rebuild removes. False, with a warning logged, when either could not finish (the
    disk is full, another connection kept reading): the text may then linger in free space."""
    try:
        with db.read() as conn:
            if conn.in_transaction:  # called inside the caller's transaction: it cannot be
                log.warning("not rebuilding %s inside a transaction", db.path)
                return False
            conn.execute("VACUUM")
            busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()[0]
    except (StoreError, apsw.Error) as exc:
        log.warning("could not rebuild %s after forgetting: %s", db.path, exc)
        return False
    if int(str(busy)):
        log.warning("could not truncate the WAL of %s after forgetting", db.path)
        return False
    return True
