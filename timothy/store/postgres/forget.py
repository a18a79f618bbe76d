"""Forgetting for good on the shared server: what removing the memories leaves behind.

Finding and redacting every copy of a forgotten memory's words (past turns, tool messages,
stored reports) and relinking its chain is `timothy.store.forget`'s, shared with the file;
here the rows go: the vectors of every model, then the memories (their entities and decay
records follow by ON DELETE CASCADE), in the forget's one transaction.

What PostgreSQL keeps of deleted rows until VACUUM reclaims them is the server's business:
a plain VACUUM of the touched tables runs afterwards (outside the transaction), and the
report says whether it could (`compacted`). The server's own backups and WAL archive still
hold the text; that is for the server's admin.

Each machine also keeps copies of past turns in its conversation mirror (offline.py). The
forget leaves a new mark in the server's meta (`FORGETS_KEY`), in its transaction; a mirror
that finds the mark moved (at once on the machine that forgot and on those that hear it,
else when the machine next reaches the server) reads its conversations again and rebuilds
its file without the words.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence

import psycopg

from timothy.errors import StoreError
from timothy.store.postgres.database import PgDatabase
from timothy.store.postgres.rows import Conn

log = logging.getLogger(__name__)

FORGETS_KEY = "forgets_mark"  # meta: changes with every forget (a new random value)


def remove_memories(conn: Conn, seqs: Sequence[int], messages_rewritten: bool) -> int:
    """Delete the memories `seqs` with their vectors of every model, and move the forget mark
    (the mirrors' cue); the vectors removed."""
    vectors = 0
    for (model_id,) in conn.execute("SELECT id FROM embedding_models ORDER BY id").fetchall():
        gone = conn.execute(
            f"DELETE FROM vec_model_{int(model_id)} WHERE memory_seq = ANY(%s) "
            "RETURNING memory_seq",
            (list(seqs),),
        ).fetchall()
        vectors += len(gone)
    conn.execute("DELETE FROM memories WHERE seq = ANY(%s)", (list(seqs),))
    move_forgets_mark(conn)
    return vectors


def move_forgets_mark(conn: Conn) -> None:
    """A new forget mark, in the transaction that rewrote messages without forgotten words:
    a conversation mirror that finds it moved reads its conversations again."""
    conn.execute(
        "INSERT INTO meta (key, value) VALUES (%s, %s) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (FORGETS_KEY, uuid.uuid4().hex),
    )


def vacuum(db: PgDatabase) -> bool:
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
