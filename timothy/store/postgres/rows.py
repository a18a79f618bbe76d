"""How memory rows are read on PostgreSQL: the connection type, and the owner's local day
that the text leg finds a memory by (the columns and their reading are `timothy.store.memories`'s,
shared with the file)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg

from timothy.store.dialect import POSTGRES
from timothy.store.memories import COLUMNS
from timothy.store.memories import rows_to_memories as _rows_to_memories
from timothy.store.records import Memory

Conn = psycopg.Connection[tuple[Any, ...]]

__all__ = ["COLUMNS", "Conn", "local_day", "rows_to_memories"]

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


def rows_to_memories(conn: Conn, rows: Sequence[Sequence[Any]]) -> list[Memory]:
    """Memory rows (`COLUMNS`) read on the server as memories, with their entities."""
    return _rows_to_memories(conn, rows, POSTGRES)
