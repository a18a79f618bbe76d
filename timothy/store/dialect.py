"""What the two engines spell differently, so one implementation of each repository runs on both.

The repositories (`sessions.py`, `memories.py`, `forget.py`) write their SQL once, with `?`
placeholders and the SQL both SQLite and PostgreSQL read (`CAST(? AS TEXT)`, `IS NOT DISTINCT
FROM`, `RETURNING`, `ON CONFLICT`), and ask the engine's `Dialect` for the rest: the placeholder,
how a list of values is passed and matched, a few function names, row locks, and how a moment
is written to and read from a time column (ISO text in the file, `timestamptz` on the server).
Only what really differs stays in an engine's own module: the text search, the vectors, what
a removal leaves behind, the outbox.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any, Protocol

from timothy.store.records import format_time, parse_time


class Transactions(Protocol):
    """What a repository asks of its engine's database: a connection to read on and a
    transaction to write in (this thread's; a write's own reads see what it wrote)."""

    def read(self) -> AbstractContextManager[Any]: ...
    def write(self) -> AbstractContextManager[Any]: ...


class Dialect:
    """The SQLite file's spelling; `PostgresDialect` overrides what the server spells otherwise."""

    name = "sqlite"
    # What `LIMIT ?` takes for "no limit".
    no_limit: Any = -1
    # The larger of two values, and the place of a substring (0: not found).
    greatest = "max"
    instr = "instr"
    # Appended to a SELECT whose rows the transaction goes on to change. SQLite's write
    # transaction (BEGIN IMMEDIATE) already holds the whole file.
    for_update = ""
    # Put before a column in a condition to keep the planner off that column's index (a
    # unary + in SQLite; PostgreSQL's planner needs no such hint).
    unindexed = "+"

    def sql(self, text: str) -> str:
        """`text` with this engine's placeholders."""
        return text

    def among(self, column: str) -> str:
        """A condition: `column` is one of the values of the next parameter (see `items`)."""
        return f"{column} IN (SELECT value FROM json_each(?))"

    def items(self, values: Iterable[Any]) -> Any:
        """Values as the parameter of an `among` condition."""
        return json.dumps(list(values))

    def time_out(self, moment: datetime | None) -> Any:
        """A moment as a time column's parameter."""
        return None if moment is None else format_time(moment)

    def time_in(self, value: Any) -> datetime | None:
        """A time column's value as a moment (UTC)."""
        return None if value is None else parse_time(str(value))

    def moment(self, value: Any) -> datetime:
        """A NOT NULL time column's value as a moment (UTC)."""
        return parse_time(str(value))

    def executemany(self, conn: Any, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            conn.cursor().executemany(self.sql(sql), rows)


@functools.lru_cache(maxsize=1024)
def _format_placeholders(text: str) -> str:
    return text.replace("%", "%%").replace("?", "%s")


def _utc(value: Any) -> datetime | None:
    return None if value is None else value.astimezone(UTC)


class PostgresDialect(Dialect):
    """PostgreSQL through psycopg 3: `%s` placeholders, arrays, `timestamptz` columns."""

    name = "postgres"
    no_limit = None
    greatest = "greatest"
    instr = "strpos"
    for_update = " FOR UPDATE"
    unindexed = ""

    def sql(self, text: str) -> str:
        return _format_placeholders(text)

    def among(self, column: str) -> str:
        return f"{column} = ANY(?)"

    def items(self, values: Iterable[Any]) -> Any:
        return list(values)

    def time_out(self, moment: datetime | None) -> Any:
        return moment

    def time_in(self, value: Any) -> datetime | None:
        return _utc(value)

    def moment(self, value: Any) -> datetime:
        return value.astimezone(UTC)  # type: ignore[no-any-return]


SQLITE = Dialect()
POSTGRES = PostgresDialect()
