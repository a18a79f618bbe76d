"""An in-memory copy of one embedding model's vectors, for exact cosine k-NN at memory speed.

sqlite-vec's exact scan costs about 2 ms per 1,000 rows; one matrix-vector product over
unit-length float32 rows gives the same answer (exact cosine, not an approximation) an order
of magnitude faster. From QUANTIZED_FROM_ROWS rows on, that product is itself bound by memory
speed (600 MB per query at 100k rows), so a first pass over int8 codes of the rows (a quarter
of the bytes) bounds every row's cosine, and only the few rows that can still be in the top k
are re-scored exactly (see quantized.py): the answer is the same, to the last place.
From LEAN_FROM_BYTES of float rows on (or at any size, for rows of at most SHORT_ROW_BYTES,
such as the local model's), such a copy is lean: it keeps only the codes (150 MiB
at 100k x 1,536 instead of 750 MiB with the float rows) and reads the few float rows it
re-scores (the likeliest first, which raises the bar for the rest) from the store's table of
one row per vector (`vector_rows_<id>`, migration 7), by memory seq, inside the same read
transaction as the rest of the search (a few milliseconds at 100k). The answer is as exact.
The copy follows the `vector_changes` counter, so writes from this or any other process are
picked up by reading only the rows that changed.
"""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeAlias

import apsw
from threadpoolctl import threadpool_limits

from timothy import heap
from timothy.lazy import lazy_module
from timothy.store import quantized
from timothy.store.db import scalar
from timothy.store.quantized import QuantizedRows, kth_largest
from timothy.store.vec_storage import (
    Batch,
    ShadowLayoutError,
    read_chunks,
    read_float_rows,
    read_rows,
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

# From this many rows on, search scans int8 codes first (below it, the float32 product is
# quicker than the scan plus its bookkeeping).
QUANTIZED_FROM_ROWS = 8_192
# From this many bytes of float32 rows on, a coded copy keeps only its codes and reads the
# rows it re-scores from the store (about 21k rows of 1,536 numbers, 87k of 384). Below it
# the rows cost less memory than reading them back costs time: lean from the first coded
# row (8,192), a search at 10k x 1,536 took 1.5-2 ms more CPU (5.3-6.5 against 3.9-4.3 ms)
# and bench/recall.py's vector leg 2.2x its time under load (62 MiB less); at 10k x 384,
# 0.4-0.5 ms more (16 MiB less).
LEAN_FROM_BYTES = 128 * 2**20
# A coded copy of rows this short (the local model's 384 numbers: 1.5 KB, one page of the
# store's table each, where a 1,536-number row spills onto overflow pages) is lean at any
# size: at 10k x 384 the vector search took 0.1-0.5 ms more (p50 1.5-2.0 against 1.3-1.5
# ms, load 4.5; the text leg, the slowest, takes ~5 ms there) and the idle app holds 16 MiB
# less.
SHORT_ROW_BYTES = 2048


@functools.cache
def single_threaded_blas() -> None:
    """Run BLAS on the calling thread only (process-wide, once).

    A matrix-vector product is bound by memory bandwidth, and recall's legs already run side
    by side: BLAS worker threads only add their wake-up latency (on a busy two-core machine,
    16 ms instead of 0.4 ms for 1,000 rows).
    """
    try:
        threadpool_limits(limits=1, user_api="blas")
    except Exception:  # an unknown BLAS build: slower, still correct
        log.warning("could not limit BLAS threads", exc_info=True)


def unit_rows(rows: FloatArray, chunk: int = 4096) -> list[int]:
    """Scale rows to length 1 in place, a chunk at a time (no full-size temporary);
    returns the indexes of all-zero rows, which stay zero."""
    zero: list[int] = []
    for start in range(0, rows.shape[0], chunk):
        part = rows[start : start + chunk]
        norms = np.sqrt(np.einsum("ij,ij->i", part, part))
        empty = norms == 0
        if empty.any():
            zero.extend((np.flatnonzero(empty) + start).tolist())
            norms[empty] = 1.0
        part /= norms[:, None]
    return zero


class VectorIndex:
    """One model's vectors as a float32 matrix of unit rows, kept in step with the table."""

    def __init__(
        self,
        model: EmbeddingModel,
        *,
        read_shadow_tables: bool = True,
        quantized_from: int | None = QUANTIZED_FROM_ROWS,
        float_rows_from_store: bool = True,
        lean_from_bytes: int = LEAN_FROM_BYTES,
        short_row_bytes: int = SHORT_ROW_BYTES,
    ) -> None:
        self.model = model
        # Read vec0's storage directly (fast); False goes through the vec0 table (slow).
        self.read_shadow_tables = read_shadow_tables
        # Rows from which searches scan int8 codes first; None: never (no codes are kept).
        self.quantized_from = quantized_from if quantized.available() else None
        self._codes: QuantizedRows | None = None
        # Whether a coded copy is lean (see `_lean_at`); False keeps the float rows too.
        self.float_rows_from_store = float_rows_from_store
        self.lean_from_bytes = lean_from_bytes
        self.short_row_bytes = short_row_bytes
        # Lean: only the codes are kept; re-scoring reads its few float rows from the store.
        self._lean = False
        self._lock = threading.Lock()
        self._rows: FloatArray = np.zeros((0, model.dimension), dtype=np.float32)
        self._seqs: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._count = 0
        # Memory seq -> row, as two arrays (a dict of 100k ints costs ~10 MB): the seqs in
        # order and the row of each (see `_row_of`).
        self._sorted: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._rows_by_seq: npt.NDArray[np.intp] = np.zeros(0, dtype=np.intp)
        self._zero: set[int] = set()  # rows of length 0: similar to nothing
        self._change = -1  # the last vector_changes counter seen; -1: never loaded

    @property
    def size(self) -> int:
        return self._count

    @property
    def coded(self) -> bool:
        """Whether searches scan int8 codes first (a large copy, and simsimd is here)."""
        return self._codes is not None

    @property
    def lean(self) -> bool:
        """Whether only the int8 codes are held (the float rows stay in the store)."""
        return self._lean

    @property
    def nbytes(self) -> int:
        """Bytes held: the float32 rows (none in a lean copy), the int8 codes and the
        memory seqs."""
        codes = self._codes.nbytes if self._codes is not None else 0
        return int(self._rows.nbytes + self._seqs.nbytes + codes)

    # -- keeping up with the table ------------------------------------------------------

    def refresh(self, conn: apsw.Connection) -> None:
        """Load the table (first use) or read the rows written since the last look."""
        with self._lock:
            self._refresh(conn)

    def _latest_change(self, conn: apsw.Connection) -> int:
        return int(
            scalar(
                conn,
                "SELECT coalesce(max(change), 0) FROM vector_changes WHERE model_id = ?",
                (self.model.id,),
            )
        )

    def _refresh(self, conn: apsw.Connection) -> None:
        if self._change >= 0 and self._latest_change(conn) == self._change:
            return
        # One read transaction: the counter and the rows come from the same snapshot.
        own = not conn.in_transaction
        if own:
            conn.execute("BEGIN")
        try:
            latest = self._latest_change(conn)
            if self._change < 0:
                self._load_all(conn)
            elif latest > self._change:
                self._load_changed(conn)
            self._change = latest
        finally:
            if own and conn.in_transaction:
                # Never leave this thread's connection stuck on an old snapshot.
                try:
                    conn.execute("COMMIT")
                except apsw.Error:
                    conn.execute("ROLLBACK")

    def _load_all(self, conn: apsw.Connection) -> None:
        if self.read_shadow_tables:
            try:
                self._fill(conn, read_chunks(conn, self.model))
                return
            except ShadowLayoutError as exc:
                log.warning("reading %s row by row (slow): %s", self.model.table, exc)
                self.read_shadow_tables = False
        self._fill(conn, read_rows(conn, self.model))

    def _fill(self, conn: apsw.Connection, batches: Iterator[Batch]) -> None:
        """Replace the copy with `batches`. A small copy keeps float32 rows, written straight
        into one preallocated matrix; a large one (see `lean`) codes each batch as it comes
        and keeps only the codes, so not even loading holds the float rows."""
        dimension = self.model.dimension
        expected = int(str(scalar(conn, f"SELECT count(*) FROM {self.model.table}")))
        lean = self._lean_at(expected)
        if lean:
            heap.steady_large_blocks()
        # Room for some new rows without growing (a copy of everything); a lean copy's
        # rows are 1,536 bytes each, a small share of spare room is already megabytes.
        capacity = expected + max(64, expected // (64 if lean else 16))
        seqs = np.zeros(capacity, dtype=np.int64)
        rows = np.empty((0 if lean else capacity, dimension), dtype=np.float32)
        codes = QuantizedRows(dimension, capacity) if lean else None
        zero: list[int] = []
        count = 0
        for batch_seqs, batch_rows in batches:
            size = batch_seqs.shape[0]
            if count + size > seqs.shape[0]:
                seqs, rows = self._grown(seqs, rows, codes, count + size)
            if codes is not None:
                part = np.array(batch_rows, dtype=np.float32)  # a copy: scaled in place
                zero.extend(place + count for place in unit_rows(part))
                codes.put(np.arange(count, count + size), part)
            else:
                rows[count : count + size] = batch_rows
            seqs[count : count + size] = batch_seqs
            count += size
        order = np.argsort(seqs[:count], kind="stable")
        distinct = count == 0 or bool(np.all(np.diff(seqs[:count][order]) > 0))
        if count != expected or not distinct:
            raise ShadowLayoutError(f"{self.model.table} read {count} vectors of {expected}")
        if codes is None:
            zero = unit_rows(rows[:count])
        self._zero = set(zero)
        self._rows, self._seqs, self._count = rows, seqs, count
        self._index_seqs()
        self._codes, self._lean = codes, lean
        self._code_when_large()
        heap.give_back()
        log.debug("loaded %d vectors of %s into memory", count, self.model.name)

    def _lean_at(self, count: int) -> bool:
        """Whether a copy of `count` rows keeps only int8 codes, reading the few float rows
        the int8 pass leaves for exact re-scoring from the store (a large copy, or one of
        short rows)."""
        row_bytes = self.model.dimension * 4
        return (
            self.float_rows_from_store
            and self.quantized_from is not None
            and count >= self.quantized_from
            and (count * row_bytes >= self.lean_from_bytes or row_bytes <= self.short_row_bytes)
        )

    def _load_changed(self, conn: apsw.Connection) -> None:
        seqs = [
            int(str(row[0]))
            for row in conn.execute(
                "SELECT memory_seq FROM vector_changes WHERE model_id = ? AND change > ?",
                (self.model.id, self._change),
            )
        ]
        if len(seqs) > max(1024, self._count // 8):
            self._load_all(conn)  # a backfill: reading everything is quicker
            return
        read, _ = read_float_rows(conn, self.model, seqs)
        added: dict[int, int] = {}  # seq -> row, for rows new in this batch (seqs are distinct)
        changed: list[int] = []
        units: list[FloatArray] = []
        # A row no longer stored reads as zeros: it keeps its place, matching nothing.
        for seq, vector in zip(seqs, read, strict=True):
            norm = float(np.linalg.norm(vector))
            if norm > 0:
                vector /= norm
            row = self._row_of(seq)
            if row is None:
                if self._count == self._seqs.shape[0]:
                    self._seqs, self._rows = self._grown(
                        self._seqs, self._rows, self._codes, self._count + 1
                    )
                row = self._count
                self._count += 1
                self._seqs[row] = seq
                added[seq] = row
            if not self._lean:
                self._rows[row] = vector
            changed.append(row)
            units.append(vector)
            if norm > 0:
                self._zero.discard(row)
            else:
                self._zero.add(row)
        if added:
            self._index_seqs()
        if self._codes is not None and changed:
            self._codes.put(np.asarray(changed, dtype=np.intp), np.vstack(units))
        self._code_when_large()
        log.debug("caught up with %d changed vectors of %s", len(seqs), self.model.name)

    def _index_seqs(self) -> None:
        """Sort the seqs again (after a load, or rows added)."""
        order = np.argsort(self._seqs[: self._count], kind="stable")
        self._sorted = self._seqs[: self._count][order]
        self._rows_by_seq = order.astype(np.intp)

    def _row_of(self, seq: int) -> int | None:
        """The row of a memory seq already in the copy (rows added since the last
        `_index_seqs` are not found: a caller adding rows tracks those itself)."""
        place = int(np.searchsorted(self._sorted, seq))
        if place < self._sorted.shape[0] and int(self._sorted[place]) == seq:
            return int(self._rows_by_seq[place])
        return None

    def _code_when_large(self) -> None:
        """Code every row once the copy is large enough to be searched through codes (below
        that the codes would only take room), then let the float rows go (`_lean_at`)."""
        wanted = self.quantized_from is not None and self._count >= self.quantized_from
        if wanted and self._codes is None:
            codes = QuantizedRows(self.model.dimension, self._seqs.shape[0])
            codes.put(np.arange(self._count), self._rows[: self._count])
            self._codes = codes
        if self._codes is not None and not self._lean and self._lean_at(self._count):
            self._rows = np.zeros((0, self.model.dimension), dtype=np.float32)
            self._lean = True

    def _grown(
        self,
        seqs: npt.NDArray[np.int64],
        rows: FloatArray,
        codes: QuantizedRows | None,
        needed: int,
    ) -> tuple[npt.NDArray[np.int64], FloatArray]:
        """Room for `needed` rows: the seqs, the float rows (unless there are none, in a
        lean copy) and the codes (grown in place)."""
        capacity = max(needed, seqs.shape[0] + max(64, seqs.shape[0] // 4))
        new_seqs = np.zeros(capacity, dtype=np.int64)
        new_seqs[: seqs.shape[0]] = seqs
        if rows.shape[0]:
            new_rows = np.empty((capacity, rows.shape[1]), dtype=np.float32)
            new_rows[: rows.shape[0]] = rows
            rows = new_rows
        if codes is not None:
            codes.reserve(capacity)
        return new_seqs, rows

    # -- searching ----------------------------------------------------------------------

    def nearest(
        self, conn: apsw.Connection, query: Vector, limit: int, *, status: str = "active"
    ) -> list[tuple[str, float]]:
        """The `limit` memories of `status` most similar to `query`: (id, cosine similarity),
        best first, ties by memory order. Exact: every stored vector is compared (through
        its int8 codes first, for large copies, with a bound that leaves no row out; the
        rows it leaves in the running are read back from the store and scored exactly)."""
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
        with self._lock:
            # One read transaction: the copy, the float rows read back and the statuses
            # all come from the same snapshot of the store.
            own = not conn.in_transaction
            if own:
                conn.execute("BEGIN")
            try:
                return self._nearest(conn, vector / np.float32(norm), limit, status)
            finally:
                if own and conn.in_transaction:
                    try:
                        conn.execute("COMMIT")
                    except apsw.Error:
                        conn.execute("ROLLBACK")

    def _nearest(
        self, conn: apsw.Connection, unit: FloatArray, limit: int, status: str
    ) -> list[tuple[str, float]]:
        self._refresh(conn)
        count = self._count
        if count == 0:
            return []
        rows, seqs = self._rows, self._seqs
        zero = np.fromiter(self._zero, dtype=np.intp, count=len(self._zero))
        rescore: Callable[[npt.NDArray[np.intp]], Float64Array]
        if self._codes is not None:
            lower, upper = self._codes.bounds(unit, count, keep=limit, excluded=zero)
            if self._lean:

                def rescore(places: npt.NDArray[np.intp]) -> Float64Array:
                    return self._scores_from_store(conn, seqs[places], unit)

            else:

                def rescore(places: npt.NDArray[np.intp]) -> Float64Array:
                    return (rows[places] @ unit).astype(np.float64)

        else:
            scores = (rows[:count] @ unit).astype(np.float64)
            scores[zero] = -np.inf
            lower = upper = scores

            def rescore(places: npt.NDArray[np.intp]) -> Float64Array:
                return scores[places]

        return best_of_status(
            lambda some: _ids_of_status(conn, some, status),
            seqs[:count],
            lower,
            upper,
            rescore,
            limit,
            probe=self._lean,  # each row re-scored is read back from the store
        )

    def _scores_from_store(
        self, conn: apsw.Connection, seqs: npt.NDArray[np.int64], unit: FloatArray
    ) -> Float64Array:
        """Exact scores of a few rows, their float vectors read from the store and scaled
        to length 1 as the copy scales them; a row no longer stored matches nothing."""
        rows, found = read_float_rows(conn, self.model, seqs)
        unit_rows(rows)
        scores = (rows @ unit).astype(np.float64)
        scores[~found] = -np.inf
        return scores


def best_of_status(
    ids_of_status: Callable[[list[int]], dict[int, str]],
    seqs: npt.NDArray[np.int64],
    lower: Float64Array,
    upper: Float64Array,
    rescore: Callable[[npt.NDArray[np.intp]], Float64Array],
    limit: int,
    *,
    lookups: int = 2,
    probe: bool = False,
) -> list[tuple[str, float]]:
    """The `limit` rows of a status with the best exact scores, ties by memory order; either
    engine's copy uses it, `ids_of_status` saying which of some seqs have the status (and
    their ids). The first look-up asks about `lookups` x `limit` rows (more where each is a
    round trip to a server).

    Each row's exact score lies in [lower, upper] (-inf: the row matches nothing). Only rows
    whose upper bound reaches a threshold are re-scored and looked up: a threshold at or
    below the limit-th best exact score among rows of the status found so far leaves out
    only rows that cannot be in the answer. It starts at the limit-th best lower bound and
    comes down while rows of another status take places.

    With `probe`, when many rows reach the threshold, the few most likely to be in the
    answer (by the middle of their bounds) are re-scored first: their limit-th best exact
    score is a higher threshold, met by far fewer of the others (at 10k x 1,536, 74 rows
    re-scored instead of 173: it pays where each is read back from the store, at the cost
    of one more look-up of statuses).
    """
    eligible = int(np.count_nonzero(upper > -np.inf))
    if eligible == 0:
        return []
    known: dict[int, str | None] = {}  # memory seq -> id if of the status, else None
    scored_rows = np.zeros(0, dtype=np.intp)
    scored = np.zeros(0, dtype=np.float64)
    probe_size = limit + limit // 4 + 4

    def best_found() -> list[tuple[str, float]]:
        """The best `limit` rows of the status among those scored (ids looked up as needed)."""
        order = np.lexsort((seqs[scored_rows], -scored))
        ordered_seqs = seqs[scored_rows[order]].tolist()
        ordered_scores = scored[order].tolist()
        found: list[tuple[str, float]] = []
        checked, batch = 0, limit * lookups + 16
        while len(found) < limit and checked < len(ordered_seqs):
            window = ordered_seqs[checked : checked + batch]
            unknown = [seq for seq in window if seq not in known]
            if unknown:
                of_status = ids_of_status(unknown)
                known.update((seq, of_status.get(seq)) for seq in unknown)
            for seq, score in zip(window, ordered_scores[checked : checked + batch], strict=True):
                memory_id = known[seq]
                if memory_id is not None and score > -np.inf:
                    found.append((memory_id, score))
            checked += len(window)
            batch *= 4
        return found

    threshold = kth_largest(lower, min(limit, eligible))
    while True:
        wanted = np.flatnonzero(upper >= threshold)
        new = np.setdiff1d(wanted, scored_rows, assume_unique=True)
        if probe and new.shape[0] > 2 * probe_size:
            probe = False  # once: later rounds only come down for rows of another status
            middles = lower[new] + upper[new]
            first = new[np.argpartition(-middles, probe_size)[:probe_size]]
            scored_rows = np.concatenate([scored_rows, first])
            scored = np.concatenate([scored, rescore(first)])
            found = best_found()
            # Every row's exact score is at most its upper bound: a row below the limit-th
            # best exact score found so far cannot be in the answer.
            if len(found) >= limit and found[limit - 1][1] > threshold:
                threshold = found[limit - 1][1]
                wanted = np.flatnonzero(upper >= threshold)
            new = np.setdiff1d(wanted, scored_rows, assume_unique=False)
        if new.shape[0]:
            scored_rows = np.concatenate([scored_rows, new])
            scored = np.concatenate([scored, rescore(new)])
        found = best_found()
        if len(found) >= limit:
            kth = found[limit - 1][1]
            if kth >= threshold:  # every row left out has an upper bound below it
                return found[:limit]
            threshold = kth
        elif wanted.shape[0] >= eligible:
            return found
        else:
            threshold = kth_largest(lower, min(eligible, 4 * wanted.shape[0]))


def _ids_of_status(conn: apsw.Connection, seqs: list[int], status: str) -> dict[int, str]:
    return {
        int(str(seq)): str(memory_id)
        for seq, memory_id in conn.execute(
            # "+status": look the few rows up by seq, not every row up by status.
            "SELECT seq, id FROM memories WHERE seq IN (SELECT value FROM json_each(?)) "
            "AND +status = ?",
            (json.dumps(seqs), status),
        )
    }
