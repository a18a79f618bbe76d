"""sqlite-vec's storage, read directly: a vec0 table's vectors from its shadow tables.

Going through a vec0 table costs about 1 ms per row (it reads a whole chunk for each); its
shadow tables hold each chunk's vectors as one blob, its rowids and a validity bitmap. These
readers check that layout (sqlite-vec 0.1.x) on every read and raise ShadowLayoutError on
anything unexpected; the `*_rows` readers are the slow, layout-free way the callers fall
back to. Both the store's writer (`vectors`) and the in-memory index read through here.
Beside each vec0 table, a plain table holds the same vectors one row each
(`create_float_rows`), for reading a few of them by memory seq.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Protocol, TypeAlias

import apsw

from timothy.lazy import lazy_module

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    np = lazy_module("numpy")

FloatArray: TypeAlias = "npt.NDArray[np.float32]"
Batch: TypeAlias = "tuple[npt.NDArray[np.int64], FloatArray]"


class VecTable(Protocol):
    """One embedding model's vec0 table: its name and the length of its vectors, and the
    table of its float rows, one row per vector (`rows_table`)."""

    @property
    def table(self) -> str: ...

    @property
    def rows_table(self) -> str: ...

    @property
    def dimension(self) -> int: ...


def from_blob(blob: Any) -> FloatArray:
    return np.frombuffer(bytes(blob), dtype=np.float32)


class ShadowLayoutError(Exception):
    """The vec0 table's storage is not laid out as this version of the reader expects."""


def _columns(conn: apsw.Connection, table: str) -> list[str]:
    return [str(row[1]) for row in conn.execute(f'PRAGMA table_info("{table}")')]


def _check_layout(conn: apsw.Connection, model: VecTable) -> None:
    expected = {
        f"{model.table}_chunks": ["chunk_id", "size", "validity", "rowids"],
        f"{model.table}_rowids": ["rowid", "id", "chunk_id", "chunk_offset"],
        f"{model.table}_vector_chunks00": ["rowid", "vectors"],
    }
    for table, columns in expected.items():
        if _columns(conn, table) != columns:
            raise ShadowLayoutError(f"{table} is not the vec0 shadow table this reader knows")


def read_chunks(conn: apsw.Connection, model: VecTable) -> Iterator[Batch]:
    """Every (memory seqs, vectors) of a model, read from vec0's storage a chunk at a time.

    Going through the vec0 table costs about 1 ms per row (it reads a whole chunk for each);
    its shadow tables hold each chunk's vectors as one blob, its rowids and a validity
    bitmap. The layout is checked; anything unexpected raises ShadowLayoutError, and the
    caller falls back to the slow, layout-free way.
    """
    _check_layout(conn, model)
    width = model.dimension * 4
    for chunk_id, size, validity, rowids, vectors in conn.execute(
        # CROSS JOIN: the chunks in rowid order outside, each vector blob looked up by its
        # table's real rowid (`_rowid_`: the column "rowid" is no alias of it), so nothing
        # is sorted. SQLite otherwise scans the vector blobs first and sorts them, holding
        # every vector of the model in a temporary b-tree (600 MB at 100k x 1,536).
        f'SELECT c.chunk_id, c.size, c.validity, c.rowids, v.vectors FROM "{model.table}_chunks" c '
        f'CROSS JOIN "{model.table}_vector_chunks00" v '
        "ON v._rowid_ = c.chunk_id AND v.rowid = c.chunk_id ORDER BY c.chunk_id"
    ):
        slots = int(str(size))
        if (
            len(validity) != (slots + 7) // 8
            or len(rowids) != slots * 8
            or len(vectors) != slots * width
        ):
            raise ShadowLayoutError(f"chunk {chunk_id} of {model.table} has unexpected sizes")
        valid = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")
        used = np.flatnonzero(valid[:slots])
        seqs = np.frombuffer(rowids, dtype="<i8")
        rows = np.frombuffer(vectors, dtype="<f4").reshape(slots, model.dimension)
        if used.shape[0] == slots:  # a full chunk: no copy here, the caller copies once
            yield seqs.astype(np.int64, copy=False), rows
        else:
            yield seqs[used].astype(np.int64), rows[used]


def read_rows(conn: apsw.Connection, model: VecTable, batch: int = 256) -> Iterator[Batch]:
    """Every (memory seqs, vectors) of a model through the vec0 table itself (slow, safe)."""
    seqs: list[int] = []
    rows: list[FloatArray] = []
    for seq, blob in conn.execute(f"SELECT rowid, embedding FROM {model.table}"):
        seqs.append(int(str(seq)))
        rows.append(from_blob(blob))
        if len(seqs) == batch:
            yield np.asarray(seqs, dtype=np.int64), np.vstack(rows)
            seqs, rows = [], []
    if seqs:
        yield np.asarray(seqs, dtype=np.int64), np.vstack(rows)


def create_float_rows(conn: apsw.Connection, table: str) -> None:
    """A model's float rows, one table row per vector keyed by memory seq (migration 7).

    vec0 keeps 1,024 vectors in one 6 MB blob, and SQLite reaches a place inside a blob by
    walking its chain of overflow pages: reading a few hundred scattered vectors back out of
    it walks most of the file (1-2 s at 100k x 1,536). Here one vector is one row, found
    through the table's b-tree in a few page reads, so the in-memory copy can keep only int8
    codes and read the few rows it re-scores exactly (vector_index.py). A memory deleted for
    good takes its rows with it (the foreign key)."""
    conn.execute(
        f'CREATE TABLE IF NOT EXISTS "{table}" ('
        "seq INTEGER PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE, "
        "vector BLOB NOT NULL)"
    )


def read_float_rows(
    conn: apsw.Connection, model: VecTable, seqs: npt.NDArray[np.int64] | list[int]
) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """The vectors of some memories as one matrix, row i for seqs[i], read from the model's
    float rows by seq, and which were found (a row no longer stored is left zero). For the
    few rows an int8 pass leaves for exact re-scoring, and the few a refresh reads again.

    One blob handle moved from row to row, in seq order, each vector read straight into its
    row of the matrix: half the time of a SELECT handing back each vector as bytes."""
    wanted = [int(seq) for seq in seqs]
    rows = np.zeros((len(wanted), model.dimension), dtype=np.float32)
    found = np.zeros(len(wanted), dtype=np.bool_)
    width = model.dimension * 4
    blob: apsw.Blob | None = None
    try:
        for place in sorted(range(len(wanted)), key=wanted.__getitem__):
            try:
                if blob is None:
                    blob = conn.blob_open("main", model.rows_table, "vector", wanted[place], False)
                else:
                    blob.reopen(wanted[place])
            except apsw.SQLError:  # no such row: a failed reopen closes the handle too
                if blob is not None:
                    blob.close()
                blob = None
                continue
            if blob.length() != width:
                raise ShadowLayoutError(f"a vector of {model.rows_table} has {blob.length()} bytes")
            blob.read_into(rows[place])
            found[place] = True
    finally:
        if blob is not None:
            blob.close()
    return rows, found
