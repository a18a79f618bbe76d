"""The schema, as numbered migrations; `PRAGMA user_version` holds how many have run.

A migration is SQL (a script of statements) or, when data must be rewritten in ways SQL says
badly, a Python function given the connection, named for its number like llm's:

    def m006_split_names(conn: apsw.Connection) -> None:
        for seq, name in conn.execute("SELECT seq, name FROM ...").fetchall():
            conn.execute("UPDATE ... SET ... WHERE seq = ?", (..., seq))

    MIGRATIONS = [..., m006_split_names]

Migration N is MIGRATIONS[N - 1]. Each runs in its own write transaction together with the
user_version bump (`Database._migrate`), so it applies whole or not at all. A function must
leave that transaction open: no COMMIT, ROLLBACK or BEGIN (a `with conn:` savepoint is fine),
and no `PRAGMA foreign_keys`, which SQLite ignores inside a transaction.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

import apsw

from timothy.store.vec_storage import (
    Batch,
    ShadowLayoutError,
    create_float_rows,
    read_chunks,
    read_rows,
)
from timothy.text import strip_accents

log = logging.getLogger(__name__)

Migration = str | Callable[[apsw.Connection], None]


class _Model:
    """An embedding model's tables, as the vec_storage readers need them."""

    def __init__(self, model_id: int, dimension: int) -> None:
        self.table = f"vec_model_{model_id}"
        self.rows_table = f"vector_rows_{model_id}"
        self.dimension = dimension


def m007_float_rows(conn: apsw.Connection) -> None:
    """Each model's vectors copied into a table of one row per vector, keyed by memory seq,
    so the in-memory copy can keep only int8 codes and read back the few float rows it
    re-scores exactly. Read from vec0's chunks (the layout-free way if they are not laid out
    as expected); a vector of a memory no longer stored is left out."""
    stored = {int(str(row[0])) for row in conn.execute("SELECT seq FROM memories")}
    for model_id, dimension in conn.execute(
        "SELECT id, dimension FROM embedding_models ORDER BY id"
    ).fetchall():
        model = _Model(int(str(model_id)), int(str(dimension)))
        create_float_rows(conn, model.rows_table)
        present = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (model.table,)
        ).fetchall()
        if not present:
            continue
        insert = f'INSERT INTO "{model.rows_table}" (seq, vector) VALUES (?, ?)'
        try:
            _copy_rows(conn, insert, stored, read_chunks(conn, model))
        except ShadowLayoutError as exc:
            log.warning("reading %s through vec0 (slow): %s", model.table, exc)
            conn.execute(f'DELETE FROM "{model.rows_table}"')
            _copy_rows(conn, insert, stored, read_rows(conn, model))


def m009_entity_keys(conn: apsw.Connection) -> None:
    """Each entity name's key, the form the entity leg matches it by (timothy.text.name_key:
    the stored form without the accents of Latin letters), so "Jose" finds "José". A name
    written in ASCII is its own key; the others are worked out here, in Python."""
    conn.execute(
        """
        ALTER TABLE memory_entities ADD COLUMN name_key TEXT NOT NULL DEFAULT '';
        UPDATE memory_entities SET name_key = norm;
        DROP INDEX IF EXISTS memory_entities_by_norm;
        CREATE INDEX memory_entities_by_key ON memory_entities (name_key, memory_seq);
        """
    )
    # Characters and bytes differ in number: not ASCII.
    not_ascii = "length(norm) <> length(CAST(norm AS BLOB))"
    for seq, norm in conn.execute(
        f"SELECT memory_seq, norm FROM memory_entities WHERE {not_ascii}"
    ).fetchall():
        conn.execute(
            "UPDATE memory_entities SET name_key = ? WHERE memory_seq = ? AND norm = ?",
            (strip_accents(str(norm)), seq, norm),
        )


def _copy_rows(
    conn: apsw.Connection, insert: str, stored: set[int], batches: Iterator[Batch]
) -> None:
    for seqs, rows in batches:
        conn.executemany(
            insert,
            (
                (seq, rows[place].astype("<f4", copy=False).tobytes())
                for place, seq in enumerate(seqs.tolist())
                if seq in stored
            ),
        )


# Never edit a migration that has shipped: add a new one at the end.
MIGRATIONS: list[Migration] = [
    # 1: memories, their entities, full text, embedding models, key-value meta.
    """
    CREATE TABLE memories (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL
            CHECK (type IN ('semantic', 'preference', 'episodic', 'procedural')),
        content TEXT NOT NULL,
        status TEXT NOT NULL
            CHECK (status IN ('staged', 'active', 'superseded', 'rejected', 'archived')),
        confidence REAL NOT NULL CHECK (confidence >= 0.0 AND confidence <= 1.0),
        source TEXT NOT NULL
            CHECK (source IN ('extraction', 'remember', 'manual', 'import', 'consolidation')),
        session_id TEXT,
        supersedes TEXT,
        superseded_by TEXT,
        created_at TEXT NOT NULL,
        last_confirmed_at TEXT,
        last_retrieved_at TEXT
    );
    CREATE INDEX memories_by_status ON memories (status, type, created_at);
    CREATE INDEX memories_by_superseded_by ON memories (superseded_by);
    CREATE INDEX memories_by_session ON memories (session_id);

    CREATE TABLE memory_entities (
        memory_seq INTEGER NOT NULL REFERENCES memories (seq) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        name TEXT NOT NULL,
        norm TEXT NOT NULL,
        PRIMARY KEY (memory_seq, norm)
    ) WITHOUT ROWID;
    CREATE INDEX memory_entities_by_norm ON memory_entities (norm, memory_seq);

    CREATE VIRTUAL TABLE memories_fts USING fts5 (
        content,
        content = 'memories',
        content_rowid = 'seq',
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
    END;
    CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, content)
        VALUES ('delete', old.seq, old.content);
    END;
    CREATE TRIGGER memories_fts_update AFTER UPDATE OF content ON memories BEGIN
        INSERT INTO memories_fts (memories_fts, rowid, content)
        VALUES ('delete', old.seq, old.content);
        INSERT INTO memories_fts (rowid, content) VALUES (new.seq, new.content);
    END;

    CREATE TABLE embedding_models (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        dimension INTEGER NOT NULL CHECK (dimension > 0),
        created_at TEXT NOT NULL
    );

    CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    """,
    # 2: conversations (sessions) and their messages, with what the model saw each turn.
    """
    CREATE TABLE sessions (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        title TEXT NOT NULL DEFAULT '',
        title_source TEXT NOT NULL DEFAULT 'none'
            CHECK (title_source IN ('none', 'fallback', 'auto', 'owner')),
        provider TEXT,
        model TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        deleted_at TEXT
    );
    CREATE INDEX sessions_by_updated ON sessions (deleted_at, updated_at);

    CREATE TABLE messages (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
        role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'tool', 'summary')),
        content TEXT NOT NULL,
        tool_calls TEXT,
        tool_call_id TEXT,
        status TEXT NOT NULL DEFAULT 'complete'
            CHECK (status IN ('complete', 'streaming', 'cancelled', 'failed')),
        error TEXT,
        provider TEXT,
        model TEXT,
        input_tokens INTEGER,
        output_tokens INTEGER,
        cached_tokens INTEGER,
        memory_block TEXT,
        recall TEXT,
        compacted_by TEXT,
        created_at TEXT NOT NULL
    );
    CREATE INDEX messages_by_session ON messages (session_id, seq);

    CREATE VIRTUAL TABLE messages_fts USING fts5 (
        content,
        content = 'messages',
        content_rowid = 'seq',
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
        INSERT INTO messages_fts (rowid, content) VALUES (new.seq, new.content);
    END;
    CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, content)
        VALUES ('delete', old.seq, old.content);
    END;
    CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
        INSERT INTO messages_fts (messages_fts, rowid, content)
        VALUES ('delete', old.seq, old.content);
        INSERT INTO messages_fts (rowid, content) VALUES (new.seq, new.content);
    END;
    """,
    # 3: which vectors were written when (a counter per model), so an in-memory copy of a
    # model's vectors can catch up with writes (from any process) without re-reading them all.
    """
    CREATE TABLE vector_changes (
        model_id INTEGER NOT NULL REFERENCES embedding_models (id) ON DELETE CASCADE,
        memory_seq INTEGER NOT NULL,
        change INTEGER NOT NULL,
        PRIMARY KEY (model_id, memory_seq)
    ) WITHOUT ROWID;
    CREATE INDEX vector_changes_by_change ON vector_changes (model_id, change);
    """,
    # 4: consolidation's decay bookkeeping. For each memory whose confidence was lowered for
    # going unconfirmed: the moment the stale periods count from (its last_confirmed_at, or
    # created_at when never confirmed) and how many whole periods have been taken off. A new
    # confirmation moves the anchor, so a stale record simply stops matching.
    """
    CREATE TABLE memory_decay (
        memory_seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE,
        anchor TEXT NOT NULL,
        periods INTEGER NOT NULL CHECK (periods > 0),
        decayed_at TEXT NOT NULL
    );
    """,
    # 5: full text also indexes the day each memory was made, in words ("7 May 2023", the
    # owner's local date), so a question that names a date finds what was said then. The
    # index becomes contentless with delete: removing a row never needs its old words back,
    # so a local date taken when the row was written can never disagree with a later one.
    """
    DROP TRIGGER memories_fts_insert;
    DROP TRIGGER memories_fts_delete;
    DROP TRIGGER memories_fts_update;
    DROP TABLE memories_fts;

    CREATE VIEW memory_days (seq, day) AS
    SELECT seq,
           CAST(strftime('%d', created_at, 'localtime') AS INTEGER) || ' ' ||
           CASE strftime('%m', created_at, 'localtime')
               WHEN '01' THEN 'January' WHEN '02' THEN 'February' WHEN '03' THEN 'March'
               WHEN '04' THEN 'April' WHEN '05' THEN 'May' WHEN '06' THEN 'June'
               WHEN '07' THEN 'July' WHEN '08' THEN 'August' WHEN '09' THEN 'September'
               WHEN '10' THEN 'October' WHEN '11' THEN 'November' WHEN '12' THEN 'December'
           END || ' ' ||
           strftime('%Y', created_at, 'localtime')
    FROM memories;

    CREATE VIRTUAL TABLE memories_fts USING fts5 (
        content,
        day,
        content = '',
        contentless_delete = 1,
        tokenize = 'porter unicode61 remove_diacritics 2'
    );
    INSERT INTO memories_fts (rowid, content, day)
    SELECT m.seq, m.content, d.day FROM memories m JOIN memory_days d ON d.seq = m.seq;

    CREATE TRIGGER memories_fts_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memories_fts (rowid, content, day)
        SELECT new.seq, new.content, day FROM memory_days WHERE seq = new.seq;
    END;
    CREATE TRIGGER memories_fts_delete AFTER DELETE ON memories BEGIN
        DELETE FROM memories_fts WHERE rowid = old.seq;
    END;
    CREATE TRIGGER memories_fts_update AFTER UPDATE OF content, created_at ON memories BEGIN
        DELETE FROM memories_fts WHERE rowid = old.seq;
        INSERT INTO memories_fts (rowid, content, day)
        SELECT new.seq, new.content, day FROM memory_days WHERE seq = new.seq;
    END;
    """,
    # 6: conversations branch. A message's parent is the message before it on its branch
    # (NULL for the first, and for compaction summaries, which stand beside the branches and
    # apply to whichever branch holds every message they replace). Editing a sent message or
    # regenerating a reply adds a sibling; the session's active leaf says which branch is
    # shown and sent to the model. Old conversations read as one branch: each message's
    # parent is the one said before it. `branched` says a conversation has more than one
    # branch (searching a one-branch conversation needs no walk along it). `reply_ms` is how
    # long a reply took to stream (first text to the end), for its tokens per second;
    # `instructions` is the owner's note for one conversation, sent after the stable prefix.
    """
    ALTER TABLE messages ADD COLUMN parent_id TEXT;
    ALTER TABLE messages ADD COLUMN reply_ms INTEGER;
    ALTER TABLE sessions ADD COLUMN active_leaf TEXT;
    ALTER TABLE sessions ADD COLUMN instructions TEXT NOT NULL DEFAULT '';
    ALTER TABLE sessions ADD COLUMN branched INTEGER NOT NULL DEFAULT 0;
    UPDATE messages SET parent_id = (
        SELECT p.id FROM messages p
        WHERE p.session_id = messages.session_id AND p.seq < messages.seq
          AND p.role <> 'summary'
        ORDER BY p.seq DESC LIMIT 1
    ) WHERE role <> 'summary';
    UPDATE sessions SET active_leaf = (
        SELECT m.id FROM messages m
        WHERE m.session_id = sessions.id AND m.role <> 'summary'
        ORDER BY m.seq DESC LIMIT 1
    );
    CREATE INDEX messages_by_parent ON messages (session_id, parent_id);
    """,
    # 7: each model's vectors also one table row each (vector_rows_<id>, see vec_storage).
    m007_float_rows,
    # 8: the words memories say as written (folded, not stemmed), for the browser's search
    # as you type: the stemmed index holds "run" for "running", so the word being typed,
    # "runn", was no prefix of anything there (and "lis", stemmed "li", found "likes").
    # Contentless with delete, kept by triggers, as memories_fts (5); prefix indexes for the
    # shortest prefixes, which match the most words. Made afresh if it was there already.
    """
    DROP TRIGGER IF EXISTS memory_words_insert;
    DROP TRIGGER IF EXISTS memory_words_delete;
    DROP TRIGGER IF EXISTS memory_words_update;
    DROP TABLE IF EXISTS memory_words;

    CREATE VIRTUAL TABLE memory_words USING fts5 (
        content,
        content = '',
        contentless_delete = 1,
        tokenize = 'unicode61 remove_diacritics 2',
        prefix = '1 2'
    );
    INSERT INTO memory_words (rowid, content) SELECT seq, content FROM memories;

    CREATE TRIGGER memory_words_insert AFTER INSERT ON memories BEGIN
        INSERT INTO memory_words (rowid, content) VALUES (new.seq, new.content);
    END;
    CREATE TRIGGER memory_words_delete AFTER DELETE ON memories BEGIN
        DELETE FROM memory_words WHERE rowid = old.seq;
    END;
    CREATE TRIGGER memory_words_update AFTER UPDATE OF content ON memories BEGIN
        DELETE FROM memory_words WHERE rowid = old.seq;
        INSERT INTO memory_words (rowid, content) VALUES (new.seq, new.content);
    END;
    """,
    # 9: entity names matched with or without the accents of Latin letters.
    m009_entity_keys,
]


SCHEMA_VERSION = len(MIGRATIONS)


def apply_migration(conn: apsw.Connection, migration: Migration) -> None:
    """Run one migration on `conn`, inside the transaction the caller holds."""
    if isinstance(migration, str):
        conn.execute(migration)
    else:
        migration(conn)
