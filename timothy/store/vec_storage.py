"""sqlite-vec's storage, read directly: a vec0 table's vectors from its shadow tables.

Going through a vec0 table costs about 1 ms per row (it reads a whole chunk for each); its
shadow tables hold each chunk's vectors as one blob, its rowids and a validity bitmap. These
readers check that layout (sqlite-vec 0.1.x) on every read and raise ShadowLayoutError on
anything unexpected; the `*_rows` readers are the slow, layout-free way the callers fall
back to. Both the store's writer (`vectors`) and the in-memory index read through here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Protocol

import apsw
import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]
Batch = tuple[npt.NDArray[np.int64], FloatArray]


class VecTable(Protocol):
    """One embedding model's vec0 table: its name and the length of its vectors."""

    @property
    def table(self) -> str: ...

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


def read_some(conn: apsw.Connection, model: VecTable, seqs: list[int]) -> dict[int, FloatArray]:
    """The vectors of some memories, each read straight from its chunk's blob."""
    _check_layout(conn, model)
    width = model.dimension * 4
    found: dict[int, FloatArray] = {}
    places = conn.execute(
        f'SELECT rowid, chunk_id, chunk_offset FROM "{model.table}_rowids" '
        "WHERE rowid IN (SELECT value FROM json_each(?))",
        (json.dumps(seqs),),
    ).fetchall()
    for seq, chunk_id, offset in places:
        blob = conn.blob_open(
            "main", f"{model.table}_vector_chunks00", "vectors", int(str(chunk_id)), False
        )
        try:
            blob.seek(int(str(offset)) * width)
            data = blob.read(width)
        finally:
            blob.close()
        if len(data) != width:
            raise ShadowLayoutError(f"a vector of {model.table} is cut short")
        found[int(str(seq))] = np.frombuffer(data, dtype="<f4").astype(np.float32)
    return found


def read_rows_at(
    conn: apsw.Connection, model: VecTable, seqs: npt.NDArray[np.int64]
) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """The vectors of some memories as one matrix, row i for seqs[i], read straight from
    the chunk blobs (one blob handle moved from chunk to chunk), and which rows were found
    (a row no longer stored is left zero). For exact re-scoring of the few rows an int8
    pass leaves in the running: a few hundred rows cost well under a millisecond."""
    _check_layout(conn, model)
    width = model.dimension * 4
    rows = np.zeros((seqs.shape[0], model.dimension), dtype=np.float32)
    found = np.zeros(seqs.shape[0], dtype=np.bool_)
    if not seqs.shape[0]:
        return rows, found
    where = {seq: place for place, seq in enumerate(seqs.tolist())}
    places = conn.execute(
        f'SELECT rowid, chunk_id, chunk_offset FROM "{model.table}_rowids" '
        "WHERE rowid IN (SELECT value FROM json_each(?)) ORDER BY chunk_id, chunk_offset",
        (json.dumps(list(where)),),
    ).fetchall()
    blob: apsw.Blob | None = None
    current = -1
    try:
        for seq, chunk_id, offset in places:
            chunk = int(str(chunk_id))
            if blob is None:
                blob = conn.blob_open(
                    "main", f"{model.table}_vector_chunks00", "vectors", chunk, False
                )
            elif chunk != current:
                blob.reopen(chunk)
            current = chunk
            blob.seek(int(str(offset)) * width)
            data = blob.read(width)
            if len(data) != width:
                raise ShadowLayoutError(f"a vector of {model.table} is cut short")
            place = where[int(str(seq))]
            rows[place] = np.frombuffer(data, dtype="<f4")
            found[place] = True
    finally:
        if blob is not None:
            blob.close()
    return rows, found


def read_some_rows(
    conn: apsw.Connection, model: VecTable, seqs: list[int]
) -> dict[int, FloatArray]:
    found: dict[int, FloatArray] = {}
    for seq in seqs:
        rows = conn.execute(
            f"SELECT embedding FROM {model.table} WHERE rowid = ?", (seq,)
        ).fetchall()
        if rows:
            found[seq] = from_blob(rows[0][0])
    return found
