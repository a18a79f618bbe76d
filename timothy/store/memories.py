"""The memory repository: the seed's lifecycle (stage, add, promote, reject, supersede, archive),
chains, consolidation's queries and forgetting, one implementation for both engines.

`BaseMemoryRepository` holds every query and rule; an engine's subclass names its `Dialect`
(`dialect.py`) and adds what really differs: the browser's text search, columns only it keeps,
and what a forget removes and compacts (here `MemoryRepository`, the SQLite file; on the
server `postgres/memories.py`, which also keeps new memories in its outbox while the server
is away and says when an edit lost a race with another machine).
"""

from __future__ import annotations

import builtins
import contextlib
import logging
import math
import re
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, ClassVar, Generic, TypeVar

from timothy.errors import IllegalTransitionError, InvalidInputError, NotFoundError
from timothy.store.db import Database
from timothy.store.dialect import SQLITE, Dialect, Transactions
from timothy.store.forget import (
    NOTHING_ERASED,
    ErasedCopies,
    ForgetReport,
    Redaction,
    compact,
    erase,
    gone_record,
    remove_memories,
    secure_deletion,
)
from timothy.store.ids import could_be_stored, new_id
from timothy.store.records import (
    MAX_CONTENT_CHARS,
    MAX_ENTITY_CHARS,
    Memory,
    MemorySource,
    MemoryStatus,
    MemoryType,
    utc_now,
)
from timothy.text import (
    LONE_SURROGATE_RE,
    normalise_name,
    spellings,
    strip_accents,
    strip_invisible,
    symbols,
    typed_terms,
)

log = logging.getLogger(__name__)

DbT = TypeVar("DbT", bound=Transactions)
R = TypeVar("R")

COLUMNS = (
    "m.seq, m.id, m.type, m.content, m.status, m.confidence, m.source, m.session_id, "
    "m.supersedes, m.superseded_by, m.created_at, m.last_confirmed_at, m.last_retrieved_at"
)

# A character that shows: neither white space nor a control character (NUL, escapes).
_SHOWN_RE = re.compile(r"[^\s\x00-\x1f\x7f-\x9f]")


def _sessions_sql(dialect: Dialect) -> str:
    """The active episodic memories of the sessions of the given memories, in the order
    they were made. (The planner is kept on the session index: a store holds far more
    active episodes than a few sessions do.)"""
    plus = dialect.unindexed
    return (
        "SELECT id, session_id FROM memories WHERE session_id IN ("
        f"SELECT session_id FROM memories WHERE {dialect.among('id')} "
        f"AND session_id IS NOT NULL) AND {plus}type = 'episodic' AND {plus}status = 'active' "
        "ORDER BY session_id, created_at, seq"
    )


@dataclass(frozen=True, slots=True)
class Neighbour:
    """A memory said near another in the same session, `distance` places away."""

    memory: Memory
    distance: int


# What happened to a memory, told to listeners after the write committed
# (the embedding queue listens for "added", "promoted" and "superseded"; a consolidation
# merge tells "superseded" with the canonical memory, a confidence decay tells "decayed").
MemoryListener = Callable[[str, Memory], None]

# The moment a memory's staleness counts from: its last confirmation, or its creation.
_CONFIRMED_OR_CREATED = "coalesce(m.last_confirmed_at, m.created_at)"
_RETRIEVED_OR_CREATED = "coalesce(m.last_retrieved_at, m.created_at)"

# Every version of the chain of the memory `?`, as the CTE `versions (id)`: follow
# `superseded_by` to the newest version, then gather every version that led to it.
VERSIONS = """
WITH RECURSIVE
forward (id, next) AS (
    SELECT id, superseded_by FROM memories WHERE id = ?
    UNION
    SELECT m.id, m.superseded_by FROM memories m JOIN forward f ON m.id = f.next
),
head (id) AS (SELECT id FROM forward WHERE next IS NULL
              OR next NOT IN (SELECT id FROM memories)),
versions (id) AS (
    SELECT id FROM head
    UNION
    SELECT m.id FROM memories m JOIN versions v ON m.superseded_by = v.id
)
"""


# What a forget's transaction did: the memories removed (oldest first), how many whole
# chains, and what erasing their copies touched.
Forgotten = tuple[builtins.list[Memory], int, ErasedCopies]


@dataclass(frozen=True, slots=True)
class StaleMemory:
    """An active memory unconfirmed since `anchor`, and how many whole stale periods since
    then have already lowered its confidence (0 when none has)."""

    memory: Memory
    anchor: datetime
    decayed_periods: int


@dataclass(frozen=True, slots=True)
class ConfidenceDecay:
    """Lower one memory's confidence, recording that it now reflects `periods` stale periods
    counted from `anchor` (which must still be the memory's anchor when this is written)."""

    memory_id: str
    anchor: datetime
    periods: int
    confidence: float


@dataclass(frozen=True, slots=True)
class TextFilter:
    """How `list` narrows memories to those whose words match a search: a JOIN and a
    condition (either may be ""), their parameters in the order they are written, and the
    order (best match first) with its own."""

    join: str
    where: str
    params: tuple[object, ...]
    order: str
    order_params: tuple[object, ...] = ()


def validate_content(content: str) -> str:
    if not isinstance(content, str):
        raise InvalidInputError("A memory's text must be a string.")
    text = content.strip()
    if LONE_SURROGATE_RE.search(text):
        raise InvalidInputError(
            "This text holds broken characters (unpaired UTF-16 surrogates) and cannot be saved."
        )
    if not text:
        raise InvalidInputError("A memory needs some text; this one is empty.")
    if len(text) > MAX_CONTENT_CHARS:
        raise InvalidInputError(
            f"A memory can hold at most {MAX_CONTENT_CHARS:,} characters; "
            f"this one has {len(text):,}."
        )
    if not _SHOWN_RE.search(strip_invisible(text)):
        # Only control or zero-width characters: a memory nobody could see or read.
        raise InvalidInputError("A memory needs some text; this one is empty.")
    return text


def validate_entities(entities: Iterable[str]) -> list[tuple[str, str]]:
    """(name as given, normalised name) pairs, blanks dropped, duplicates folded together."""
    if isinstance(entities, str):
        raise InvalidInputError("Entities must be a list of names, not one string.")
    seen: dict[str, str] = {}
    for raw in entities:
        if not isinstance(raw, str):
            raise InvalidInputError("Every entity must be a name (a string).")
        name = raw.strip()
        if not name:
            continue
        if LONE_SURROGATE_RE.search(name):
            raise InvalidInputError("An entity name holds broken characters (lone surrogates).")
        if len(name) > MAX_ENTITY_CHARS:
            raise InvalidInputError(
                f"An entity name can be at most {MAX_ENTITY_CHARS} characters long."
            )
        norm = normalise_name(name)
        if norm and norm not in seen:
            seen[norm] = name
    return [(name, norm) for norm, name in seen.items()]


def validate_confidence(confidence: float) -> float:
    try:
        value = float(confidence)
    except (TypeError, ValueError):
        raise InvalidInputError("Confidence must be a number from 0 to 1.") from None
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        raise InvalidInputError("Confidence must be a number from 0 to 1.")
    return value


def parse_type(value: str | MemoryType) -> MemoryType:
    try:
        return MemoryType(value)
    except ValueError:
        names = ", ".join(t.value for t in MemoryType)
        raise InvalidInputError(f"Unknown memory type {value!r}; use one of: {names}.") from None


def parse_status(value: str | MemoryStatus) -> MemoryStatus:
    try:
        return MemoryStatus(value)
    except ValueError:
        names = ", ".join(s.value for s in MemoryStatus)
        raise InvalidInputError(f"Unknown status {value!r}; use one of: {names}.") from None


def parse_source(value: str | MemorySource) -> MemorySource:
    try:
        return MemorySource(value)
    except ValueError:
        names = ", ".join(s.value for s in MemorySource)
        raise InvalidInputError(f"Unknown source {value!r}; use one of: {names}.") from None


# What a restore leaves a memory as (rejected -> staged, archived -> active).
_RESTORED = ("staged", "active")

# A column's text -> its member, looked up without the enum's call (a recall builds ~100
# memories a turn when they are not kept).
_TYPES: dict[Any, MemoryType] = {member.value: member for member in MemoryType}
_STATUSES: dict[Any, MemoryStatus] = {member.value: member for member in MemoryStatus}
_SOURCES: dict[Any, MemorySource] = {member.value: member for member in MemorySource}


def row_to_memory(
    row: Sequence[Any],
    entities: tuple[str, ...],
    time_in: Callable[[Any], datetime | None] = SQLITE.time_in,
) -> Memory:
    created = time_in(row[10])
    assert created is not None
    return Memory(
        id=str(row[1]),
        type=_TYPES.get(row[2]) or MemoryType(str(row[2])),
        content=str(row[3]),
        status=_STATUSES.get(row[4]) or MemoryStatus(str(row[4])),
        confidence=float(row[5]),
        source=_SOURCES.get(row[6]) or MemorySource(str(row[6])),
        session_id=None if row[7] is None else str(row[7]),
        supersedes=None if row[8] is None else str(row[8]),
        superseded_by=None if row[9] is None else str(row[9]),
        created_at=created,
        last_confirmed_at=time_in(row[11]),
        last_retrieved_at=time_in(row[12]),
        entities=entities,
    )


def load_entities(
    conn: Any, seqs: Sequence[int], dialect: Dialect = SQLITE
) -> dict[int, tuple[str, ...]]:
    """Entity names of many memories in one query, in the order they were given."""
    if not seqs:
        return {}
    found: dict[int, list[str]] = {}
    for seq, name in conn.execute(
        dialect.sql(
            "SELECT memory_seq, name FROM memory_entities "
            f"WHERE {dialect.among('memory_seq')} ORDER BY memory_seq, position"
        ),
        (dialect.items(seqs),),
    ):
        # Interned: an owner's memories name the same few people and places, and kept
        # memories (KnownRows) then share one copy of each name.
        found.setdefault(int(seq), []).append(sys.intern(str(name)))
    return {seq: tuple(names) for seq, names in found.items()}


def rows_to_memories(
    conn: Any, rows: Sequence[Sequence[Any]], dialect: Dialect = SQLITE
) -> list[Memory]:
    """Memory rows (`COLUMNS`) as memories, their entities read in one more query."""
    entities = load_entities(conn, [int(row[0]) for row in rows], dialect)
    time_in = dialect.time_in
    return [row_to_memory(row, entities.get(int(row[0]), ()), time_in) for row in rows]


def _shared(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """A kept row's key with its short words (type, status, source) interned: equal to the
    row as read, column for column, and one copy of each word for every kept row."""
    return tuple(
        sys.intern(value) if type(value) is str and len(value) <= _SHORT_WORD else value
        for value in key
    )


# Columns of at most this many characters are interned in a kept row's key (the enums' words;
# ids and times are longer, and differ from row to row).
_SHORT_WORD = 16


class KnownRows:
    """Memories already built from their rows, by the whole row: a row read again, column
    for column the same (seq, id, content, status, every time stamp...), is the same memory,
    so it is not built again nor its entities read again. Exact without being told of
    writes: any change to a memory changes its row, and its entities never change (they are
    written with the row and only removed with it; an edit is a new version, a new row).

    Bounded: the oldest kept row goes first once `size` are kept. A read of more than
    `largest_read` rows (a listing, an export) is looked up but not kept, so it does not push
    out the memories that turn after turn of recall read again. Shared by threads.

    A kept memory costs ~0.95 KB (its row as the key, the memory, its entities, with the
    short words and entity names shared: measured on bench/recall.py's store; 1.3 KB
    unshared), so the 16,384 of the default hold ~15 MiB once full. A turn of
    recall reads ~100 memories (its legs' hits and their neighbourhoods); on a store of 10k
    memories 2,048 kept rows missed most of them (building one costs ~30 us: its times,
    its entities' query), on one of 16k or fewer every memory a turn reads is kept."""

    def __init__(self, size: int = 16_384, largest_read: int = 256) -> None:
        self.size = size
        self.largest_read = largest_read
        self._kept: dict[tuple[Any, ...], Memory] = {}
        # Every memory forgotten while this process runs: a read that began before the
        # forgetting (a recall on another thread) must not keep what it built afterwards.
        self._gone: set[str] = set()
        self._lock = threading.Lock()

    def read(
        self,
        conn: Any,
        rows: Sequence[Sequence[Any]],
        dialect: Dialect = SQLITE,
        *,
        keep: bool = True,
    ) -> list[Memory]:
        """rows_to_memories, building (and reading the entities of) only the rows not kept."""
        return self.lookup(
            rows, lambda missing: rows_to_memories(conn, missing, dialect), keep=keep
        )

    def lookup(
        self,
        rows: Sequence[Sequence[Any]],
        build: Callable[[builtins.list[tuple[Any, ...]]], builtins.list[Memory]],
        *,
        keep: bool = True,
    ) -> builtins.list[Memory]:
        """The memories of `rows` (each hashable column for column), `build` making those
        not kept, in the order given. `keep=False`: what is built is not kept (a reader
        that holds its own copies, such as Browse's pages, which would otherwise push out
        the memories recall reads again)."""
        keys = [row if type(row) is tuple else tuple(row) for row in rows]
        kept = self._kept
        with self._lock:
            found = [kept.get(key) for key in keys]
        missing = [key for key, memory in zip(keys, found, strict=True) if memory is None]
        if not missing:
            return found  # type: ignore[return-value]
        built = dict(zip(missing, build(missing), strict=True))
        if keep and len(rows) <= self.largest_read:
            with self._lock:
                gone = self._gone
                for key, memory in built.items():
                    if memory.id in gone:
                        continue
                    kept.pop(key, None)
                    kept[_shared(key)] = memory
                while len(kept) > self.size:
                    del kept[next(iter(kept))]
        return [
            built[key] if memory is None else memory
            for key, memory in zip(keys, found, strict=True)
        ]

    def forget(self, memory_ids: Iterable[str]) -> None:
        """Let go of the memories of `memory_ids` (forgotten: no copy of them is kept)."""
        gone = set(memory_ids)
        with self._lock:
            self._gone |= gone
            for key in [key for key, memory in self._kept.items() if memory.id in gone]:
                del self._kept[key]

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()

    def __len__(self) -> int:
        return len(self._kept)


class BaseMemoryRepository(Generic[DbT]):
    """Every read and write of memories, for both engines: the SQL lives here, next to the
    method that runs it, in the spelling of the subclass's `dialect`. An engine's subclass
    adds its text filter for `list`, anything a new row needs besides (`_extra_columns`),
    and what forgetting removes and compacts."""

    dialect: ClassVar[Dialect] = SQLITE

    def __init__(self, db: DbT) -> None:
        self.db = db
        self.listeners: builtins.list[MemoryListener] = []
        # Memories built from rows read before (recall reads the same ones turn after turn).
        self.known = KnownRows()

    def _read(
        self, conn: Any, rows: Sequence[Sequence[Any]], *, keep: bool = True
    ) -> builtins.list[Memory]:
        return self.known.read(conn, rows, self.dialect, keep=keep)

    # -- engine hooks ------------------------------------------------------------------

    def _text_filter(self, text: str, match_any: bool) -> TextFilter | None:
        """How `list` finds memories whose words match `text` (every term, or any one with
        `match_any`; the last one may be a prefix), best match first; None when `text`
        holds no word to look for."""
        raise NotImplementedError

    def _extra_columns(self, memory: Memory) -> dict[str, Any]:
        """Columns of a new memory row beyond the record's own."""
        return {}

    def _superseded_meanwhile(
        self, old: Memory, content: str, same: Callable[[Memory], bool]
    ) -> Memory | None:
        """Called when an edit finds the version the owner edited superseded already: the
        version `same` finds to be this very edit (a retry of an edit that landed), or the
        owner's own version to save this edit on top of; None (or an error) otherwise."""
        return None

    def _saved(
        self,
        write: Callable[[Any], R],
        landed: Callable[[Any], R | None],
        change: tuple[str, str],
        check: Callable[[], dict[str, Any]],
    ) -> R:
        """Run `write` in one transaction and return what it returned. `landed` reads, on a
        connection of its own, what `write` would have returned if its transaction was
        committed (None if it was not), `change` (event, memory id) names it, and `check`
        says as plain data how to tell that it landed (kept across a restart: the memory
        `id` in one of the statuses `status`, with the confirmation time `stamp`; or the
        memories `gone`): on the server a reply lost after the commit is settled so (see
        postgres/memories.py); the file has no reply to lose."""
        with self.db.write() as conn:
            return write(conn)

    def _retried(self, change: tuple[str, str]) -> dict[str, Any] | None:
        """When `change` (event, memory id) is a retry of one whose outcome this machine
        could not learn (the server stopped answering as it committed; perhaps before a
        restart), the `check` it was saved with (see `_saved`): then finding it done already
        is its success, not an error. None otherwise."""
        return None

    def _read_one(self, conn: Any, memory_id: str) -> Memory | None:
        """The memory `memory_id` as `conn` sees it now (None if there is none)."""
        rows = conn.execute(
            self.dialect.sql(f"SELECT {COLUMNS} FROM memories m WHERE m.id = ?"), (memory_id,)
        ).fetchall()
        found = self._read(conn, rows)
        return found[0] if found else None

    def _lost_race(self, conn: Any, memory_id: str, content: str) -> Exception:
        """The error for an edit whose version changed between its read and its write."""
        return IllegalTransitionError(f"Memory {memory_id} changed meanwhile; try again.")

    def _forgetting(self) -> AbstractContextManager[Any]:
        """Held around the forget transaction."""
        return contextlib.nullcontext()

    def _remove(self, conn: Any, seqs: Sequence[int], messages_rewritten: bool) -> int:
        """Delete the memories `seqs` with everything that hangs on them (inside the forget
        transaction, after their copies were redacted); the vectors removed."""
        raise NotImplementedError

    def _compact(self) -> bool:
        """After a forget: rid the storage of what the deleted rows left (see ForgetReport)."""
        raise NotImplementedError

    # -- reading -----------------------------------------------------------------------

    def get(self, memory_id: str) -> Memory:
        if not could_be_stored(memory_id):
            raise NotFoundError(f"No memory has the id {memory_id!r}.")
        with self.db.read() as conn:
            rows = conn.execute(
                self.dialect.sql(f"SELECT {COLUMNS} FROM memories m WHERE m.id = ?"), (memory_id,)
            ).fetchall()
            memories = self._read(conn, rows)
        if not memories:
            raise NotFoundError(f"No memory has the id {memory_id!r}.")
        return memories[0]

    def get_many(self, memory_ids: Iterable[str], *, keep: bool = True) -> dict[str, Memory]:
        """`keep=False`: the memories built are not kept for later reads (`KnownRows`)."""
        ids = [i for i in dict.fromkeys(memory_ids) if could_be_stored(i)]
        if not ids:
            return {}
        dialect = self.dialect
        with self.db.read() as conn:
            rows = conn.execute(
                dialect.sql(f"SELECT {COLUMNS} FROM memories m WHERE {dialect.among('m.id')}"),
                (dialect.items(ids),),
            ).fetchall()
            return {memory.id: memory for memory in self._read(conn, rows, keep=keep)}

    def around(
        self, memory_ids: Iterable[str], width: int, known: Mapping[str, Memory] | None = None
    ) -> dict[str, builtins.list[Neighbour]]:
        """For each of `memory_ids` that is an active episodic memory of a session: the
        active episodic memories of that session within `width` places of it, in the order
        they were made (created_at, then insertion), nearest first. A memory of no session,
        or of another type, has no neighbours. `known` (id -> memory) saves reading again
        the neighbours the caller already holds."""
        ids = [i for i in dict.fromkeys(memory_ids) if could_be_stored(i)]
        if not ids or width <= 0:
            return {}
        known = known or {}
        dialect = self.dialect
        with self.db.read() as conn:
            said: dict[str, builtins.list[str]] = {}
            for memory_id, session in conn.execute(
                dialect.sql(_sessions_sql(dialect)), (dialect.items(ids),)
            ).fetchall():
                said.setdefault(str(session), []).append(str(memory_id))
            if not said:
                return {}
            # A seed is in its session's list only if it is itself an active episode.
            places = {m: (order, n) for order in said.values() for n, m in enumerate(order)}
            pairs: builtins.list[tuple[str, str, int]] = []
            for seed in ids:
                if seed not in places:
                    continue
                order, place = places[seed]
                for other in range(max(0, place - width), min(len(order), place + width + 1)):
                    if other != place:
                        pairs.append((seed, order[other], abs(other - place)))
            wanted = sorted({n for _, n, _ in pairs if n not in known})
            read: dict[str, Memory] = {}
            if wanted:
                rows = conn.execute(
                    dialect.sql(f"SELECT {COLUMNS} FROM memories m WHERE {dialect.among('m.id')}"),
                    (dialect.items(wanted),),
                ).fetchall()
                read = {memory.id: memory for memory in self._read(conn, rows)}
        found: dict[str, builtins.list[Neighbour]] = {}
        for seed, neighbour, distance in pairs:
            memory = known.get(neighbour) or read.get(neighbour)
            if memory is not None:
                found.setdefault(seed, []).append(Neighbour(memory, distance))
        for neighbours in found.values():
            neighbours.sort(key=lambda n: n.distance)
        return found

    def list(
        self,
        *,
        status: MemoryStatus | str | Iterable[MemoryStatus | str] | None = None,
        type: MemoryType | str | Iterable[MemoryType | str] | None = None,
        text: str | None = None,
        session_id: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        oldest_first: bool = False,
        match_any: bool = False,
        keep: bool = True,
    ) -> builtins.list[Memory]:
        """Memories matching every filter given, newest first (or best text match first).

        `keep=False`: the memories built are not kept for later reads (`KnownRows`): a
        listing that holds its own copies (Browse) leaves that cache to recall.

        `text` is normalised like a recall query; every term must appear (any one, with
        `match_any`, best match first), the last one may be a prefix (search as you type).
        Every symbol it holds that no word index does (emoji: `symbols`) must appear too
        (not with `match_any`, whose callers look for words).
        """
        dialect = self.dialect
        where: builtins.list[str] = []
        params: builtins.list[object] = []
        join = ""
        order = "m.seq ASC" if oldest_first else "m.seq DESC"
        order_params: Sequence[object] = ()
        if text is not None and text.strip():
            # Symbols the word indexes drop ("🎂") must each be in the text, as words must.
            marks = [] if match_any else symbols(text)
            found = self._text_filter(text, match_any)
            if found is None and not marks:
                return []
            if found is not None:
                join = found.join
                if found.where:
                    where.append(found.where)
                params.extend(found.params)
                order = found.order
                order_params = found.order_params
            for mark in marks:
                # A symbol (category S) is never LIKE's "%", "_" or escape character.
                where.append("m.content LIKE ?")
                params.append(f"%{mark}%")
        if status is not None:
            statuses = [status] if isinstance(status, str) else builtins.list(status)
            where.append(dialect.among("m.status"))
            params.append(dialect.items(parse_status(s).value for s in statuses))
        if type is not None:
            types = [type] if isinstance(type, str) else builtins.list(type)
            where.append(dialect.among("m.type"))
            params.append(dialect.items(parse_type(t).value for t in types))
        if session_id is not None:
            where.append("m.session_id = ?")
            params.append(session_id)
        sql = f"SELECT {COLUMNS} FROM memories m {join}"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY {order} LIMIT ? OFFSET ?"
        params += [*order_params, dialect.no_limit if limit is None else int(limit), int(offset)]
        with self.db.read() as conn:
            return self._read(conn, conn.execute(dialect.sql(sql), params).fetchall(), keep=keep)

    def count(
        self,
        *,
        status: MemoryStatus | str | None = None,
        type: MemoryType | str | None = None,
    ) -> int:
        where, params = [], []
        if status is not None:
            where.append("status = ?")
            params.append(parse_status(status).value)
        if type is not None:
            where.append("type = ?")
            params.append(parse_type(type).value)
        sql = "SELECT count(*) FROM memories"
        if where:
            sql += " WHERE " + " AND ".join(where)
        with self.db.read() as conn:
            rows = conn.execute(self.dialect.sql(sql), params).fetchall()
        return int(rows[0][0]) if rows else 0

    def unconfirmed_since(
        self, cutoffs: Mapping[MemoryType, datetime], limit: int | None = None
    ) -> builtins.list[Memory]:
        """Active memories of each given type last confirmed (or, never confirmed, created)
        before that type's cutoff, the longest unconfirmed first. With `limit`, only each
        type's `limit` longest unconfirmed are read (the caller keeps the first `limit` of
        the whole list): thousands of old memories are not all turned into records."""
        found: builtins.list[Memory] = []
        order = f" ORDER BY {_CONFIRMED_OR_CREATED}, m.id LIMIT ?" if limit is not None else ""
        with self.db.read() as conn:
            for memory_type, cutoff in cutoffs.items():
                params: tuple[Any, ...] = (
                    parse_type(memory_type).value,
                    self.dialect.time_out(cutoff),
                )
                rows = conn.execute(
                    self.dialect.sql(
                        f"SELECT {COLUMNS} FROM memories m WHERE m.status = 'active' "
                        f"AND m.type = ? AND {_CONFIRMED_OR_CREATED} < ?{order}"
                    ),
                    (*params, limit) if limit is not None else params,
                ).fetchall()
                found.extend(self._read(conn, rows))
        found.sort(key=lambda m: (m.last_confirmed_at or m.created_at, m.id))
        return found

    def chain(self, memory_id: str) -> builtins.list[Memory]:
        """The whole version history of a memory, oldest first, from any of its versions.

        Follows `superseded_by` to the newest version, then gathers every version that led to
        it (a consolidation merge has several), so each member's history is complete.
        """
        self.get(memory_id)  # raises NotFoundError
        with self.db.read() as conn:
            rows = conn.execute(
                self.dialect.sql(
                    f"{VERSIONS} SELECT {COLUMNS} FROM memories m "
                    "JOIN versions v ON v.id = m.id ORDER BY m.created_at, m.seq"
                ),
                (memory_id,),
            ).fetchall()
            return self._read(conn, rows)

    # -- writing -----------------------------------------------------------------------

    def _notify(self, event: str, memory: Memory) -> None:
        for listener in builtins.list(self.listeners):
            try:
                listener(event, memory)
            except Exception:  # a listener must never undo or fail a committed write
                log.exception("memory listener failed on %s", event)

    def insert(self, conn: Any, memory: Memory) -> None:
        """Write one memory row and its entities as they are (inside the caller's transaction)."""
        self._insert(conn, memory, if_missing=False)

    def _insert(self, conn: Any, memory: Memory, *, if_missing: bool) -> bool:
        """`insert`; with `if_missing`, a memory whose id is stored already is left as it is
        (False)."""
        dialect = self.dialect
        time_out = dialect.time_out
        columns = {
            "id": memory.id,
            "type": memory.type.value,
            "content": memory.content,
            "status": memory.status.value,
            "confidence": memory.confidence,
            "source": memory.source.value,
            "session_id": memory.session_id,
            "supersedes": memory.supersedes,
            "superseded_by": memory.superseded_by,
            "created_at": time_out(memory.created_at),
            "last_confirmed_at": time_out(memory.last_confirmed_at),
            "last_retrieved_at": time_out(memory.last_retrieved_at),
            **self._extra_columns(memory),
        }
        rows = conn.execute(
            dialect.sql(
                f"INSERT INTO memories ({', '.join(columns)}) "
                f"VALUES ({', '.join('?' for _ in columns)}) "
                + ("ON CONFLICT (id) DO NOTHING " if if_missing else "")
                + "RETURNING seq"
            ),
            tuple(columns.values()),
        ).fetchall()
        if not rows:  # stored already (if_missing)
            return False
        seq = rows[0][0]
        dialect.executemany(
            conn,
            "INSERT INTO memory_entities (memory_seq, position, name, norm, name_key) "
            "VALUES (?, ?, ?, ?, ?)",
            [
                (seq, position, name, norm, strip_accents(norm))
                for position, (name, norm) in enumerate(validate_entities(memory.entities))
            ],
        )
        return True

    def _create(
        self,
        status: MemoryStatus,
        content: str,
        type: MemoryType | str,
        entities: Iterable[str],
        confidence: float,
        source: MemorySource | str,
        session_id: str | None,
        now: datetime | None,
        supersedes: str | None = None,
    ) -> Memory:
        moment = now or utc_now()
        return Memory(
            id=new_id(moment),
            type=parse_type(type),
            content=validate_content(content),
            status=status,
            confidence=validate_confidence(confidence),
            source=parse_source(source),
            session_id=session_id,
            supersedes=supersedes,
            superseded_by=None,
            created_at=moment,
            last_confirmed_at=moment if status is MemoryStatus.ACTIVE else None,
            last_retrieved_at=None,
            entities=tuple(name for name, _ in validate_entities(entities)),
        )

    def _save_new(self, memory: Memory, event: str) -> Memory:
        with self.db.write() as conn:
            self.insert(conn, memory)
        self._notify(event, memory)
        return memory

    def stage(
        self,
        content: str,
        *,
        type: MemoryType | str = MemoryType.SEMANTIC,
        entities: Iterable[str] = (),
        confidence: float = 0.8,
        source: MemorySource | str = MemorySource.EXTRACTION,
        session_id: str | None = None,
        now: datetime | None = None,
    ) -> Memory:
        """Propose a fact: it waits, staged, until the owner confirms or rejects it."""
        fields = (content, type, entities, confidence, source, session_id, now)
        return self._save_new(self._create(MemoryStatus.STAGED, *fields), "staged")

    def add(
        self,
        content: str,
        *,
        type: MemoryType | str = MemoryType.SEMANTIC,
        entities: Iterable[str] = (),
        confidence: float = 1.0,
        source: MemorySource | str = MemorySource.MANUAL,
        session_id: str | None = None,
        now: datetime | None = None,
    ) -> Memory:
        """Store a fact as active at once (the owner said it: manual entry or `remember`)."""
        fields = (content, type, entities, confidence, source, session_id, now)
        return self._save_new(self._create(MemoryStatus.ACTIVE, *fields), "added")

    def _transition(
        self,
        memory_id: str,
        event: str,
        *,
        allowed: tuple[MemoryStatus, ...],
        done: MemoryStatus,
        verb: str,
        assignments: str,
        params: Sequence[object] = (),
        stamp: datetime | None = None,
    ) -> Memory:
        """Apply an UPDATE only from an allowed status (otherwise raise and change nothing),
        then tell the listeners `event` with the memory as it is now. `done` is the status
        it leaves the memory in, and `stamp` the confirmation time it writes, if any: how a
        change whose reply was lost is known to have landed."""
        if not could_be_stored(memory_id):
            raise NotFoundError(f"No memory has the id {memory_id!r}.")
        dialect = self.dialect
        change = (event, memory_id)

        def write(conn: Any) -> Memory:
            rows = conn.execute(
                dialect.sql(f"SELECT status FROM memories WHERE id = ?{dialect.for_update}"),
                (memory_id,),
            ).fetchall()
            if not rows:
                raise NotFoundError(f"No memory has the id {memory_id!r}.")
            current = MemoryStatus(str(rows[0][0]))
            if current not in allowed:
                if current is done and self._retried(change) is not None:
                    return self._found(conn, memory_id)
                names = " or ".join(s.value for s in allowed)
                raise IllegalTransitionError(
                    f"Memory {memory_id} is {current.value}; only a {names} memory can be {verb}."
                )
            conn.execute(
                dialect.sql(f"UPDATE memories SET {assignments} WHERE id = ?"),
                (*params, memory_id),
            )
            return self._found(conn, memory_id)

        def landed(conn: Any) -> Memory | None:
            memory = self._read_one(conn, memory_id)
            if memory is None or memory.status is not done:
                return None
            return memory if stamp is None or memory.last_confirmed_at == stamp else None

        def check() -> dict[str, Any]:
            moment = None if stamp is None else stamp.isoformat()
            return {"id": memory_id, "status": [done.value], "stamp": moment}

        memory = self._saved(write, landed, change, check)
        self._notify(event, memory)
        return memory

    def _found(self, conn: Any, memory_id: str) -> Memory:
        memory = self._read_one(conn, memory_id)
        if memory is None:
            raise NotFoundError(f"No memory has the id {memory_id!r}.")
        return memory

    def promote(self, memory_id: str, *, now: datetime | None = None) -> Memory:
        """Staged -> active; stamps last_confirmed_at."""
        moment = now or utc_now()
        return self._transition(
            memory_id,
            "promoted",
            allowed=(MemoryStatus.STAGED,),
            done=MemoryStatus.ACTIVE,
            verb="confirmed",
            assignments="status = 'active', last_confirmed_at = ?",
            params=(self.dialect.time_out(moment),),
            stamp=moment,
        )

    def reconfirm(self, memory_id: str, *, now: datetime | None = None) -> Memory:
        """The owner says an active memory is still true: stamps last_confirmed_at."""
        moment = now or utc_now()
        return self._transition(
            memory_id,
            "reconfirmed",
            allowed=(MemoryStatus.ACTIVE,),
            done=MemoryStatus.ACTIVE,
            verb="re-confirmed",
            assignments="last_confirmed_at = ?",
            params=(self.dialect.time_out(moment),),
            stamp=moment,
        )

    def confirm(self, memory_id: str, *, now: datetime | None = None) -> Memory:
        """Promote a staged memory, or re-confirm an active one."""
        current = self.get(memory_id)
        if current.status is MemoryStatus.ACTIVE:
            return self.reconfirm(memory_id, now=now)
        if current.status is not MemoryStatus.STAGED:
            raise IllegalTransitionError(
                f"Memory {memory_id} is {current.status.value}; only a staged or active "
                "memory can be confirmed."
            )
        return self.promote(memory_id, now=now)

    def reject(self, memory_id: str, *, now: datetime | None = None) -> Memory:
        """Staged or active -> rejected (a refused proposal, or an undone `remember`)."""
        return self._transition(
            memory_id,
            "rejected",
            allowed=(MemoryStatus.STAGED, MemoryStatus.ACTIVE),
            done=MemoryStatus.REJECTED,
            verb="rejected",
            assignments="status = 'rejected'",
        )

    def archive(self, memory_id: str, *, now: datetime | None = None) -> Memory:
        """Active -> archived: kept, inspectable, no longer recalled."""
        return self._transition(
            memory_id,
            "archived",
            allowed=(MemoryStatus.ACTIVE,),
            done=MemoryStatus.ARCHIVED,
            verb="archived",
            assignments="status = 'archived'",
        )

    def restore(self, memory_id: str, *, now: datetime | None = None) -> Memory:
        """Undo a rejection or an archival: rejected -> staged (the owner decides again),
        archived -> active. Its confirmation time is left as it was."""
        change = ("restored", memory_id)

        def write(conn: Any) -> Memory:
            rows = conn.execute(
                self.dialect.sql(
                    "UPDATE memories SET status = CASE status WHEN 'rejected' THEN 'staged' "
                    "ELSE 'active' END WHERE id = ? AND status IN ('rejected', 'archived') "
                    "RETURNING id"
                ),
                (memory_id,),
            ).fetchall()
            if not rows:
                found = conn.execute(
                    self.dialect.sql("SELECT status FROM memories WHERE id = ?"), (memory_id,)
                ).fetchall()
                if not found:
                    raise NotFoundError(f"No memory has the id {memory_id!r}.")
                if found[0][0] in _RESTORED and self._retried(change) is not None:
                    return self._found(conn, memory_id)
                raise IllegalTransitionError(
                    f"Memory {memory_id} is {found[0][0]}; only a rejected or archived memory "
                    "can be restored."
                )
            return self._found(conn, memory_id)

        def landed(conn: Any) -> Memory | None:
            memory = self._read_one(conn, memory_id)
            return memory if memory is not None and memory.status.value in _RESTORED else None

        def check() -> dict[str, Any]:
            return {"id": memory_id, "status": sorted(_RESTORED)}

        memory = self._saved(write, landed, change, check)
        self._notify("restored", memory)
        return memory

    def supersede(
        self,
        memory_id: str,
        content: str,
        *,
        entities: Iterable[str] | None = None,
        type: MemoryType | str | None = None,
        confidence: float | None = None,
        source: MemorySource | str = MemorySource.MANUAL,
        now: datetime | None = None,
    ) -> Memory:
        """An edit: the new version is inserted active, the old one marked superseded, linked
        both ways. Entities, type and confidence carry over unless new ones are given."""
        old = self.get(memory_id)
        if old.status is MemoryStatus.SUPERSEDED:

            def same(version: Memory) -> bool:
                """Whether `version` is what this edit would save."""
                return (
                    version.content == validate_content(content)
                    and (type is None or version.type is parse_type(type))
                    and version.confidence == (1.0 if confidence is None else confidence)
                    and (
                        entities is None
                        or version.entities
                        == tuple(name for name, _ in validate_entities(entities))
                    )
                )

            found = self._superseded_meanwhile(old, content, same)
            if found is not None and same(found):  # in place already: the same success
                self._notify("superseded", found)
                return found
            if found is not None:  # the owner's own edit landed unseen: this goes on top
                old = found
        allowed = (MemoryStatus.STAGED, MemoryStatus.ACTIVE)
        if old.status not in allowed:
            raise IllegalTransitionError(
                f"Memory {memory_id} is {old.status.value}; only a staged or active memory "
                "can be edited."
            )
        new = self._create(
            MemoryStatus.ACTIVE,
            content,
            type=old.type if type is None else type,
            entities=old.entities if entities is None else entities,
            confidence=1.0 if confidence is None else confidence,
            source=source,
            session_id=old.session_id,
            now=now,
            supersedes=old.id,
        )

        def write(conn: Any) -> Memory:
            changed = conn.execute(
                self.dialect.sql(
                    "UPDATE memories SET status = 'superseded', superseded_by = ? "
                    "WHERE id = ? AND status IN ('staged', 'active') RETURNING id"
                ),
                (new.id, old.id),
            ).fetchall()
            if not changed:  # someone else changed it between our read and this write
                raise self._lost_race(conn, memory_id, new.content)
            self.insert(conn, new)
            return new

        # The new version's id is made here, before the write: finding it on the server
        # is proof that this edit landed.
        saved = self._saved(
            write,
            lambda conn: self._read_one(conn, new.id),
            ("superseded", old.id),
            lambda: {"id": new.id},
        )
        self._notify("superseded", saved)
        return saved

    def mark_retrieved(self, memory_ids: Iterable[str], *, now: datetime | None = None) -> None:
        """Stamp last_retrieved_at only: retrieval is not endorsement."""
        ids = builtins.list(dict.fromkeys(memory_ids))
        if not ids:
            return
        dialect = self.dialect
        with self.db.write() as conn:
            conn.execute(
                dialect.sql(
                    f"UPDATE memories SET last_retrieved_at = ? WHERE {dialect.among('id')}"
                ),
                (dialect.time_out(now or utc_now()), dialect.items(ids)),
            )

    # -- consolidation -----------------------------------------------------------------

    def merge(
        self, member_ids: Sequence[str], content: str, *, now: datetime | None = None
    ) -> Memory:
        """Replace near-duplicates by one canonical memory, in one transaction.

        The canonical memory is inserted active with source `consolidation` and every member
        is marked superseded by it, so each member's chain leads to it and its chain holds
        them all. It takes the members' type, the union of their entities (oldest member's
        first), their highest confidence, their newest `last_confirmed_at` and
        `last_retrieved_at`, and their session when they all share one. `supersedes` names
        the newest member: the version an edit would have replaced (the others point at the
        canonical memory through `superseded_by`, which is what `chain` follows).
        Changes nothing, and raises, unless every member exists, is active and is of one type.
        """
        ids = builtins.list(dict.fromkeys(member_ids))
        if len(ids) < 2:
            raise InvalidInputError("A merge needs at least two different memories.")
        text = validate_content(content)
        moment = now or utc_now()
        dialect = self.dialect
        with self.db.write() as conn:
            rows = conn.execute(
                dialect.sql(
                    f"SELECT {COLUMNS} FROM memories m WHERE {dialect.among('m.id')} "
                    f"ORDER BY m.created_at, m.seq{dialect.for_update}"
                ),
                (dialect.items(ids),),
            ).fetchall()
            members = self._read(conn, rows)
            seqs = {memory.id: int(row[0]) for memory, row in zip(members, rows, strict=True)}
            missing = [memory_id for memory_id in ids if memory_id not in seqs]
            if missing:
                raise NotFoundError(f"No memory has the id {missing[0]!r}.")
            for member in members:
                if member.status is not MemoryStatus.ACTIVE:
                    raise IllegalTransitionError(
                        f"Memory {member.id} is {member.status.value}; only active memories "
                        "can be merged."
                    )
            types = {member.type for member in members}
            if len(types) > 1:
                raise InvalidInputError(
                    "Only memories of one type can be merged; these are "
                    + ", ".join(sorted(t.value for t in types))
                    + "."
                )
            confirmed = [m.last_confirmed_at for m in members if m.last_confirmed_at is not None]
            retrieved = [m.last_retrieved_at for m in members if m.last_retrieved_at is not None]
            sessions = {member.session_id for member in members}
            canonical = Memory(
                id=new_id(moment),
                type=members[0].type,
                content=text,
                status=MemoryStatus.ACTIVE,
                confidence=max(member.confidence for member in members),
                source=MemorySource.CONSOLIDATION,
                session_id=sessions.pop() if len(sessions) == 1 else None,
                supersedes=members[-1].id,
                superseded_by=None,
                created_at=moment,
                last_confirmed_at=max(confirmed) if confirmed else None,
                last_retrieved_at=max(retrieved) if retrieved else None,
                entities=tuple(
                    name
                    for name, _ in validate_entities(
                        name for member in members for name in member.entities
                    )
                ),
            )
            self.insert(conn, canonical)
            changed = conn.execute(
                dialect.sql(
                    "UPDATE memories SET status = 'superseded', superseded_by = ? "
                    f"WHERE {dialect.among('id')} AND status = 'active' RETURNING id"
                ),
                (canonical.id, dialect.items(ids)),
            ).fetchall()
            if len(changed) != len(ids):  # cannot happen inside this transaction; be sure
                raise IllegalTransitionError("The memories changed meanwhile; try again.")
            if canonical.last_confirmed_at is not None:
                # The canonical memory counts its staleness from the newest confirmation, so it
                # keeps the decay already applied for it: no stale period is taken off twice.
                conn.execute(
                    dialect.sql(
                        "INSERT INTO memory_decay (memory_seq, anchor, periods, decayed_at) "
                        "SELECT (SELECT seq FROM memories WHERE id = ?), min(anchor), "
                        "max(periods), max(decayed_at) FROM memory_decay "
                        f"WHERE {dialect.among('memory_seq')} AND anchor = ? "
                        "HAVING count(*) > 0"
                    ),
                    (
                        canonical.id,
                        dialect.items(seqs.values()),
                        dialect.time_out(canonical.last_confirmed_at),
                    ),
                )
        self._notify("superseded", canonical)
        return canonical

    def unretrieved(self, type: MemoryType | str, since: datetime) -> builtins.list[Memory]:
        """Active memories of a type neither retrieved nor (when never retrieved) created
        after `since`, oldest first."""
        with self.db.read() as conn:
            rows = conn.execute(
                self.dialect.sql(
                    f"SELECT {COLUMNS} FROM memories m WHERE m.status = 'active' AND m.type = ? "
                    f"AND {_RETRIEVED_OR_CREATED} <= ? ORDER BY m.seq"
                ),
                (parse_type(type).value, self.dialect.time_out(since)),
            ).fetchall()
            return self._read(conn, rows)

    def archive_unretrieved(
        self, type: MemoryType | str, since: datetime, *, now: datetime | None = None
    ) -> builtins.list[Memory]:
        """Archive, in one transaction, what `unretrieved` lists; returns them archived.

        The condition is checked in the write itself, so a memory recalled a moment ago stays.
        """
        with self.db.write() as conn:
            rows = conn.execute(
                self.dialect.sql(
                    "UPDATE memories AS m SET status = 'archived' WHERE m.status = 'active' "
                    f"AND m.type = ? AND {_RETRIEVED_OR_CREATED} <= ? RETURNING id"
                ),
                (parse_type(type).value, self.dialect.time_out(since)),
            ).fetchall()
        archived = self.get_many(str(row[0]) for row in rows)
        result = sorted(archived.values(), key=lambda m: (m.created_at, m.id))
        for memory in result:
            self._notify("archived", memory)
        return result

    def unconfirmed(self, type: MemoryType | str, since: datetime) -> builtins.list[StaleMemory]:
        """Active memories of a type last confirmed (or, never confirmed, created) before
        `since`, oldest first, each with the stale periods already taken off its confidence."""
        with self.db.read() as conn:
            rows = conn.execute(
                self.dialect.sql(
                    f"SELECT {COLUMNS}, {_CONFIRMED_OR_CREATED}, coalesce(d.periods, 0) "
                    "FROM memories m LEFT JOIN memory_decay d "
                    f"ON d.memory_seq = m.seq AND d.anchor = {_CONFIRMED_OR_CREATED} "
                    f"WHERE m.status = 'active' AND m.type = ? AND {_CONFIRMED_OR_CREATED} < ? "
                    "ORDER BY m.seq"
                ),
                (parse_type(type).value, self.dialect.time_out(since)),
            ).fetchall()
            memories = self._read(conn, rows)
        return [
            StaleMemory(memory, self.dialect.moment(row[13]), int(row[14]))
            for memory, row in zip(memories, rows, strict=True)
        ]

    def decay(
        self, changes: Iterable[ConfidenceDecay], *, now: datetime | None = None
    ) -> builtins.list[Memory]:
        """Lower confidences in one transaction and record the periods each now reflects.

        A memory that is no longer active, was confirmed since it was read (its anchor moved),
        or would not go down is left alone. Never deletes. Returns the memories lowered.
        """
        dialect = self.dialect
        moment = dialect.time_out(now or utc_now())
        lowered: builtins.list[str] = []
        with self.db.write() as conn:
            for change in changes:
                confidence = validate_confidence(change.confidence)
                if change.periods < 1:
                    raise InvalidInputError("A decay covers at least one stale period.")
                anchor = dialect.time_out(change.anchor)
                rows = conn.execute(
                    dialect.sql(
                        "UPDATE memories AS m SET confidence = ? WHERE m.id = ? "
                        f"AND m.status = 'active' AND {_CONFIRMED_OR_CREATED} = ? "
                        "AND m.confidence > ? RETURNING seq"
                    ),
                    (confidence, change.memory_id, anchor, confidence),
                ).fetchall()
                if not rows:
                    continue
                conn.execute(
                    dialect.sql(
                        "INSERT INTO memory_decay (memory_seq, anchor, periods, decayed_at) "
                        "VALUES (?, ?, ?, ?) ON CONFLICT (memory_seq) DO UPDATE SET "
                        "anchor = excluded.anchor, periods = excluded.periods, "
                        "decayed_at = excluded.decayed_at"
                    ),
                    (rows[0][0], anchor, change.periods, moment),
                )
                lowered.append(change.memory_id)
        found = self.get_many(lowered)
        result = [found[memory_id] for memory_id in lowered if memory_id in found]
        for memory in result:
            self._notify("decayed", memory)
        return result

    # -- forgetting for good -------------------------------------------------------------

    def _versions(self, conn: Any, memory_id: str) -> builtins.list[str]:
        """The ids of every version of `memory_id`'s chain, as `conn` sees them now."""
        return [
            str(row[0])
            for row in conn.execute(
                self.dialect.sql(f"{VERSIONS} SELECT id FROM versions"), (memory_id,)
            ).fetchall()
        ]

    def _any_left(self, conn: Any, memory_ids: Sequence[str]) -> bool:
        """Whether any of `memory_ids` is still stored, as `conn` sees it now."""
        dialect = self.dialect
        return bool(
            conn.execute(
                dialect.sql(f"SELECT 1 FROM memories WHERE {dialect.among('id')} LIMIT 1"),
                (dialect.items(memory_ids),),
            ).fetchall()
        )

    def forget(
        self,
        memory_ids: Iterable[str],
        *,
        chain: bool = False,
        redaction: Redaction | None = None,
    ) -> ForgetReport:
        """Remove memories for good (with `chain`, every version of each one's chain), with
        every copy of their text the store holds (see `timothy.store.forget`; without a
        `redaction`, the memory blocks and tool messages of past turns keep theirs: use
        `timothy.memory.forget.forget`, which passes the house's). All or nothing: an
        unknown id raises NotFoundError and changes nothing. Listeners hear "forgotten" for
        each memory removed, with its record as it was."""
        ids = builtins.list(dict.fromkeys(memory_ids))
        if not ids:
            raise InvalidInputError("Name at least one memory to forget.")
        dialect = self.dialect
        change = ("forgotten", ", ".join(ids))
        done: builtins.list[Forgotten] = []

        def write(conn: Any) -> Forgotten:
            wanted: builtins.list[str] = []
            chains = 0
            for memory_id in ids:
                if not conn.execute(
                    dialect.sql("SELECT 1 FROM memories WHERE id = ?"), (memory_id,)
                ).fetchall():
                    earlier = self._retried(change)
                    if earlier is not None and not self._any_left(conn, ids):
                        # The earlier request landed unseen (its reply was lost): this one
                        # is its success, and the window hears what it removed.
                        gone = [str(i) for i in earlier.get("gone") or ids]
                        log.info("forgetting %s had landed unseen; done already", change[1])
                        return [gone_record(i) for i in gone], 0, NOTHING_ERASED
                    raise NotFoundError(f"No memory has the id {memory_id!r}.")
                if not chain:
                    wanted.append(memory_id)
                    continue
                versions = self._versions(conn, memory_id)
                if len(versions) > 1 and not set(versions) <= set(wanted):
                    chains += 1
                wanted += versions
            while True:
                rows = conn.execute(
                    dialect.sql(
                        f"SELECT {COLUMNS} FROM memories m WHERE {dialect.among('m.id')} "
                        f"ORDER BY m.created_at, m.seq{dialect.for_update}"
                    ),
                    (dialect.items(dict.fromkeys(wanted)),),
                ).fetchall()
                if not chain:
                    break
                # On a shared server another machine's edit may have been committing while
                # the chains were read: the lock above waited for it, so read them again,
                # and take (and lock) any version it added; once locked, none can be added.
                added = [
                    version
                    for memory_id in ids
                    for version in self._versions(conn, memory_id)
                    if version not in wanted
                ]
                if not added:
                    break
                wanted += added
            memories = self._read(conn, rows)
            forgotten = {memory.id: memory for memory in memories}
            erased = erase(
                conn,
                dialect,
                forgotten,
                [int(row[0]) for row in rows],
                redaction or Redaction(),
                self._remove,
            )
            done.append((memories, chains, erased))
            return memories, chains, erased

        def landed(conn: Any) -> Forgotten | None:
            if not done:  # the write did not run to its end: it cannot have committed
                return None
            memories = done[0][0]
            # All or nothing: none left, it landed.
            return None if self._any_left(conn, [m.id for m in memories]) else done[0]

        def check() -> dict[str, Any]:
            return {"gone": [m.id for m in done[0][0]] if done else ids}

        with self._forgetting():
            memories, chains, erased = self._saved(write, landed, change, check)
        forgotten = {memory.id: memory for memory in memories}
        report = ForgetReport(
            forgotten=tuple(forgotten),
            chains=chains,
            erased=erased,
            compacted=self._compact(),
        )
        log.info(
            "forgot %d memories (%d chains); %d turns and %d tool messages redacted",
            report.count,
            chains,
            erased.turns_redacted,
            erased.tool_messages_redacted,
        )
        self.known.forget(forgotten)
        for memory in memories:
            self._notify("forgotten", memory)
        return report


# The browser's search on the file. Whole words are looked up stemmed (memories_fts, its
# `content` only: typing "ma" must not list every memory from March and May), so "running"
# finds "runs". The last word, perhaps still being typed, is the start of a word as written
# (memory_words: "runn" finds "running", whose stem "run" it is no prefix of; "lis" finds
# "list", not "likes", whose stem starts with "li", the stem of "lis") or a whole word like
# the others: finishing it and typing the next never lists what it had left out. That word
# is looked for even when it is a stop word (`typed_terms`: "the" on the way to "theatre").
_STEMMED = (
    "SELECT rowid AS seq, bm25(memories_fts) AS score FROM memories_fts WHERE memories_fts MATCH ?"
)
_TYPED = (
    "SELECT rowid AS seq, bm25(memory_words) AS score FROM memory_words WHERE memory_words MATCH ?"
)
_STEMMED_SEQS = "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?"
_TYPED_SEQS = "SELECT rowid FROM memory_words WHERE memory_words MATCH ?"
# Each memory either index finds, scored by both (bm25: lower is better).
_EITHER_INDEX = f"SELECT seq, sum(score) AS score FROM ({_STEMMED} UNION ALL {_TYPED}) GROUP BY seq"


class MemoryRepository(BaseMemoryRepository[Database]):
    """Memories in the SQLite file: FTS5 for the browser's search, and a forget that
    overwrites what it deletes and rebuilds the file."""

    dialect = SQLITE

    def _text_filter(self, text: str, match_any: bool) -> TextFilter | None:
        terms = typed_terms(text)
        if not terms:
            return None
        # \w+ never contains a double quote, so wrapping in quotes is a complete escape.
        # Each term as any of its spellings ("strasse" or "straße": `spellings`).
        either = [
            "(" + " OR ".join(f'"{spelling}"' for spelling in spellings(term)) + ")"
            for term in terms
        ]
        typed = " OR ".join(f'"{spelling}"*' for spelling in spellings(terms[-1], typed=True))
        if len(terms) > 1 and not match_any:
            # Led by the whole words (the index intersects them, however many words the
            # prefix starts) and ranked by them; the last word only narrows.
            return TextFilter(
                join="JOIN memories_fts f ON f.rowid = m.seq",
                where=f"memories_fts MATCH ? AND (m.seq IN ({_TYPED_SEQS}) "
                f"OR m.seq IN ({_STEMMED_SEQS}))",
                params=(
                    f"content : ({' AND '.join(either[:-1])})",
                    typed,
                    f"content : {either[-1]}",
                ),
                order="bm25(memories_fts), m.seq DESC",
            )
        # Any word (or the one word): what either index finds, ranked by both.
        return TextFilter(
            join=f"JOIN ({_EITHER_INDEX}) t ON t.seq = m.seq",
            where="",
            params=(f"content : ({' OR '.join(either)})", typed),
            order="t.score, m.seq DESC",
        )

    def _forgetting(self) -> AbstractContextManager[Any]:
        return secure_deletion(self.db)

    def _remove(self, conn: Any, seqs: Sequence[int], messages_rewritten: bool) -> int:
        return remove_memories(conn, seqs, messages_rewritten)

    def _compact(self) -> bool:
        return compact(self.db)
