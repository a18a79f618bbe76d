"""The three recall legs on PostgreSQL (the `MemorySearch` protocol of timothy/store/search.py).

Text: the article's query: the question's lexemes (English stemming) joined by OR, matched
against `tsv` (what each memory says and the day it was made), ranked by ts_rank. Entity: the
names the question contains, looked up in the normalised entity table, then ranked by how
well the rest of the question matches. Vector: exact cosine nearest neighbours.
Each leg runs on its own pooled connection, so recall runs them side by side; a deadline
becomes the statement's `statement_timeout`. The vector leg searches an in-process copy of the
model's vectors that follows the server's changes (vector_copy.py): exact, and far quicker
than pgvector's own exact scan.

The relevance floor's term evidence (`TextHits.matched`) is computed with the same tokenizer
as on SQLite, so the floor admits the same hits on either engine.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg
import psycopg.errors

from timothy.store.postgres.database import PgDatabase
from timothy.store.postgres.rows import Conn
from timothy.store.postgres.text_copy import ANALYSE_SQL, HEAD_SQL, PgTextCopy, reading_of
from timothy.store.postgres.vector_copy import PgVectorCopy
from timothy.store.postgres.vectors import PgVectorStore
from timothy.store.search import MAX_NAME_WORDS, TextHits, index_terms, matched_terms
from timothy.store.vectors import EmbeddingModel, Vector
from timothy.text import (
    name_candidates,
    pick_names,
    query_terms,
    spelled_terms,
    strip_accents,
    with_spellings,
    words,
)

# The article's OR-query: every lexeme of the question, quoted, joined by |.
_OR_QUERY = """
q AS (
    SELECT to_tsquery('english',
        string_agg('''' || replace(lexeme, '''', '''''') || '''', ' | ')) AS query
    FROM unnest(tsvector_to_array(to_tsvector('english', %(text)s))) AS lexeme
)"""

# Each lexeme of the question with its BM25 inverse document frequency (how rare it is).
_WEIGHTS = """
lexemes (query) AS (
    SELECT to_tsquery('english', '''' || replace(lexeme, '''', '''''') || '''')
    FROM unnest(tsvector_to_array(to_tsvector('english', %(text)s))) AS lexeme
),
total (n) AS (SELECT count(*)::float8 FROM memories),
weights (query, idf) AS MATERIALIZED (
    SELECT l.query, ln(1 + (total.n - d.n + 0.5) / (d.n + 0.5))
    FROM lexemes l, total,
         LATERAL (SELECT count(*)::float8 AS n FROM memories WHERE tsv @@ l.query) d
)"""
# How much of the question's rarity a memory holds.
_RARITY = "(SELECT sum(w.idf) FROM weights w WHERE m.tsv @@ w.query)"

# The article's matches ranked first by how rare the question's lexemes each contains are
# (the sum of their BM25 inverse document frequencies, as SQLite's bm25 weighs them), then
# by ts_rank: a memory that shares a rare word with the question comes before one that
# shares only a name said in half the store. (On LoCoMo, text and entity legs: R@10 63.3 ->
# 67.7, the file's is 68.1.)
_TEXT_SQL = f"""
WITH {_OR_QUERY},
{_WEIGHTS}
SELECT m.seq, m.id FROM memories m, q
WHERE m.status = 'active' AND m.tsv @@ q.query
ORDER BY {_RARITY} DESC, ts_rank(m.tsv, q.query) DESC, m.seq DESC
LIMIT %(limit)s
"""

_ENTITY_SQL = f"""
WITH {_OR_QUERY},
{_WEIGHTS},
named (seq, names) AS (
    SELECT memory_seq, count(DISTINCT name_key) FROM memory_entities
    WHERE name_key = ANY(%(names)s)
    GROUP BY memory_seq
)
SELECT m.id
FROM named JOIN memories m ON m.seq = named.seq, q
WHERE m.status = 'active'
ORDER BY named.names DESC,
         CASE WHEN m.tsv @@ q.query THEN {_RARITY} END DESC NULLS LAST,
         CASE WHEN m.tsv @@ q.query THEN ts_rank(m.tsv, q.query) END DESC NULLS LAST,
         coalesce(m.last_confirmed_at, m.created_at) DESC,
         m.seq DESC
LIMIT %(limit)s
"""

# The same, with the rarities given in the order `_WEIGHTS` sums them (from the text leg's
# in-process index, text_copy.py) rather than counted on the server (42 ms at 100k).
_GIVEN_WEIGHTS = """
weights (query, idf) AS MATERIALIZED (
    SELECT to_tsquery('english', '''' || replace(lexeme, '''', '''''') || ''''), idf
    FROM unnest(%(lexemes)s::text[], %(idfs)s::float8[]) WITH ORDINALITY AS w (lexeme, idf, i)
    ORDER BY i
)"""
_ENTITY_GIVEN_SQL = _ENTITY_SQL.replace(_WEIGHTS, _GIVEN_WEIGHTS)

_ENTITY_ONLY_SQL = """
WITH named (seq, names) AS (
    SELECT memory_seq, count(DISTINCT name_key) FROM memory_entities
    WHERE name_key = ANY(%(names)s)
    GROUP BY memory_seq
)
SELECT m.id
FROM named JOIN memories m ON m.seq = named.seq
WHERE m.status = 'active'
ORDER BY named.names DESC, coalesce(m.last_confirmed_at, m.created_at) DESC, m.seq DESC
LIMIT %(limit)s
"""


def named_entities(conn: Conn, query: str) -> list[str]:
    """The entity names (matching form, see name_key) the query names, longest first where
    they overlap."""
    candidates = name_candidates(query, MAX_NAME_WORDS)
    if not candidates:
        return []
    stored = {
        str(row[0])
        for row in conn.execute(
            "SELECT DISTINCT name_key FROM memory_entities WHERE name_key = ANY(%s)",
            (sorted({c[2] for c in candidates}),),
        )
    }
    if not stored:
        return []
    return list(dict.fromkeys(norm for _, _, norm in pick_names(candidates, stored)))


class PgSearch:
    """The legs over one PostgreSQL store."""

    def __init__(
        self, db: PgDatabase, vectors: PgVectorStore, *, float_rows_from_server: bool = True
    ) -> None:
        self.db = db
        self.vectors = vectors
        # Large copies (vector_copy.LEAN_FROM_ROWS) keep only int8 codes; re-scoring reads
        # its float rows from the server by key. About as quick as float rows in memory
        # (bench/recall.py --store, 100k x 1,536: vector leg 75 against 69 ms p50 at load
        # 9), and 324 MiB resident, not 936.
        self.float_rows_from_server = float_rows_from_server
        self._copies: dict[int, PgVectorCopy] = {}
        self._copies_lock = threading.Lock()
        self._text_copy = PgTextCopy()

    @contextlib.contextmanager
    def _bounded(self, deadline: float | None) -> Iterator[Conn]:
        """This thread's connection; a statement still running at the deadline is cancelled.
        (Not in pipeline mode: measured, it saved no time and cost more CPU.)"""
        with self.db.read() as conn:
            if deadline is None:
                yield conn
                return
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no time was left")
            try:
                with conn.transaction():
                    conn.execute(
                        "SELECT set_config('statement_timeout', %s, true)",
                        (f"{max(1, int(left * 1000))}ms",),
                    )
                    yield conn
            except psycopg.errors.QueryCanceled:
                raise TimeoutError("stopped at the deadline") from None

    # -- vector -------------------------------------------------------------------------

    def vector_model(self) -> EmbeddingModel | None:
        return self.vectors.active_model()

    def has_vectors(self, model: EmbeddingModel) -> bool:
        with self._copies_lock:
            copy = self._copies.get(model.id)
        if copy is not None and copy.model == model and copy.holds_vectors:
            return True  # (the search catches up: vectors removed since find nothing)
        with self.db.read() as conn:
            row = conn.execute(f"SELECT EXISTS (SELECT 1 FROM {model.table})").fetchone()
        return bool(row and row[0])

    def vector(
        self,
        model: EmbeddingModel,
        query: Vector,
        limit: int,
        *,
        deadline: float | None = None,
    ) -> list[str]:
        return [memory_id for memory_id, _ in self.vector_hits(model, query, limit)]

    def vector_hits(
        self,
        model: EmbeddingModel,
        query: Vector,
        limit: int,
        *,
        deadline: float | None = None,
    ) -> list[tuple[str, float]]:
        # Not stopped at the deadline (as on SQLite): the first call loads every vector, and
        # a load cut short would start over each time. Recall stops waiting instead.
        if self.db.in_transaction:
            # Inside a write not yet committed, the copy would take in rows that may still be
            # undone, and keep them: pgvector's exact scan answers (it sees the write's rows).
            return [
                (memory_id, 1.0 - distance)
                for memory_id, distance in self.vectors.nearest(model, query, limit)
            ]
        with self.db.read() as conn:
            return self.copy(model).nearest(conn, query, limit)

    def copy(self, model: EmbeddingModel) -> PgVectorCopy:
        """The in-process copy of a model's vectors (loaded at first use, then kept current)."""
        with self._copies_lock:
            copy = self._copies.get(model.id)
            if copy is None or copy.model != model:
                copy = self._copies[model.id] = PgVectorCopy(
                    model, float_rows_from_server=self.float_rows_from_server
                )
            return copy

    def prepare(self) -> None:
        """Load the active model's vectors into this process."""
        self.text_copy()
        model = self.vector_model()
        if model is not None:
            with self.db.read() as conn:
                self.copy(model).refresh(conn)

    # -- text ---------------------------------------------------------------------------

    def text_copy(self) -> PgTextCopy:
        """The in-process index of the memories' lexemes (text_copy.py), loaded at first use."""
        with self._copies_lock:
            copy = self._text_copy
        if not copy.loaded:
            with self.db.read() as conn:
                copy.refresh(conn)
        return copy

    def text(self, query: str, limit: int, *, deadline: float | None = None) -> list[str]:
        if limit <= 0 or not query_terms(query):
            return []
        # The index keeps "ß" as written, and folding made the question's "ss".
        query = with_spellings(query)
        return [memory_id for _, memory_id, _ in self._text_found(query, limit, [], deadline)[0]]

    def _text_found(
        self, query: str, limit: int, terms: list[str], deadline: float | None
    ) -> tuple[list[tuple[int, str, str]], list[int], int]:
        """The text leg's top `limit` as (seq, id, what it says with its day), with how many
        memories hold each of `terms` and the store's size: the answer of `_TEXT_SQL`, from
        the in-process index (text_copy.py) in three short statements."""
        if self.db.in_transaction:  # a write's own changes may yet be undone: not copied
            with self._bounded(deadline) as conn:
                return self._text_by_server(conn, query, limit, terms)
        copy = self.text_copy()  # not bounded by the deadline: a cut-short load starts over
        with self._bounded(deadline) as conn:
            catch_up = copy.catch_up_sql()
            assert catch_up is not None
            copy.apply(conn.execute(*catch_up).fetchall())
            analysed = conn.execute(ANALYSE_SQL, {"text": query, "terms": terms}).fetchall()
            reading = reading_of(analysed, len(terms))
            if not reading.simple:  # a phrase: the server ranks it
                return self._text_by_server(conn, query, limit, terms)
            head = copy.head(reading, limit)
            if not head.seqs:
                return [], head.documents, head.total
            rows = conn.execute(
                HEAD_SQL,
                {"text": query, "seqs": head.seqs, "rarities": head.rarities, "limit": limit},
            ).fetchall()
        found = [(int(seq), str(mid), f"{content} {day}") for seq, mid, content, day in rows]
        return found, head.documents, head.total

    @staticmethod
    def _text_by_server(
        conn: Conn, query: str, limit: int, terms: list[str]
    ) -> tuple[list[tuple[int, str, str]], list[int], int]:
        """`_TEXT_SQL` itself, with each term's memories and the store's size."""
        rows = conn.execute(_TEXT_SQL, {"text": query, "limit": limit}).fetchall()
        documents = [
            int(count)
            for _, count in conn.execute(
                "SELECT i, (SELECT count(*) FROM memories "
                "WHERE tsv @@ plainto_tsquery('english', t)) "
                "FROM unnest(%s::text[]) WITH ORDINALITY AS u (t, i) ORDER BY i",
                (terms,),
            ).fetchall()
        ]
        total_row = conn.execute("SELECT count(*) FROM memories").fetchone()
        total = 0 if total_row is None else int(total_row[0])
        seqs = [int(seq) for seq, _ in rows]
        texts = {
            int(seq): f"{content} {day}"
            for seq, content, day in conn.execute(
                "SELECT seq, content, day FROM memories WHERE seq = ANY(%s)", (seqs,)
            ).fetchall()
        }
        return [(int(s), str(m), texts.get(int(s), "")) for s, m in rows], documents, total

    def text_hits(self, query: str, limit: int, *, deadline: float | None = None) -> TextHits:
        if limit <= 0 or not query_terms(query):
            return TextHits([], {}, {}, 0)
        terms = [term for term in spelled_terms(query) if index_terms(term)]
        query = with_spellings(query)  # as in `text`
        found, counts, total = self._text_found(query, limit, terms, deadline)
        if not found:
            return TextHits([], {}, {}, 0)
        documents = dict(zip(terms, counts, strict=True))
        matched = {memory_id: matched_terms(terms, text) for _, memory_id, text in found}
        return TextHits([memory_id for _, memory_id, _ in found], matched, documents, total)

    # -- entity -------------------------------------------------------------------------

    def named(self, query: str, *, deadline: float | None = None) -> list[str]:
        with self._bounded(deadline) as conn:
            return named_entities(conn, query)

    def entity(
        self,
        query: str,
        limit: int,
        *,
        deadline: float | None = None,
        names: Sequence[str] | None = None,
    ) -> list[str]:
        if limit <= 0:
            return []
        # Inside a write, whose own changes may yet be undone, the server counts the rarities.
        copy = None if self.db.in_transaction else self.text_copy()
        with self._bounded(deadline) as conn:
            names = named_entities(conn, query) if names is None else list(names)
            if not names:
                return []
            name_words = {word for name in names for word in words(name)}
            rest = " ".join(t for t in query_terms(query) if strip_accents(t) not in name_words)
            params: dict[str, Any] = {"names": names, "limit": limit, "text": rest}
            sql = _ENTITY_ONLY_SQL
            if rest and copy is None:
                sql = _ENTITY_SQL
            elif rest and copy is not None:
                catch_up = copy.catch_up_sql()
                assert catch_up is not None
                copy.apply(conn.execute(*catch_up).fetchall())
                analysed = conn.execute(ANALYSE_SQL, {"text": rest, "terms": []}).fetchall()
                reading = reading_of(analysed, 0)
                sql = _ENTITY_SQL
                if reading.simple:  # the rarities from the index, not counted on the server
                    sql = _ENTITY_GIVEN_SQL
                    params["lexemes"] = list(reading.said)
                    params["idfs"] = copy.weights(reading)
            rows = conn.execute(sql, params).fetchall()
        return [str(row[0]) for row in rows]
