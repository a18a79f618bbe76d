"""The three recall legs' queries: one method per leg, each returning ranked memory ids.

`MemorySearch` is what recall sees; `SqliteSearch` answers it from the SQLite file (FTS5,
the entity table, and an in-memory copy of the active model's vectors). A PostgreSQL backend
would implement the same methods. Every leg searches active memories only and runs on the
calling thread's own connection, so the legs can run side by side.

The scored forms (`vector_hits`, `text_hits`) also return what recall's relevance floor
weighs (timothy/retrieval/floor.py): each hit's cosine similarity, and which query terms each
text hit contains with how many memories contain each term.
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, cast

import apsw

from timothy.store.db import Database, scalar
from timothy.store.vector_index import VectorIndex
from timothy.store.vectors import EmbeddingModel, Vector, VectorStore
from timothy.text import (
    fts_query,
    name_candidates,
    pick_names,
    query_terms,
    spellings,
    strip_accents,
    words,
)

# How many words an entity name may have and still be found in a query.
MAX_NAME_WORDS = 6
# SQLite checks the deadline every this many virtual machine steps.
_PROGRESS_STEPS = 2_000
# The full-text index's tokenizer (migration 5); `terms_of` splits text the same way.
FTS_TOKENIZER = ("porter", ("unicode61", "remove_diacritics", "2"))


@dataclass(frozen=True, slots=True)
class TextHits:
    """The text leg's hits with the term evidence behind each.

    `matched[id]` are the query terms (as `query_terms` gives them) that the memory's text or
    day contains, once stemmed as the index stems; `documents[term]` is how many memories of
    the index (any status) contain the term; `total` how many memories the index holds.
    """

    ids: list[str]
    matched: Mapping[str, tuple[str, ...]]
    documents: Mapping[str, int]
    total: int


class MemorySearch(Protocol):
    """Ranked ids of active memories, best first, at most `limit` of them.

    `deadline` is a time.monotonic() moment after which the text and entity legs stop and
    raise TimeoutError. The vector leg may run past it (see SqliteSearch.vector); recall
    stops waiting for any leg at its time bound either way.
    """

    def vector_model(self) -> EmbeddingModel | None:
        """The embedding model the vector leg searches (None: the leg is off)."""
        ...

    def has_vectors(self, model: EmbeddingModel) -> bool:
        """Whether any memory has a vector of this model."""
        ...

    def vector(
        self,
        model: EmbeddingModel,
        query: Vector,
        limit: int,
        *,
        deadline: float | None = None,
    ) -> list[str]:
        """Exact cosine nearest neighbours of `query` among `model`'s vectors."""
        ...

    def vector_hits(
        self,
        model: EmbeddingModel,
        query: Vector,
        limit: int,
        *,
        deadline: float | None = None,
    ) -> list[tuple[str, float]]:
        """`vector` with each hit's cosine similarity: (id, similarity), best first."""
        ...

    def text_hits(self, query: str, limit: int, *, deadline: float | None = None) -> TextHits:
        """`text` with the term evidence of each hit (see TextHits)."""
        ...

    def text(self, query: str, limit: int, *, deadline: float | None = None) -> list[str]:
        """Full text: the query's terms joined by OR, ranked by bm25 over what memories say
        and the day each was made ("7 May 2023", local), so a date in a question counts."""
        ...

    def named(self, query: str, *, deadline: float | None = None) -> list[str]:
        """The entity names (matching forms) the query names literally, as the entity leg
        finds them: whole words, longest first where they overlap."""
        ...

    def entity(
        self,
        query: str,
        limit: int,
        *,
        deadline: float | None = None,
        names: Sequence[str] | None = None,
    ) -> list[str]:
        """Memories whose entities the query names, most names first, then by how well the
        rest of the query matches them, then most recently confirmed. `names`: the query's
        names as `named` gave them, when the caller has them (else they are looked up)."""
        ...

    def prepare(self) -> None:
        """Warm what the legs need (e.g. load vectors into memory); safe to skip."""
        ...


# The best matches by bm25 (FTS5's rank), a window at a time; ties: the newest first.
_TEXT_SQL = """
SELECT rowid FROM memories_fts WHERE memories_fts MATCH :match
ORDER BY rank, rowid DESC
LIMIT :window
"""
# Which of them are active, by seq ("+status": not every active row through the index).
_ACTIVE_SQL = """
SELECT seq, id FROM memories WHERE seq IN (SELECT value FROM json_each(?)) AND +status = 'active'
"""

# How many memories of the index contain a (quoted) term; what some say, with their day.
_COUNT_SQL = "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?"
_TEXTS_SQL = """
SELECT m.seq, m.content, d.day FROM memories m JOIN memory_days d ON d.seq = m.seq
WHERE m.seq IN (SELECT value FROM json_each(?))
"""

# Names are matched by their keys (timothy.text.name_key: accents of Latin letters folded).
_NAMED_SQL = """
SELECT DISTINCT name_key FROM memory_entities
WHERE name_key IN (SELECT value FROM json_each(?))
"""

# A memory counts each name once ("José" and "Jose" among its entities are one name).
_NAMED_CTE = """
named (seq, names) AS (
    SELECT memory_seq, count(DISTINCT name_key) FROM memory_entities
    WHERE name_key IN (SELECT value FROM json_each(:names))
    GROUP BY memory_seq
)"""
# The named memories, ranked by how well the rest of the query matches them (bm25).
_ENTITY_SQL = f"""
WITH {_NAMED_CTE},
relevant (seq, relevance) AS MATERIALIZED (
    SELECT rowid, bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH :rest
)
SELECT m.id
FROM named
JOIN memories m ON m.seq = named.seq
LEFT JOIN relevant r ON r.seq = named.seq
WHERE +m.status = 'active'
ORDER BY named.names DESC,
         r.relevance IS NULL,
         r.relevance,
         coalesce(m.last_confirmed_at, m.created_at) DESC,
         m.seq DESC
LIMIT :limit
"""
# The same when the query is nothing but names.
_ENTITY_ONLY_SQL = f"""
WITH {_NAMED_CTE}
SELECT m.id
FROM named
JOIN memories m ON m.seq = named.seq
WHERE +m.status = 'active'
ORDER BY named.names DESC, coalesce(m.last_confirmed_at, m.created_at) DESC, m.seq DESC
LIMIT :limit
"""


def active_ids(conn: apsw.Connection, seqs: list[int]) -> dict[int, str]:
    """seq -> id of those memories that are active."""
    if not seqs:
        return {}
    return {
        int(str(seq)): str(memory_id)
        for seq, memory_id in conn.execute(_ACTIVE_SQL, (json.dumps(seqs),))
    }


def _varint(data: bytes, start: int = 0) -> int:
    """SQLite's variable-length integer at `start` (big-endian 7-bit groups, 9 bytes at most)."""
    value = 0
    for place in range(start, min(start + 9, len(data))):
        byte = data[place]
        if place == start + 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value
    raise ValueError("a varint is cut short")


# FTS5's averages record (row 1: how many rows, how many tokens) and its structure record
# (row 10: the segments, with a counter every flush of new entries raises). Every write to
# the index changes one or both, so together they say which state of the index is read.
_FTS_STATE_SQL = "SELECT id, block FROM memories_fts_data WHERE id IN (1, 10) ORDER BY id"
# Document counts kept for one state of the index, at most this many terms.
_KEPT_COUNTS = 4_096


def fts_totals(conn: apsw.Connection) -> tuple[int, int] | None:
    """How many rows the full-text index holds and how many tokens they hold in all, as
    bm25 reads them (FTS5's averages record: the row count, then each column's tokens);
    None when the record cannot be read."""
    rows = conn.execute("SELECT block FROM memories_fts_data WHERE id = 1").fetchall()
    block = rows[0][0] if rows else None
    if not isinstance(block, bytes):
        return None
    try:
        numbers = _varints(block)
    except ValueError:
        return None
    if len(numbers) < 2 or numbers[0] <= 0:
        return None
    return numbers[0], sum(numbers[1:])


def _varints(data: bytes) -> list[int]:
    """Every SQLite varint of `data`, in order (FTS5's averages and docsize records)."""
    found: list[int] = []
    place = 0
    while place < len(data):
        value = 0
        for step in range(9):
            if place >= len(data):
                raise ValueError("a varint is cut short")
            byte = data[place]
            place += 1
            if step == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        found.append(value)
    return found


# bm25's constant k1 in FTS5 (ext/fts5/fts5_aux.c): a term adds at most idf * (k1 + 1).
_K1 = 1.2
# Slack for the pruned ranking's bounds: a sum of floats may differ from the exact sum in
# its last bits, so a row is let go only when its bound is clearly below.
_SLACK = 1e-9
# The common terms are left out when their bounds sum to less than this share of about the
# least a best hit scores (checked afterwards: a wrong guess costs time, never the answer).
_COMMON_SHARE = 0.5
# Longer questions (a pasted document) are ranked by the plain SQL: the pruned match names
# every term twice, and FTS5 counts each phrase's rows for its idf (measured on questions of
# a few words only).
_PRUNE_MAX_TERMS = 32
# The best `limit` active memories of a match that only rows with a rarer term meet (see
# pruned_ranking).
_PRUNED_SQL = """
SELECT f.rowid, f.rank, m.id FROM memories_fts f JOIN memories m ON m.seq = f.rowid
WHERE memories_fts MATCH :match AND +m.status = 'active'
ORDER BY f.rank, f.rowid DESC
LIMIT :limit
"""


def _idf(rows: int, hits: int) -> float:
    """A term's idf as FTS5's bm25 computes it (the same float operations)."""
    idf = math.log((rows - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0.0 else 1e-6


def pruned_ranking(
    conn: apsw.Connection, terms: Sequence[str], documents: Mapping[str, int], limit: int
) -> list[tuple[int, str]] | None:
    """(seq, id) of the best `limit` active memories of `_TEXT_SQL` for the OR of `terms`
    (each a quoted phrase), best first: the same memories in the same order, without
    ranking every row that shares only a common word with the query (exact MaxScore
    pruning; None when it does not apply, and the caller runs the SQL).

    A term adds at most idf * (k1 + 1) to a row's bm25, so a row whose only terms are the
    commonest ones scores less than their bounds' sum. Those rows are left out of the
    match itself:

        (t1 OR t2 OR ... OR tn) NOT ((common terms) NOT (other terms))

    matches exactly the rows with one of the other terms, and scores each as the whole OR
    does: its first n phrases are the query's in the query's order, and the phrases after
    NOT never hold a place in a row the query returns, so they add 0.0 to its bm25 (the
    same double as the plain query's). The answer is the plain query's when its `limit`-th
    memory scores more than the left-out terms' bounds; otherwise (or when fewer than
    `limit` rows have another term) None.
    """
    if limit <= 0 or not 2 <= len(terms) <= _PRUNE_MAX_TERMS:
        return None
    totals = fts_totals(conn)
    if totals is None:
        return None
    rows = totals[0]
    idfs = [_idf(rows, documents[term]) for term in terms]
    present = [place for place in range(len(terms)) if documents[terms[place]] > 0]
    commonest = sorted(present, key=lambda place: (idfs[place], -place))
    # About the least the `limit`-th best scores: the idf of the term at which the rarest
    # terms' matches fill the list (a row with it once, of average length, scores that).
    reach, filled = 0.0, 0
    for place in reversed(commonest):
        reach, filled = idfs[place], filled + documents[terms[place]]
        if filled >= limit:
            break
    common: list[int] = []
    total = 0.0
    for place in commonest[:-1]:
        total += idfs[place]
        if total * (_K1 + 1.0) >= _COMMON_SHARE * reach:
            break
        common.append(place)
    if not common:
        return None
    bound = math.fsum(idfs[place] * (_K1 + 1.0) for place in common) * (1 + _SLACK)
    quoted = [f'"{term}"' for term in terms]
    others = [quoted[place] for place in range(len(terms)) if place not in common]
    match = (
        f"({' OR '.join(quoted)}) NOT "
        f"(({' OR '.join(quoted[place] for place in common)}) NOT ({' OR '.join(others)}))"
    )
    found = [
        (cast(int, seq), -cast(float, rank), cast(str, memory_id))
        for seq, rank, memory_id in conn.execute(_PRUNED_SQL, {"match": match, "limit": limit})
    ]
    if len(found) < limit or found[-1][1] <= bound:
        return None
    return [(seq, memory_id) for seq, _, memory_id in found]


def fts_state(conn: apsw.Connection) -> tuple[object, ...]:
    """Which state of the full-text index this connection reads (see _FTS_STATE_SQL)."""
    return tuple(block for _, block in conn.execute(_FTS_STATE_SQL))


def fts_total(conn: apsw.Connection) -> int:
    """How many memories the full-text index holds, as bm25 counts them: the first number of
    FTS5's "averages" record (row 1 of memories_fts_data), which every insert and delete
    keeps up to date. `count(*)` reads the whole index (10 ms at 100k memories); this reads
    one small row. A record that cannot be read falls back to counting."""
    rows = conn.execute("SELECT block FROM memories_fts_data WHERE id = 1").fetchall()
    block = rows[0][0] if rows else None
    if isinstance(block, bytes):
        try:
            return _varint(block)
        except ValueError:
            pass
    return int(str(scalar(conn, "SELECT count(*) FROM memories_fts")))


_forms_lock = threading.Lock()
_forms_conn: apsw.Connection | None = None


def _tokenize(text: str) -> list[tuple[int, int, str]]:
    """(start, end, index form) of each term of `text`, as the full-text index splits it."""
    global _forms_conn
    with _forms_lock:
        if _forms_conn is None:
            _forms_conn = apsw.Connection(":memory:")
        name, args = FTS_TOKENIZER
        tokens = _forms_conn.fts5_tokenizer(name, list(args))(
            text.encode("utf-8"), apsw.FTS5_TOKENIZE_DOCUMENT, None
        )
    # Each token is (start, end, form, *other forms at that place); the first is indexed.
    return [(int(t[0]), int(t[1]), str(t[2:][0])) for t in tokens if t[2:]]


@functools.lru_cache(maxsize=8_192)
def index_terms(text: str) -> tuple[str, ...]:
    """The distinct index terms of `text`, stemmed and folded as the full-text index stores
    them, in text order. Kept for the texts of recent hits, each term one shared (interned)
    string: ~0.2 KB a text besides the text itself, where a frozenset of its own strings
    took ~1.5 KB (so 8,192 texts are kept in the memory 2,048 took)."""
    return tuple(dict.fromkeys(sys.intern(form) for _, _, form in _tokenize(text)))


def matched_terms(terms: Iterable[str], text: str) -> tuple[str, ...]:
    """Those of the query's `terms` whose every index term is in `text` (the text leg's
    evidence: TextHits.matched)."""
    present = index_terms(text)
    return tuple(term for term in terms if all(form in present for form in index_terms(term)))


def index_forms(words_: Iterable[str]) -> dict[str, str]:
    """word -> the form the full-text index stores it under ("checking" -> "check"), for
    words that are one index term each (others are left out). No store needed."""
    global _forms_conn
    wanted = [word for word in dict.fromkeys(words_) if word and not any(c.isspace() for c in word)]
    if not wanted:
        return {}
    tokens = _tokenize(" ".join(wanted))
    spans: list[tuple[int, int, str]] = []
    offset = 0
    for word in wanted:
        end = offset + len(word.encode("utf-8"))
        spans.append((offset, end, word))
        offset = end + 1
    forms: dict[str, list[tuple[int, int, str]]] = {}
    place = 0
    for first, last, form in tokens:  # in text order, as the words are
        while place + 1 < len(spans) and spans[place + 1][0] <= first:
            place += 1
        forms.setdefault(spans[place][2], []).append((first, last, form))
    # A word the tokenizer splits into several terms, or cuts short, is not one term.
    whole = {word: (first, last) for first, last, word in spans}
    return {
        word: found[0][2]
        for word, found in forms.items()
        if len(found) == 1 and found[0][:2] == whole[word]
    }


@functools.lru_cache(maxsize=256)
def _name_candidates(query: str) -> tuple[tuple[int, int, str], ...]:
    """name_candidates of a query, kept for the few lookups of one recall (the vector leg,
    the entity leg and the floor each ask for the query's names)."""
    return tuple(name_candidates(query, MAX_NAME_WORDS))


def named_entities(conn: apsw.Connection, query: str) -> list[str]:
    """The entity names (matching form, see name_key) the query names, longest first where
    they overlap.

    Whole words only: "Al" is not in "always". A name is taken at its longest: in "New York
    City", a "New York City" entity wins over "York".
    """
    candidates = _name_candidates(query)
    if not candidates:
        return []
    stored = {
        str(row[0])
        for row in conn.execute(_NAMED_SQL, (json.dumps(sorted({c[2] for c in candidates})),))
    }
    if not stored:
        return []
    return list(dict.fromkeys(norm for _, _, norm in pick_names(candidates, stored)))


class SqliteSearch:
    """The legs over one SQLite store."""

    def __init__(self, db: Database, vectors: VectorStore) -> None:
        self.db = db
        self.vectors = vectors
        self._indexes: dict[int, VectorIndex] = {}
        self._indexes_lock = threading.Lock()
        # How many memories of the index contain each query term, for one state of the
        # index (fts_state): counting a term reads all its postings, every turn again.
        self._counts: dict[str, int] = {}
        self._counts_state: tuple[object, ...] | None = None
        self._counts_lock = threading.Lock()
        # Rank only the OR matches that can reach the text leg's window (pruned_ranking);
        # False: every match, in SQL (the same answer; kept for comparing the two).
        self.prune_text = True

    # -- deadlines ----------------------------------------------------------------------

    @contextlib.contextmanager
    def _bounded(self, deadline: float | None) -> Iterator[apsw.Connection]:
        """This thread's connection; a statement still running at the deadline is stopped."""
        with self.db.read() as conn:
            if deadline is None:
                yield conn
                return
            if time.monotonic() >= deadline:
                raise TimeoutError("no time was left")
            conn.set_progress_handler(lambda: time.monotonic() >= deadline, _PROGRESS_STEPS)
            try:
                yield conn
            except apsw.InterruptError:
                raise TimeoutError("stopped at the deadline") from None
            finally:
                conn.set_progress_handler(None)

    def drop_copies(self) -> None:
        """Forget the in-memory copies of vectors and the kept term counts (the file was
        replaced: they are read again when next searched)."""
        with self._indexes_lock:
            self._indexes.clear()
        with self._counts_lock:
            self._counts.clear()
            self._counts_state = None

    # -- vector -------------------------------------------------------------------------

    def vector_model(self) -> EmbeddingModel | None:
        return self.vectors.active_model()

    def index(self, model: EmbeddingModel) -> VectorIndex:
        """The in-memory copy of a model's vectors (made once, then kept up to date)."""
        with self._indexes_lock:
            index = self._indexes.get(model.id)
            if index is None:
                index = self._indexes[model.id] = VectorIndex(model)
            return index

    def has_vectors(self, model: EmbeddingModel) -> bool:
        with self.db.read() as conn:
            # Every vector written notes a change: a cheap look first (asking the vec0 table
            # itself reads a whole chunk); vectors older than that table are in the copy.
            if conn.execute(
                "SELECT 1 FROM vector_changes WHERE model_id = ? LIMIT 1", (model.id,)
            ).fetchall():
                return True
            index = self.index(model)
            index.refresh(conn)
            return index.size > 0

    def vector(
        self,
        model: EmbeddingModel,
        query: Vector,
        limit: int,
        *,
        deadline: float | None = None,
    ) -> list[str]:
        # Not stopped at the deadline: the first call loads every vector (seconds for 100k),
        # and a load cut short would start over each time. Recall stops waiting instead, and
        # the load finishes for the next one.
        return [memory_id for memory_id, _ in self.vector_hits(model, query, limit)]

    def vector_hits(
        self,
        model: EmbeddingModel,
        query: Vector,
        limit: int,
        *,
        deadline: float | None = None,
    ) -> list[tuple[str, float]]:
        with self.db.read() as conn:
            return self.index(model).nearest(conn, query, limit)

    def prepare(self) -> None:
        model = self.vector_model()
        if model is not None:
            with self.db.read() as conn:
                self.index(model).refresh(conn)

    # -- text ---------------------------------------------------------------------------

    def text(self, query: str, limit: int, *, deadline: float | None = None) -> list[str]:
        if limit <= 0 or not query_terms(query):
            return []
        with self._bounded(deadline) as conn:
            found = self._text_seqs(conn, self._spelled(conn, query), limit)
            return [memory_id for _, memory_id in found]

    def _spelled(self, conn: apsw.Connection, query: str) -> list[str]:
        """The query's terms, each with "ss" as the memories spell it: case folding makes a
        typed "Straße" "strasse", but the index keeps "ß" as written, so a term is looked for
        in those of its spellings ("strasse", "straße") that some memory uses; itself when
        none does."""
        terms = query_terms(query)
        if not any("ss" in term for term in terms):
            return terms
        spelled: list[str] = []
        for term in terms:
            if "ss" not in term:
                spelled.append(term)
                continue
            forms = spellings(term)
            documents = self._documents(conn, forms)
            used = [form for form in forms if documents[form] > 0]
            spelled.extend(used or [term])
        return list(dict.fromkeys(spelled))

    def _text_seqs(
        self, conn: apsw.Connection, terms: list[str], limit: int
    ) -> list[tuple[int, str]]:
        """(seq, id) of the best `limit` active matches of the OR of `terms`, best first."""
        # \w+ never contains a double quote, so quoting each term is a complete escape.
        match = " OR ".join(f'"{term}"' for term in terms)
        if self.prune_text:
            pruned = pruned_ranking(conn, terms, self._documents(conn, terms), limit)
            if pruned is not None:
                return pruned
        window = limit * 2 + 10
        while True:
            seqs = [
                int(str(row[0]))
                for row in conn.execute(_TEXT_SQL, {"match": match, "window": window})
            ]
            active = active_ids(conn, seqs)
            found = [(seq, active[seq]) for seq in seqs if seq in active]
            # Staged or archived memories took places in the window: widen it.
            if len(found) >= limit or len(seqs) < window:
                return found[:limit]
            window *= 4

    def _documents(self, conn: apsw.Connection, terms: list[str]) -> dict[str, int]:
        """How many memories of the index contain each of `terms`: counted, or kept from an
        earlier count of the same state of the index. A count is kept only when the state
        read before and after it is the same (no write came between)."""
        state = fts_state(conn)
        with self._counts_lock:
            if state != self._counts_state:
                self._counts = {}
                self._counts_state = state
            found = {term: self._counts[term] for term in terms if term in self._counts}
        counted = {
            term: int(str(scalar(conn, _COUNT_SQL, (f'"{term}"',))))
            for term in terms
            if term not in found
        }
        if counted and fts_state(conn) == state:
            with self._counts_lock:
                if self._counts_state == state:
                    if len(self._counts) + len(counted) > _KEPT_COUNTS:
                        self._counts = {}
                    self._counts.update(counted)
        found.update(counted)
        return {term: found[term] for term in terms}

    def text_hits(self, query: str, limit: int, *, deadline: float | None = None) -> TextHits:
        if limit <= 0 or not query_terms(query):
            return TextHits([], {}, {}, 0)
        with self._bounded(deadline) as conn:
            spelled = self._spelled(conn, query)
            found = self._text_seqs(conn, spelled, limit)
            if not found:
                return TextHits([], {}, {}, 0)
            terms = [term for term in spelled if index_terms(term)]
            documents = self._documents(conn, terms)
            total = fts_total(conn)
            texts = {
                int(str(seq)): f"{content} {day}"
                for seq, content, day in conn.execute(
                    _TEXTS_SQL, (json.dumps([seq for seq, _ in found]),)
                )
            }
        matched = {memory_id: matched_terms(terms, texts.get(seq, "")) for seq, memory_id in found}
        return TextHits([memory_id for _, memory_id in found], matched, documents, total)

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
        with self._bounded(deadline) as conn:
            names = named_entities(conn, query) if names is None else list(names)
            if not names:
                return []
            name_words = {word for name in names for word in words(name)}
            rest = fts_query(
                " ".join(t for t in query_terms(query) if strip_accents(t) not in name_words)
            )
            params: dict[str, object] = {"names": json.dumps(names), "limit": limit}
            if rest is None:
                rows = conn.execute(_ENTITY_ONLY_SQL, params).fetchall()
            else:
                rows = conn.execute(_ENTITY_SQL, {**params, "rest": rest}).fetchall()
        return [str(row[0]) for row in rows]
