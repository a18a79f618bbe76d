"""The text leg on a server store: an in-process index of every memory's lexemes, exact ranking.

The text leg ranks the article's OR matches (the memories that share a lexeme with the
question) by the summed BM25 rarity of the lexemes each shares, then by ts_rank, then newest
first (search.py's `_TEXT_SQL`). On the server that ranks every match: about half the store
when the question names a common name (5,000 rows at 10k), and the rarities themselves need
a count of the whole table and of each lexeme's matches (21 ms each at 100k).

This copy keeps, for every memory of any status, its `tsv` lexemes (postings per lexeme, as
numpy row numbers) and whether it is active: loaded once, then kept current through migration
5's `memory_changes` (a row per changed memory, stamped with the writing transaction's id),
so a write from this or any other machine is read at the next search, and only the memories
that changed are read. A search then:

1. reads what changed since its last look, and asks the server how it reads the question
   (its lexemes, each as `to_tsquery` reads it; no table is read);
2. counts each lexeme's memories and the store here, so computes the rarities as the server
   would (the same float operations in the same order), and each matching active memory's sum;
3. sends the server only the memories whose sum reaches the limit-th best (the head: the top
   plus the whole group tied with the last), which orders them by sum, ts_rank and seq,
   re-checking that each is still active and matching, and returns the winners with their
   text.

The answer is today's SQL's, row for row (tests/store/test_text_copy.py). A question that
`to_tsquery` reads as a phrase (a hyphenated word, an address) is answered by that SQL.
"""

from __future__ import annotations

import logging
import math
import re
import threading
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from timothy import heap
from timothy.lazy import lazy_module
from timothy.store.postgres.rows import Conn

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    np = lazy_module("numpy")

log = logging.getLogger(__name__)

Rows: TypeAlias = "npt.NDArray[np.int64]"
Ids: TypeAlias = "npt.NDArray[np.int32]"  # lexeme ids, and row numbers in the postings

# Rows read per batch when loading the whole table.
_LOAD_BATCH = 4096
# Changed memories kept beside the postings before they are rebuilt (at least this many, or
# this share of the store).
_OVERLAY_MIN = 1024
_OVERLAY_SHARE = 8

# A to_tsquery operand as the server prints it: one quoted lexeme.
_ONE_LEXEME = re.compile(r"^'((?:[^']|'')*)'$")
# plainto_tsquery's form: quoted lexemes joined by &.
_AND_LEXEMES = re.compile(r"^'((?:[^']|'')*)'(?: & '((?:[^']|'')*)')*$")
_QUOTED = re.compile(r"'((?:[^']|'')*)'")

# How the server reads a question: each lexeme of to_tsvector, in the order the text leg's
# weights are summed, as to_tsquery reads it quoted (what `tsv @@` matches). Then each term's
# plainto_tsquery (TextHits.documents).
ANALYSE_SQL = """
SELECT 0 AS part, i, to_tsquery('english', '''' || replace(lexeme, '''', '''''') || '''')::text,
    lexeme
FROM unnest(tsvector_to_array(to_tsvector('english', %(text)s))) WITH ORDINALITY AS l (lexeme, i)
UNION ALL
SELECT 1, i, plainto_tsquery('english', t)::text, t
FROM unnest(%(terms)s::text[]) WITH ORDINALITY AS t (t, i)
ORDER BY 1, 2
"""

# The head's memories in the text leg's order (search.py's `_TEXT_SQL`, whose rarity sums
# come from here), still active and matching.
HEAD_SQL = """
WITH q AS (
    SELECT to_tsquery('english',
        string_agg('''' || replace(lexeme, '''', '''''') || '''', ' | ')) AS query
    FROM unnest(tsvector_to_array(to_tsvector('english', %(text)s))) AS lexeme
),
head (seq, rarity) AS (SELECT * FROM unnest(%(seqs)s::bigint[], %(rarities)s::float8[]))
SELECT m.seq, m.id, m.content, m.day FROM head JOIN memories m ON m.seq = head.seq, q
WHERE m.status = 'active' AND (m.tsv @@ q.query) IS TRUE  -- (not by the text index)
ORDER BY head.rarity DESC, ts_rank(m.tsv, q.query) DESC, m.seq DESC
LIMIT %(limit)s
"""

_CATCH_UP_SQL = """
SELECT s.xmin::text, c.memory_seq, m.status = 'active', tsvector_to_array(m.tsv)
FROM (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin) s
LEFT JOIN (memory_changes c LEFT JOIN memories m ON m.seq = c.memory_seq)
    ON c.xid >= %s::text::xid8
"""


def _unquote(text: str) -> str:
    return text.replace("''", "'")


@dataclass(frozen=True, slots=True)
class Reading:
    """How the server reads a question: `lexemes`, one per weight in summing order (None:
    to_tsquery dropped it, it matches nothing); `terms`, each term's lexemes, all required
    (empty: matches nothing). `simple` is False when some lexeme reads as a phrase."""

    lexemes: tuple[str | None, ...]
    terms: tuple[tuple[str, ...], ...]
    simple: bool
    said: tuple[str, ...] = ()  # each weight's lexeme as to_tsvector gave it


def reading_of(rows: Iterable[tuple[int, int, str, str]], terms: int) -> Reading:
    """The rows of ANALYSE_SQL as a Reading."""
    lexemes: list[str | None] = []
    said: list[str] = []
    found: list[tuple[str, ...]] = [() for _ in range(terms)]
    simple = True
    for part, index, query, given in rows:
        if part == 0:
            said.append(str(given))
            if not query:
                lexemes.append(None)
                continue
            one = _ONE_LEXEME.match(query)
            if one is None:
                simple = False
                lexemes.append(None)
            else:
                lexemes.append(_unquote(one.group(1)))
        else:
            if not query:
                continue
            if _AND_LEXEMES.match(query) is None:
                simple = False
                continue
            found[int(index) - 1] = tuple(_unquote(x) for x in _QUOTED.findall(query))
    return Reading(tuple(lexemes), tuple(found), simple, tuple(said))


@dataclass(frozen=True, slots=True)
class Head:
    """What the server is asked to order: memory seqs and their rarity sums; with each
    weight's rarity, the documents of each term and the store's size (TextHits)."""

    seqs: list[int]
    rarities: list[float]
    documents: list[int]
    total: int


class PgTextCopy:
    """Every memory's lexemes and whether it is active, following the server's changes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._vocabulary: dict[str, int] = {}
        # The postings, rebuilt at load and when the overlay grows: base rows in seq order.
        self._seqs: Rows = np.zeros(0, dtype=np.int64)
        self._active: npt.NDArray[np.bool_] = np.zeros(0, dtype=np.bool_)
        self._live: npt.NDArray[np.bool_] = np.zeros(0, dtype=np.bool_)  # not overridden
        self._live_count = 0
        self._row_start: Rows = np.zeros(1, dtype=np.int64)  # row -> its lexeme ids
        self._row_words: Ids = np.zeros(0, dtype=np.int32)
        self._word_start: Rows = np.zeros(1, dtype=np.int64)  # lexeme id -> its rows
        self._word_rows: Ids = np.zeros(0, dtype=np.int32)
        # Memories changed since: seq -> (active, lexeme ids), or None once deleted.
        self._overlay: dict[int, tuple[bool, frozenset[int]] | None] = {}
        self._overlay_words: dict[int, set[int]] = {}  # lexeme id -> overlay seqs
        self._overlay_count = 0  # overlay memories that exist
        self._xmin: str | None = None  # where the next catch-up starts; None: never loaded

    @property
    def loaded(self) -> bool:
        return self._xmin is not None

    @property
    def size(self) -> int:
        """Memories held, of any status."""
        return self._live_count + self._overlay_count

    # -- keeping up with the server ----------------------------------------------------

    def refresh(self, conn: Conn) -> None:
        """Load the table (first use) or read the memories changed since the last look."""
        with self._lock:
            if self._xmin is None:
                self._load_all(conn)
            else:
                self._catch_up(conn.execute(_CATCH_UP_SQL, (self._xmin,)).fetchall())

    def catch_up_sql(self) -> tuple[str, tuple[str]] | None:
        """The statement that reads what changed (None before the first load), for a caller
        that runs it on its own connection (inside its deadline), then hands its rows to
        `apply`."""
        if self._xmin is None:
            return None
        return _CATCH_UP_SQL, (self._xmin,)

    def _word(self, lexeme: str) -> int:
        word = self._vocabulary.get(lexeme)
        if word is None:
            word = self._vocabulary[lexeme] = len(self._vocabulary)
        return word

    def _load_all(self, conn: Conn) -> None:
        seqs: list[int] = []
        active: list[bool] = []
        starts: list[int] = [0]
        words = array("i")  # (no Python object per lexeme of the store)
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            row = conn.execute("SELECT pg_snapshot_xmin(pg_current_snapshot())::text").fetchone()
            assert row is not None
            xmin = str(row[0])
            cur = conn.cursor("timothy_text_copy")
            cur.execute(
                "SELECT seq, status = 'active', tsvector_to_array(tsv) FROM memories ORDER BY seq"
            )
            word = self._word
            while True:
                batch = cur.fetchmany(_LOAD_BATCH)
                if not batch:
                    break
                for seq, is_active, lexemes in batch:
                    seqs.append(int(seq))
                    active.append(bool(is_active))
                    words.extend(word(lexeme) for lexeme in lexemes)
                    starts.append(len(words))
            cur.close()
        self._build(
            np.asarray(seqs, dtype=np.int64),
            np.asarray(active, dtype=np.bool_),
            np.asarray(starts, dtype=np.int64),
            np.frombuffer(words, dtype=np.int32),
        )
        self._xmin = xmin
        heap.give_back()
        log.debug("loaded the lexemes of %d memories from the server", len(seqs))

    def _build(self, seqs: Rows, active: npt.NDArray[np.bool_], starts: Rows, words: Ids) -> None:
        """New postings from rows in seq order; the overlay is emptied."""
        count = seqs.shape[0]
        rows = np.repeat(np.arange(count, dtype=np.int32), np.diff(starts))
        order = np.argsort(words, kind="stable")  # within a lexeme, rows stay in order
        per_word = np.bincount(words, minlength=len(self._vocabulary))
        self._seqs = seqs
        self._active = active
        self._live = np.ones(count, dtype=np.bool_)
        self._live_count = count
        self._row_start = starts
        self._row_words = words
        self._word_start = np.concatenate(([0], np.cumsum(per_word))).astype(np.int64)
        self._word_rows = rows[order]
        self._overlay = {}
        self._overlay_words = {}
        self._overlay_count = 0

    def apply(self, rows: Sequence[tuple[str, int | None, bool | None, list[str] | None]]) -> None:
        """The rows of the catch-up statement (see `catch_up_sql`) into the copy."""
        with self._lock:
            self._catch_up(rows)

    def _catch_up(
        self, rows: Sequence[tuple[str, int | None, bool | None, list[str] | None]]
    ) -> None:
        if not rows:
            return
        for _, seq, is_active, lexemes in rows:
            if seq is None:
                continue
            self._put(int(seq), None if lexemes is None else (bool(is_active), lexemes))
        self._xmin = str(rows[0][0])
        if len(self._overlay) > max(_OVERLAY_MIN, self._seqs.shape[0] // _OVERLAY_SHARE):
            self._compact()

    def _put(self, seq: int, memory: tuple[bool, list[str]] | None) -> None:
        place = int(np.searchsorted(self._seqs, seq))
        if place < self._seqs.shape[0] and self._seqs[place] == seq and self._live[place]:
            self._live[place] = False
            self._live_count -= 1
        old = self._overlay.get(seq)
        if old is not None:
            self._overlay_count -= 1
            for word in old[1]:
                self._overlay_words[word].discard(seq)
        if memory is None:
            self._overlay[seq] = None
            return
        words = frozenset(self._word(lexeme) for lexeme in memory[1])
        self._overlay[seq] = (memory[0], words)
        self._overlay_count += 1
        for word in words:
            self._overlay_words.setdefault(word, set()).add(seq)

    def _compact(self) -> None:
        """The overlay folded into new postings."""
        kept = np.flatnonzero(self._live)
        every_length = np.diff(self._row_start)
        lengths = every_length[kept]
        base_words = self._row_words[np.repeat(self._live, every_length)]
        items = sorted((seq, memory) for seq, memory in self._overlay.items() if memory is not None)
        seqs = np.concatenate((self._seqs[kept], np.asarray([s for s, _ in items], dtype=np.int64)))
        active = np.concatenate(
            (self._active[kept], np.asarray([m[0] for _, m in items], dtype=np.bool_))
        )
        extra = [sorted(m[1]) for _, m in items]
        lengths = np.concatenate((lengths, np.asarray([len(w) for w in extra], dtype=np.int64)))
        words = np.concatenate(
            (base_words, np.asarray([w for ws in extra for w in ws], dtype=np.int32))
        )
        starts = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        order = np.argsort(seqs, kind="stable")
        if not np.all(order[:-1] < order[1:]):  # overlay seqs interleave: rows in seq order
            per_row = [words[starts[r] : starts[r + 1]] for r in order]
            lengths = lengths[order]
            words = np.concatenate(per_row) if per_row else words
            starts = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
            seqs, active = seqs[order], active[order]
        self._build(seqs, active, starts, words)

    # -- searching ----------------------------------------------------------------------

    def _rows_of(self, word: int) -> tuple[Ids, set[int]]:
        """The live base rows and the overlay seqs holding a lexeme (any status)."""
        if word >= self._word_start.shape[0] - 1:
            base = np.zeros(0, dtype=np.int32)
        else:
            base = self._word_rows[self._word_start[word] : self._word_start[word + 1]]
            base = base[self._live[base]]
        return base, self._overlay_words.get(word, set())

    def weights(self, reading: Reading) -> list[float]:
        """Each weight's rarity, as the text leg's SQL computes it (`_WEIGHTS`)."""
        with self._lock:
            total = float(self.size)
            found: list[float] = []
            for lexeme in reading.lexemes:
                word = None if lexeme is None else self._vocabulary.get(lexeme)
                n = 0.0
                if word is not None:
                    base, extra = self._rows_of(word)
                    n = float(base.shape[0] + len(extra))
                found.append(math.log(1 + (total - n + 0.5) / (n + 0.5)))
            return found

    def head(self, reading: Reading, limit: int) -> Head:
        """The memories the server must order for the top `limit` (see the module's text)."""
        with self._lock:
            total = self.size
            base_sum = np.zeros(self._seqs.shape[0], dtype=np.float64)
            overlay_sum: dict[int, float] = {}
            for lexeme in reading.lexemes:
                if lexeme is None:
                    continue
                word = self._vocabulary.get(lexeme)
                if word is None:
                    continue
                base, extra = self._rows_of(word)
                n = float(base.shape[0] + len(extra))
                if n == 0:
                    continue
                # The server's ln(1 + (total.n - d.n + 0.5) / (d.n + 0.5)), in float8.
                idf = math.log(1 + (float(total) - n + 0.5) / (n + 0.5))
                base_sum[base] += idf
                for seq in extra:
                    overlay_sum[seq] = overlay_sum.get(seq, 0.0) + idf
            documents = [self._documents(term) for term in reading.terms]
            matched = np.flatnonzero((base_sum > 0) & self._active & self._live)
            seqs = self._seqs[matched].tolist()
            sums = base_sum[matched].tolist()
            for seq, value in overlay_sum.items():
                memory = self._overlay.get(seq)
                if memory is not None and memory[0]:
                    seqs.append(seq)
                    sums.append(value)
        if len(sums) > limit:
            values = np.asarray(sums, dtype=np.float64)
            floor = np.partition(values, len(sums) - limit)[len(sums) - limit]
            keep = np.flatnonzero(values >= floor)
            seqs = [seqs[i] for i in keep.tolist()]
            sums = values[keep].tolist()
        return Head(seqs, sums, documents, total)

    def _documents(self, lexemes: tuple[str, ...]) -> int:
        """Memories (any status) holding every one of `lexemes`; none for no lexeme."""
        if not lexemes:
            return 0
        base: Ids | None = None
        extra: set[int] | None = None
        for lexeme in lexemes:
            word = self._vocabulary.get(lexeme)
            if word is None:
                return 0
            rows, seqs = self._rows_of(word)
            base = rows if base is None else np.intersect1d(base, rows, assume_unique=True)
            extra = set(seqs) if extra is None else extra & seqs
        assert base is not None and extra is not None
        return int(base.shape[0]) + len(extra)
