"""The vector leg on a server store: an in-process copy of one model's vectors, exact search.

pgvector's exact scan reads every row on the server for each query (about 150 ms at 10k x
1,536 on a busy 2-core machine) and an HNSW index answers approximately. The SQLite engine's
answer does better on both counts (timothy/store/vector_index.py): unit-length float32 rows
in this process, a first pass over their int8 codes for large copies (quantized.py, a proven
bound), and exact float re-scoring of the few rows that can still be in the top k. The same
copy serves a server store: loaded once from the server, then kept current by the server's
change counter (migration 4's `vector_changes`, written by a trigger on each model's table
in commit order), so a write from this or any other machine is picked up by reading only the
rows that changed, at the next search. Each search costs two short round trips (the changes
since the last look, and which of the best rows are still of the wanted status); the answer
is exactly pgvector's exact cosine top k (tests/store/test_vector_copy.py).

A lean copy (`float_rows_from_server`, PgSearch's default, from LEAN_FROM_ROWS rows) keeps
only the codes (150 MiB instead of 750 MiB at 100k x 1,536) and reads the rows it re-scores
from the server by key: one more round trip, about as quick as float rows in memory at 100k.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeAlias

import psycopg
from psycopg.adapt import Loader
from psycopg.pq import Format

from timothy import heap
from timothy.lazy import lazy_module
from timothy.store import quantized
from timothy.store.postgres.rows import Conn
from timothy.store.quantized import QuantizedRows
from timothy.store.vector_index import (
    QUANTIZED_FROM_ROWS,
    best_of_status,
    single_threaded_blas,
    unit_rows,
)
from timothy.store.vectors import EmbeddingModel, Vector

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    np = lazy_module("numpy")

log = logging.getLogger(__name__)

FloatArray: TypeAlias = "npt.NDArray[np.float32]"
Float64Array: TypeAlias = "npt.NDArray[np.float64]"
Places: TypeAlias = "npt.NDArray[np.intp]"
RawCursor = psycopg.Cursor[tuple[Any, ...]]

# Rows read per batch when loading a whole table.
_LOAD_BATCH = 4096
# A catch-up larger than this share of the copy reads the whole table again.
_RELOAD_SHARE = 8
# From this many rows on, a copy allowed to be lean is (float rows at 32k x 1,536: 192 MiB).
# Below it the float rows cost little, and re-scoring from memory saves a round trip that
# reads many rows when the codes bound loosely (bench/recall.py --store, 10k x 1,536 random
# vectors: vector leg 12.6 ms lean, of which 11 ms reading rows back).
LEAN_FROM_ROWS = 32_768


class _RawVector(Loader):
    """pgvector's binary form as it comes (2 bytes dimension, 2 unused, big-endian float32s):
    turned into rows a batch at a time, with no Python object per number or per vector."""

    format = Format.BINARY

    def load(self, data: bytes | bytearray | memoryview) -> bytes:
        return bytes(data)


def _rows_of(raw: list[bytes], dimension: int) -> FloatArray:
    """The rows of a batch of raw vectors (see _RawVector), as native float32."""
    if not raw:
        return np.zeros((0, dimension), dtype=np.float32)
    width = 4 + 4 * dimension
    joined = np.frombuffer(b"".join(raw), dtype=np.uint8)
    if joined.shape[0] != width * len(raw):
        raise ValueError("a stored vector has another dimension than its model")
    body = joined.reshape(len(raw), width)[:, 4:]
    return np.ascontiguousarray(body).view(">f4").astype(np.float32)


class PgVectorCopy:
    """One model's vectors as unit float32 rows (and int8 codes, when large), kept in step
    with the server's table through its change counter."""

    def __init__(
        self,
        model: EmbeddingModel,
        *,
        quantized_from: int | None = QUANTIZED_FROM_ROWS,
        float_rows_from_server: bool = False,
        lean_from: int = LEAN_FROM_ROWS,
    ) -> None:
        self.model = model
        self.lean_from = lean_from
        self.quantized_from = quantized_from if quantized.available() else None
        self.float_rows_from_server = float_rows_from_server
        self._lock = threading.Lock()
        self._rows: FloatArray = np.zeros((0, model.dimension), dtype=np.float32)
        self._seqs: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._count = 0
        self._place: dict[int, int] = {}  # memory seq -> row
        self._zero: set[int] = set()  # rows of length 0 (or no longer stored): match nothing
        self._codes: QuantizedRows | None = None
        self._lean = False
        self._change = -1  # the last change seen; -1: never loaded
        self._oid: int | None = None  # the server's type id of `vector`

    @property
    def size(self) -> int:
        return self._count

    @property
    def holds_vectors(self) -> bool:
        """Whether the copy, as last read, holds a vector that can match."""
        return self._count > len(self._zero)

    @property
    def loaded(self) -> bool:
        return self._change >= 0

    @property
    def coded(self) -> bool:
        return self._codes is not None

    @property
    def lean(self) -> bool:
        return self._lean

    @property
    def nbytes(self) -> int:
        codes = self._codes.nbytes if self._codes is not None else 0
        return int(self._rows.nbytes + self._seqs.nbytes + codes)

    # -- keeping up with the server ----------------------------------------------------

    def _raw_cursor(self, conn: Conn, *, streamed: bool = False) -> RawCursor:
        """A cursor that reads vectors in pgvector's binary form, as bytes (_RawVector);
        `streamed`: a server-side cursor, read a batch at a time (a whole table's result
        would otherwise be held in this process at once: 600 MB at 100k x 1,536)."""
        if self._oid is None:
            row = conn.execute("SELECT 'vector'::regtype::oid").fetchone()
            assert row is not None
            self._oid = int(row[0])
        cur: RawCursor = (
            conn.cursor("timothy_vector_copy", binary=True)
            if streamed
            else conn.cursor(binary=True)
        )
        cur.adapters.register_loader(self._oid, _RawVector)
        return cur

    def refresh(self, conn: Conn) -> None:
        """Load the table (first use) or read the rows changed since the last look."""
        with self._lock:
            self._refresh(conn)

    def _refresh(self, conn: Conn) -> None:
        if self._change < 0:
            self._load_all(conn)
            return
        cur = self._raw_cursor(conn)
        # One statement, one snapshot: the changes and the vectors they left.
        cur.execute(
            f"SELECT c.change, c.memory_seq, v.embedding FROM vector_changes c "
            f"LEFT JOIN {self.model.table} v ON v.memory_seq = c.memory_seq "
            "WHERE c.model_id = %s AND c.change > %s",
            (self.model.id, self._change),
        )
        changed = cur.fetchall()
        if not changed:
            return
        if len(changed) > max(1024, self._count // _RELOAD_SHARE):
            self._load_all(conn)  # a backfill: reading everything is quicker
            return
        self._apply([(int(seq), raw) for _, seq, raw in changed])
        self._change = max(self._change, max(int(change) for change, _, _ in changed))

    def _load_all(self, conn: Conn) -> None:
        dimension = self.model.dimension
        with conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            latest_row = conn.execute(
                "SELECT coalesce(max(change), 0) FROM vector_changes WHERE model_id = %s",
                (self.model.id,),
            ).fetchone()
            latest = 0 if latest_row is None else int(latest_row[0])
            count_row = conn.execute(f"SELECT count(*) FROM {self.model.table}").fetchone()
            expected = 0 if count_row is None else int(count_row[0])
            coded = self.quantized_from is not None and expected >= self.quantized_from
            lean = coded and self.float_rows_from_server and expected >= self.lean_from
            capacity = expected + max(64, expected // (64 if lean else 16))
            seqs = np.zeros(capacity, dtype=np.int64)
            rows = np.empty((0 if lean else capacity, dimension), dtype=np.float32)
            codes = QuantizedRows(dimension, capacity) if coded else None
            zero: list[int] = []
            count = 0
            cur = self._raw_cursor(conn, streamed=True)
            cur.execute(f"SELECT memory_seq, embedding FROM {self.model.table} ORDER BY memory_seq")
            while True:
                batch = cur.fetchmany(_LOAD_BATCH)
                if not batch:
                    break
                size = len(batch)
                if count + size > seqs.shape[0]:  # rows written since the count
                    seqs, rows = self._grown(seqs, rows, codes, count + size, lean=lean)
                part = _rows_of([raw for _, raw in batch], dimension)
                zero.extend(place + count for place in unit_rows(part))
                if codes is not None:
                    codes.put(np.arange(count, count + size), part)
                if not lean:
                    rows[count : count + size] = part
                seqs[count : count + size] = [int(seq) for seq, _ in batch]
                count += size
        self._rows, self._seqs, self._count, self._codes, self._lean = (
            rows,
            seqs,
            count,
            codes,
            lean,
        )
        self._place = {seq: row for row, seq in enumerate(seqs[:count].tolist())}
        self._zero = set(zero)
        self._change = latest
        heap.give_back()
        log.debug("loaded %d vectors of %s from the server", count, self.model.name)

    def _apply(self, changed: Iterable[tuple[int, bytes | None]]) -> None:
        """Changed rows into the copy; a row no longer stored stays, matching nothing."""
        dimension = self.model.dimension
        places: list[int] = []
        units: list[FloatArray] = []
        for seq, raw in changed:
            vector = (
                _rows_of([raw], dimension)[0]
                if raw is not None
                else np.zeros(dimension, dtype=np.float32)
            )
            norm = float(np.linalg.norm(vector))
            if norm > 0:
                vector /= norm
            row = self._place.get(seq)
            if row is None:
                if self._count == self._seqs.shape[0]:
                    self._seqs, self._rows = self._grown(
                        self._seqs, self._rows, self._codes, self._count + 1, lean=self._lean
                    )
                row = self._count
                self._count += 1
                self._seqs[row] = seq
                self._place[seq] = row
            if not self._lean:
                self._rows[row] = vector
            places.append(row)
            units.append(vector)
            if norm > 0:
                self._zero.discard(row)
            else:
                self._zero.add(row)
        if self._codes is not None and places:
            self._codes.put(np.asarray(places, dtype=np.intp), np.vstack(units))
        wanted = self.quantized_from is not None and self._count >= self.quantized_from
        if wanted and self._codes is None:  # grown large: code every row once
            codes = QuantizedRows(dimension, self._seqs.shape[0])
            codes.put(np.arange(self._count), self._rows[: self._count])
            self._codes = codes

    def _grown(
        self,
        seqs: npt.NDArray[np.int64],
        rows: FloatArray,
        codes: QuantizedRows | None,
        needed: int,
        *,
        lean: bool,
    ) -> tuple[npt.NDArray[np.int64], FloatArray]:
        """Room for `needed` rows: the seqs, the float rows (none in a lean copy), the codes."""
        capacity = max(needed, seqs.shape[0] + max(64, seqs.shape[0] // 4))
        new_seqs = np.zeros(capacity, dtype=np.int64)
        new_seqs[: seqs.shape[0]] = seqs
        if not lean:
            new_rows = np.empty((capacity, self.model.dimension), dtype=np.float32)
            new_rows[: rows.shape[0]] = rows
            rows = new_rows
        if codes is not None:
            codes.reserve(capacity)
        return new_seqs, rows

    # -- searching ----------------------------------------------------------------------

    def nearest(
        self, conn: Conn, query: Vector, limit: int, *, status: str = "active"
    ) -> list[tuple[str, float]]:
        """The `limit` memories of `status` most similar to `query`: (id, cosine similarity),
        best first, ties by memory order. Exact: every stored vector is compared."""
        vector = np.asarray(query, dtype=np.float32).reshape(-1)
        if vector.shape[0] != self.model.dimension:
            raise ValueError(
                f"The query vector has {vector.shape[0]} numbers; {self.model.name} vectors "
                f"have {self.model.dimension}."
            )
        norm = float(np.linalg.norm(vector))
        if limit <= 0 or not np.isfinite(norm) or norm == 0:
            return []
        single_threaded_blas()
        unit = vector / np.float32(norm)
        with self._lock:
            self._refresh(conn)
            count = self._count
            if count == 0:
                return []
            seqs = self._seqs[:count].copy()
            zero = np.fromiter(self._zero, dtype=np.intp, count=len(self._zero))
            rescore: Callable[[Places], Float64Array]
            if self._codes is not None:
                lower, upper = self._codes.bounds(unit, count, keep=limit, excluded=zero)
                if self._lean:

                    def rescore(places: Places) -> Float64Array:
                        return self._scores_from_server(conn, seqs[places], unit)

                else:
                    rows = self._rows

                    def rescore(places: Places) -> Float64Array:
                        return (rows[places] @ unit).astype(np.float64)

            else:
                scores = (self._rows[:count] @ unit).astype(np.float64)
                scores[zero] = -np.inf
                lower = upper = scores

                def rescore(places: Places) -> Float64Array:
                    return scores[places]

            return best_of_status(
                lambda some: _ids_of_status(conn, some, status),
                seqs,
                lower,
                upper,
                rescore,
                limit,
                lookups=3,  # each look-up is a round trip to the server
            )

    def _scores_from_server(
        self, conn: Conn, seqs: npt.NDArray[np.int64], unit: FloatArray
    ) -> Float64Array:
        """Exact scores of a few rows read from the server by key; a row no longer stored
        matches nothing."""
        cur = self._raw_cursor(conn)
        cur.execute(
            f"SELECT memory_seq, embedding FROM {self.model.table} WHERE memory_seq = ANY(%s)",
            (seqs.tolist(),),
        )
        found = {int(seq): raw for seq, raw in cur.fetchall()}
        present = [seq for seq in seqs.tolist() if seq in found]
        scores = np.full(seqs.shape[0], -np.inf, dtype=np.float64)
        if present:
            rows = _rows_of([found[seq] for seq in present], self.model.dimension)
            unit_rows(rows)
            where = np.asarray([seq in found for seq in seqs.tolist()], dtype=np.bool_)
            scores[where] = (rows @ unit).astype(np.float64)
        return scores


def _ids_of_status(conn: Conn, seqs: list[int], status: str) -> dict[int, str]:
    return {
        int(seq): str(memory_id)
        for seq, memory_id in conn.execute(
            "SELECT seq, id FROM memories WHERE seq = ANY(%s) AND status = %s", (seqs, status)
        )
    }
