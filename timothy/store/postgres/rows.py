"""How memory rows are read on PostgreSQL: the columns, the chain query, entities."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import psycopg

from timothy.store.records import Memory, MemorySource, MemoryStatus, MemoryType

Conn = psycopg.Connection[tuple[Any, ...]]

COLUMNS = (
    "m.seq, m.id, m.type, m.content, m.status, m.confidence, m.source, m.session_id, "
    "m.supersedes, m.superseded_by, m.created_at, m.last_confirmed_at, m.last_retrieved_at"
)
CONFIRMED_OR_CREATED = "coalesce(m.last_confirmed_at, m.created_at)"
RETRIEVED_OR_CREATED = "coalesce(m.last_retrieved_at, m.created_at)"

# Every version of the chain of the memory %(id)s, as the CTE `versions (id)`.
VERSIONS = """
WITH RECURSIVE
forward (id, next) AS (
    SELECT id, superseded_by FROM memories WHERE id = %(id)s
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

_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def local_day(moment: datetime) -> str:
    """The owner's local day of a moment in words ("7 May 2023"), as the text leg finds it."""
    local = moment.astimezone()
    return f"{local.day} {_MONTHS[local.month - 1]} {local.year}"


def _utc(value: datetime | None) -> datetime | None:
    return None if value is None else value.astimezone(UTC)


def row_to_memory(row: Sequence[Any], entities: tuple[str, ...]) -> Memory:
    created = _utc(row[10])
    assert created is not None
    return Memory(
        id=str(row[1]),
        type=MemoryType(str(row[2])),
        content=str(row[3]),
        status=MemoryStatus(str(row[4])),
        confidence=float(row[5]),
        source=MemorySource(str(row[6])),
        session_id=row[7],
        supersedes=row[8],
        superseded_by=row[9],
        created_at=created,
        last_confirmed_at=_utc(row[11]),
        last_retrieved_at=_utc(row[12]),
        entities=entities,
    )


def load_entities(conn: Conn, seqs: Sequence[int]) -> dict[int, tuple[str, ...]]:
    if not seqs:
        return {}
    found: dict[int, list[str]] = {}
    for seq, name in conn.execute(
        "SELECT memory_seq, name FROM memory_entities WHERE memory_seq = ANY(%s) "
        "ORDER BY memory_seq, position",
        (list(seqs),),
    ):
        found.setdefault(int(seq), []).append(str(name))
    return {seq: tuple(names) for seq, names in found.items()}


def rows_to_memories(conn: Conn, rows: Sequence[Sequence[Any]]) -> list[Memory]:
    entities = load_entities(conn, [int(row[0]) for row in rows])
    return [row_to_memory(row, entities.get(int(row[0]), ())) for row in rows]
