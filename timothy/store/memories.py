"""The memory repository: the seed's lifecycle (stage, add, promote, reject, supersede, archive)."""

from __future__ import annotations

import builtins
import json
import logging
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import apsw

from timothy.errors import IllegalTransitionError, InvalidInputError, NotFoundError
from timothy.store.db import Database, scalar
from timothy.store.forget import ForgetReport, Redaction, compact, erase, secure_deletion
from timothy.store.ids import could_be_stored, new_id
from timothy.store.records import (
    MAX_CONTENT_CHARS,
    MAX_ENTITY_CHARS,
    Memory,
    MemorySource,
    MemoryStatus,
    MemoryType,
    format_time,
    parse_time,
    utc_now,
)
from timothy.text import fts_query, normalise_name

log = logging.getLogger(__name__)

COLUMNS = (
    "m.seq, m.id, m.type, m.content, m.status, m.confidence, m.source, m.session_id, "
    "m.supersedes, m.superseded_by, m.created_at, m.last_confirmed_at, m.last_retrieved_at"
)

_SURROGATE_RE = re.compile("[\ud800-\udfff]")

# The active episodic memories of the sessions of the given memories, in the order they were
# made. (The unary + keeps SQLite on the session index: a store holds far more active
# episodes than a few sessions do.)
_SESSIONS_SQL = """
SELECT id, session_id FROM memories
WHERE session_id IN (
    SELECT session_id FROM memories
    WHERE id IN (SELECT value FROM json_each(?)) AND session_id IS NOT NULL
)
AND +type = 'episodic' AND +status = 'active'
ORDER BY session_id, created_at, seq
"""


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
_VERSIONS = """
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


def validate_content(content: str) -> str:
    if not isinstance(content, str):
        raise InvalidInputError("A memory's text must be a string.")
    text = content.strip()
    if _SURROGATE_RE.search(text):
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
        if _SURROGATE_RE.search(name):
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


def _time(value: object) -> datetime | None:
    return None if value is None else parse_time(str(value))


def row_to_memory(row: Sequence[Any], entities: tuple[str, ...]) -> Memory:
    created = _time(row[10])
    assert created is not None
    return Memory(
        id=str(row[1]),
        type=MemoryType(str(row[2])),
        content=str(row[3]),
        status=MemoryStatus(str(row[4])),
        confidence=float(row[5]),
        source=MemorySource(str(row[6])),
        session_id=None if row[7] is None else str(row[7]),
        supersedes=None if row[8] is None else str(row[8]),
        superseded_by=None if row[9] is None else str(row[9]),
        created_at=created,
        last_confirmed_at=_time(row[11]),
        last_retrieved_at=_time(row[12]),
        entities=entities,
    )


def load_entities(conn: apsw.Connection, seqs: Sequence[int]) -> dict[int, tuple[str, ...]]:
    """Entity names of many memories in one query, in the order they were given."""
    if not seqs:
        return {}
    found: dict[int, list[str]] = {}
    for seq, name in conn.execute(
        "SELECT memory_seq, name FROM memory_entities "
        "WHERE memory_seq IN (SELECT value FROM json_each(?)) ORDER BY memory_seq, position",
        (json.dumps(list(seqs)),),
    ):
        found.setdefault(int(seq), []).append(str(name))
    return {seq: tuple(names) for seq, names in found.items()}


def rows_to_memories(conn: apsw.Connection, rows: Sequence[Sequence[Any]]) -> list[Memory]:
    entities = load_entities(conn, [int(row[0]) for row in rows])
    return [row_to_memory(row, entities.get(int(row[0]), ())) for row in rows]


class MemoryRepository:
    """Every read and write of memories; SQL lives here, next to the method that runs it."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.listeners: list[MemoryListener] = []

    # -- reading -----------------------------------------------------------------------

    def get(self, memory_id: str) -> Memory:
        if not could_be_stored(memory_id):
            raise NotFoundError(f"No memory has the id {memory_id!r}.")
        with self.db.read() as conn:
            rows = conn.execute(f"SELECT {COLUMNS} FROM memories m WHERE m.id = ?", (memory_id,))
            memories = rows_to_memories(conn, rows.fetchall())
        if not memories:
            raise NotFoundError(f"No memory has the id {memory_id!r}.")
        return memories[0]

    def get_many(self, memory_ids: Iterable[str]) -> dict[str, Memory]:
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return {}
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {COLUMNS} FROM memories m WHERE m.id IN (SELECT value FROM json_each(?))",
                (json.dumps(ids),),
            ).fetchall()
            return {memory.id: memory for memory in rows_to_memories(conn, rows)}

    def around(
        self, memory_ids: Iterable[str], width: int, known: Mapping[str, Memory] | None = None
    ) -> dict[str, builtins.list[Neighbour]]:
        """For each of `memory_ids` that is an active episodic memory of a session: the
        active episodic memories of that session within `width` places of it, in the order
        they were made (created_at, then insertion), nearest first. A memory of no session,
        or of another type, has no neighbours. `known` (id -> memory) saves reading again
        the neighbours the caller already holds."""
        ids = list(dict.fromkeys(memory_ids))
        if not ids or width <= 0:
            return {}
        known = known or {}
        with self.db.read() as conn:
            said: dict[str, list[str]] = {}
            for memory_id, session in conn.execute(_SESSIONS_SQL, (json.dumps(ids),)):
                said.setdefault(str(session), []).append(str(memory_id))
            if not said:
                return {}
            # A seed is in its session's list only if it is itself an active episode.
            places = {m: (order, n) for order in said.values() for n, m in enumerate(order)}
            pairs: list[tuple[str, str, int]] = []
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
                    f"SELECT {COLUMNS} FROM memories m "
                    "WHERE m.id IN (SELECT value FROM json_each(?))",
                    (json.dumps(wanted),),
                ).fetchall()
                read = {memory.id: memory for memory in rows_to_memories(conn, rows)}
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
    ) -> list[Memory]:
        """Memories matching every filter given, newest first (or best text match first).

        `text` is normalised like a recall query; every term must appear (any one, with
        `match_any`, best match first), the last one may be a prefix (search as you type).
        """
        where: list[str] = []
        params: list[object] = []
        join = ""
        order = "m.seq ASC" if oldest_first else "m.seq DESC"
        if text is not None and text.strip():
            match = fts_query(text, operator="OR" if match_any else "AND", prefix_last=True)
            if match is None:
                return []
            join = "JOIN memories_fts f ON f.rowid = m.seq"
            where.append("memories_fts MATCH ?")
            # What the memories say, not the day they were made: typing "ma" must not
            # list every memory from March and May.
            params.append(f"content : ({match})")
            order = "bm25(memories_fts), m.seq DESC"
        if status is not None:
            statuses = [status] if isinstance(status, str) else list(status)
            where.append("m.status IN (SELECT value FROM json_each(?))")
            params.append(json.dumps([parse_status(s).value for s in statuses]))
        if type is not None:
            types = [type] if isinstance(type, str) else list(type)
            where.append("m.type IN (SELECT value FROM json_each(?))")
            params.append(json.dumps([parse_type(t).value for t in types]))
        if session_id is not None:
            where.append("m.session_id = ?")
            params.append(session_id)
        sql = f"SELECT {COLUMNS} FROM memories m {join}"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY {order} LIMIT ? OFFSET ?"
        params += [-1 if limit is None else int(limit), int(offset)]
        with self.db.read() as conn:
            return rows_to_memories(conn, conn.execute(sql, params).fetchall())

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
            return int(scalar(conn, sql, params))

    def unconfirmed_since(self, cutoffs: Mapping[MemoryType, datetime]) -> builtins.list[Memory]:
        """Active memories of each given type last confirmed (or, never confirmed, created)
        before that type's cutoff, the longest unconfirmed first."""
        found: builtins.list[Memory] = []
        with self.db.read() as conn:
            for memory_type, cutoff in cutoffs.items():
                rows = conn.execute(
                    f"SELECT {COLUMNS} FROM memories m WHERE m.status = 'active' "
                    "AND m.type = ? AND coalesce(m.last_confirmed_at, m.created_at) < ?",
                    (parse_type(memory_type).value, format_time(cutoff)),
                ).fetchall()
                found.extend(rows_to_memories(conn, rows))
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
                f"{_VERSIONS} SELECT {COLUMNS} FROM memories m JOIN versions v ON v.id = m.id "
                "ORDER BY m.created_at, m.seq",
                (memory_id,),
            ).fetchall()
            return rows_to_memories(conn, rows)

    # -- writing -----------------------------------------------------------------------

    def _notify(self, event: str, memory: Memory) -> None:
        for listener in list(self.listeners):
            try:
                listener(event, memory)
            except Exception:  # a listener must never undo or fail a committed write
                log.exception("memory listener failed on %s", event)

    def insert(self, conn: apsw.Connection, memory: Memory) -> None:
        """Write one memory row and its entities as they are (inside the caller's transaction)."""
        conn.execute(
            "INSERT INTO memories (id, type, content, status, confidence, source, session_id, "
            "supersedes, superseded_by, created_at, last_confirmed_at, last_retrieved_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                memory.id,
                memory.type.value,
                memory.content,
                memory.status.value,
                memory.confidence,
                memory.source.value,
                memory.session_id,
                memory.supersedes,
                memory.superseded_by,
                format_time(memory.created_at),
                None if memory.last_confirmed_at is None else format_time(memory.last_confirmed_at),
                None if memory.last_retrieved_at is None else format_time(memory.last_retrieved_at),
            ),
        )
        seq = conn.last_insert_rowid()
        conn.executemany(
            "INSERT INTO memory_entities (memory_seq, position, name, norm) VALUES (?, ?, ?, ?)",
            [
                (seq, position, name, norm)
                for position, (name, norm) in enumerate(validate_entities(memory.entities))
            ],
        )

    def _create(
        self,
        content: str,
        *,
        status: MemoryStatus,
        type: MemoryType | str,
        entities: Iterable[str],
        confidence: float,
        source: MemorySource | str,
        session_id: str | None,
        now: datetime | None,
        supersedes: str | None = None,
    ) -> Memory:
        moment = now or utc_now()
        memory = Memory(
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
        return memory

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
        memory = self._create(
            content,
            status=MemoryStatus.STAGED,
            type=type,
            entities=entities,
            confidence=confidence,
            source=source,
            session_id=session_id,
            now=now,
        )
        return self._save_new(memory, "staged")

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
        memory = self._create(
            content,
            status=MemoryStatus.ACTIVE,
            type=type,
            entities=entities,
            confidence=confidence,
            source=source,
            session_id=session_id,
            now=now,
        )
        return self._save_new(memory, "added")

    def _transition(
        self,
        memory_id: str,
        *,
        allowed: tuple[MemoryStatus, ...],
        verb: str,
        assignments: str,
        params: Sequence[object],
    ) -> None:
        """Apply an UPDATE only from an allowed status; otherwise raise and change nothing."""
        if not could_be_stored(memory_id):
            raise NotFoundError(f"No memory has the id {memory_id!r}.")
        with self.db.write() as conn:
            rows = conn.execute("SELECT status FROM memories WHERE id = ?", (memory_id,)).fetchall()
            if not rows:
                raise NotFoundError(f"No memory has the id {memory_id!r}.")
            current = MemoryStatus(str(rows[0][0]))
            if current not in allowed:
                names = " or ".join(s.value for s in allowed)
                raise IllegalTransitionError(
                    f"Memory {memory_id} is {current.value}; only a {names} memory can be {verb}."
                )
            conn.execute(f"UPDATE memories SET {assignments} WHERE id = ?", (*params, memory_id))

    def promote(self, memory_id: str, *, now: datetime | None = None) -> Memory:
        """Staged -> active; stamps last_confirmed_at."""
        moment = format_time(now or utc_now())
        self._transition(
            memory_id,
            allowed=(MemoryStatus.STAGED,),
            verb="confirmed",
            assignments="status = 'active', last_confirmed_at = ?",
            params=(moment,),
        )
        memory = self.get(memory_id)
        self._notify("promoted", memory)
        return memory

    def reconfirm(self, memory_id: str, *, now: datetime | None = None) -> Memory:
        """The owner says an active memory is still true: stamps last_confirmed_at."""
        moment = format_time(now or utc_now())
        self._transition(
            memory_id,
            allowed=(MemoryStatus.ACTIVE,),
            verb="re-confirmed",
            assignments="last_confirmed_at = ?",
            params=(moment,),
        )
        memory = self.get(memory_id)
        self._notify("reconfirmed", memory)
        return memory

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
        self._transition(
            memory_id,
            allowed=(MemoryStatus.STAGED, MemoryStatus.ACTIVE),
            verb="rejected",
            assignments="status = 'rejected'",
            params=(),
        )
        memory = self.get(memory_id)
        self._notify("rejected", memory)
        return memory

    def archive(self, memory_id: str, *, now: datetime | None = None) -> Memory:
        """Active -> archived: kept, inspectable, no longer recalled."""
        self._transition(
            memory_id,
            allowed=(MemoryStatus.ACTIVE,),
            verb="archived",
            assignments="status = 'archived'",
            params=(),
        )
        memory = self.get(memory_id)
        self._notify("archived", memory)
        return memory

    def restore(self, memory_id: str, *, now: datetime | None = None) -> Memory:
        """Undo a rejection or an archival: rejected -> staged (the owner decides again),
        archived -> active. Its confirmation time is left as it was."""
        with self.db.write() as conn:
            rows = conn.execute(
                "UPDATE memories SET status = CASE status WHEN 'rejected' THEN 'staged' "
                "ELSE 'active' END WHERE id = ? AND status IN ('rejected', 'archived') "
                "RETURNING id",
                (memory_id,),
            ).fetchall()
            if not rows:
                current = scalar(conn, "SELECT status FROM memories WHERE id = ?", (memory_id,))
                if current is None:
                    raise NotFoundError(f"No memory has the id {memory_id!r}.")
                raise IllegalTransitionError(
                    f"Memory {memory_id} is {current}; only a rejected or archived memory "
                    "can be restored."
                )
        memory = self.get(memory_id)
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
        allowed = (MemoryStatus.STAGED, MemoryStatus.ACTIVE)
        if old.status not in allowed:
            raise IllegalTransitionError(
                f"Memory {memory_id} is {old.status.value}; only a staged or active memory "
                "can be edited."
            )
        new = self._create(
            content,
            status=MemoryStatus.ACTIVE,
            type=old.type if type is None else type,
            entities=old.entities if entities is None else entities,
            confidence=1.0 if confidence is None else confidence,
            source=source,
            session_id=old.session_id,
            now=now,
            supersedes=old.id,
        )
        with self.db.write() as conn:
            changed = conn.execute(
                "UPDATE memories SET status = 'superseded', superseded_by = ? "
                "WHERE id = ? AND status IN ('staged', 'active') RETURNING id",
                (new.id, old.id),
            ).fetchall()
            if not changed:  # someone else changed it between our read and this write
                raise IllegalTransitionError(f"Memory {memory_id} changed meanwhile; try again.")
            self.insert(conn, new)
        self._notify("superseded", new)
        return new

    def mark_retrieved(self, memory_ids: Iterable[str], *, now: datetime | None = None) -> None:
        """Stamp last_retrieved_at only: retrieval is not endorsement."""
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            return
        with self.db.write() as conn:
            conn.execute(
                "UPDATE memories SET last_retrieved_at = ? "
                "WHERE id IN (SELECT value FROM json_each(?))",
                (format_time(now or utc_now()), json.dumps(ids)),
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
        ids = list(dict.fromkeys(member_ids))
        if len(ids) < 2:
            raise InvalidInputError("A merge needs at least two different memories.")
        text = validate_content(content)
        moment = now or utc_now()
        with self.db.write() as conn:
            rows = conn.execute(
                f"SELECT {COLUMNS} FROM memories m "
                "WHERE m.id IN (SELECT value FROM json_each(?)) ORDER BY m.created_at, m.seq",
                (json.dumps(ids),),
            ).fetchall()
            members = rows_to_memories(conn, rows)
            seqs: dict[str, Any] = {
                memory.id: row[0] for memory, row in zip(members, rows, strict=True)
            }
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
            canonical_seq = scalar(conn, "SELECT seq FROM memories WHERE id = ?", (canonical.id,))
            changed = conn.execute(
                "UPDATE memories SET status = 'superseded', superseded_by = ? "
                "WHERE id IN (SELECT value FROM json_each(?)) AND status = 'active' RETURNING id",
                (canonical.id, json.dumps(ids)),
            ).fetchall()
            if len(changed) != len(ids):  # cannot happen inside this transaction; be sure
                raise IllegalTransitionError("The memories changed meanwhile; try again.")
            if canonical.last_confirmed_at is not None:
                # The canonical memory counts its staleness from the newest confirmation, so it
                # keeps the decay already applied for it: no stale period is taken off twice.
                anchor = format_time(canonical.last_confirmed_at)
                conn.execute(
                    "INSERT INTO memory_decay (memory_seq, anchor, periods, decayed_at) "
                    "SELECT ?, anchor, max(periods), max(decayed_at) FROM memory_decay "
                    "WHERE memory_seq IN (SELECT value FROM json_each(?)) AND anchor = ? "
                    "HAVING count(*) > 0",
                    (canonical_seq, json.dumps(list(seqs.values())), anchor),
                )
        self._notify("superseded", canonical)
        return canonical

    def unretrieved(self, type: MemoryType | str, since: datetime) -> builtins.list[Memory]:
        """Active memories of a type neither retrieved nor (when never retrieved) created
        after `since`, oldest first."""
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT {COLUMNS} FROM memories m WHERE m.status = 'active' AND m.type = ? "
                f"AND {_RETRIEVED_OR_CREATED} <= ? ORDER BY m.seq",
                (parse_type(type).value, format_time(since)),
            ).fetchall()
            return rows_to_memories(conn, rows)

    def archive_unretrieved(
        self, type: MemoryType | str, since: datetime, *, now: datetime | None = None
    ) -> builtins.list[Memory]:
        """Archive, in one transaction, what `unretrieved` lists; returns them archived.

        The condition is checked in the write itself, so a memory recalled a moment ago stays.
        """
        with self.db.write() as conn:
            rows = conn.execute(
                "UPDATE memories AS m SET status = 'archived' WHERE m.status = 'active' "
                f"AND m.type = ? AND {_RETRIEVED_OR_CREATED} <= ? RETURNING id",
                (parse_type(type).value, format_time(since)),
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
                f"SELECT {COLUMNS}, {_CONFIRMED_OR_CREATED}, coalesce(d.periods, 0) "
                "FROM memories m LEFT JOIN memory_decay d "
                f"ON d.memory_seq = m.seq AND d.anchor = {_CONFIRMED_OR_CREATED} "
                f"WHERE m.status = 'active' AND m.type = ? AND {_CONFIRMED_OR_CREATED} < ? "
                "ORDER BY m.seq",
                (parse_type(type).value, format_time(since)),
            ).fetchall()
            memories = rows_to_memories(conn, rows)
        return [
            StaleMemory(memory, parse_time(str(row[13])), int(str(row[14])))
            for memory, row in zip(memories, rows, strict=True)
        ]

    def decay(
        self, changes: Iterable[ConfidenceDecay], *, now: datetime | None = None
    ) -> builtins.list[Memory]:
        """Lower confidences in one transaction and record the periods each now reflects.

        A memory that is no longer active, was confirmed since it was read (its anchor moved),
        or would not go down is left alone. Never deletes. Returns the memories lowered.
        """
        moment = format_time(now or utc_now())
        lowered: builtins.list[str] = []
        with self.db.write() as conn:
            for change in changes:
                confidence = validate_confidence(change.confidence)
                if change.periods < 1:
                    raise InvalidInputError("A decay covers at least one stale period.")
                anchor = format_time(change.anchor)
                rows = conn.execute(
                    "UPDATE memories AS m SET confidence = ? WHERE m.id = ? "
                    f"AND m.status = 'active' AND {_CONFIRMED_OR_CREATED} = ? "
                    "AND m.confidence > ? RETURNING seq",
                    (confidence, change.memory_id, anchor, confidence),
                ).fetchall()
                if not rows:
                    continue
                conn.execute(
                    "INSERT INTO memory_decay (memory_seq, anchor, periods, decayed_at) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT (memory_seq) DO UPDATE SET "
                    "anchor = excluded.anchor, periods = excluded.periods, "
                    "decayed_at = excluded.decayed_at",
                    (rows[0][0], anchor, change.periods, moment),
                )
                lowered.append(change.memory_id)
        found = self.get_many(lowered)
        result = [found[memory_id] for memory_id in lowered if memory_id in found]
        for memory in result:
            self._notify("decayed", memory)
        return result

    # -- forgetting for good -------------------------------------------------------------

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
        ids = list(dict.fromkeys(memory_ids))
        if not ids:
            raise InvalidInputError("Name at least one memory to forget.")
        with secure_deletion(self.db), self.db.write() as conn:
            wanted: builtins.list[str] = []
            chains = 0
            for memory_id in ids:
                if scalar(conn, "SELECT 1 FROM memories WHERE id = ?", (memory_id,)) is None:
                    raise NotFoundError(f"No memory has the id {memory_id!r}.")
                if not chain:
                    wanted.append(memory_id)
                    continue
                versions = [
                    str(row[0])
                    for row in conn.execute(f"{_VERSIONS} SELECT id FROM versions", (memory_id,))
                ]
                if len(versions) > 1 and not set(versions) <= set(wanted):
                    chains += 1
                wanted += versions
            rows = conn.execute(
                f"SELECT {COLUMNS} FROM memories m WHERE m.id IN "
                "(SELECT value FROM json_each(?)) ORDER BY m.created_at, m.seq",
                (json.dumps(list(dict.fromkeys(wanted))),),
            ).fetchall()
            memories = rows_to_memories(conn, rows)
            forgotten = {memory.id: memory for memory in memories}
            erased = erase(
                conn, forgotten, [int(str(row[0])) for row in rows], redaction or Redaction()
            )
        report = ForgetReport(
            forgotten=tuple(forgotten),
            chains=chains,
            erased=erased,
            compacted=compact(self.db),
        )
        log.info(
            "forgot %d memories (%d chains); %d turns and %d tool messages redacted",
            report.count,
            chains,
            erased.turns_redacted,
            erased.tool_messages_redacted,
        )
        for memory in memories:
            self._notify("forgotten", memory)
        return report
