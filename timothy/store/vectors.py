"""Embeddings in sqlite-vec `vec0` tables: one table per embedding model, keyed by memory."""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, TypeAlias

import apsw

from timothy.errors import InvalidInputError, NotFoundError, StoreError
from timothy.lazy import lazy_module
from timothy.store.db import Database, scalar
from timothy.store.records import format_time, parse_time, utc_now
from timothy.store.vec_storage import (
    ShadowLayoutError,
    create_float_rows,
    from_blob,
    read_chunks,
    read_rows,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    np = lazy_module("numpy")

log = logging.getLogger(__name__)

ACTIVE_MODEL_KEY = "embedding.active_model"
_MODEL_NAME_RE = re.compile(r"^[\w.:/@+-]{1,200}$")

Vector: TypeAlias = "Sequence[float] | npt.NDArray[np.floating]"


@dataclass(frozen=True, slots=True)
class EmbeddingModel:
    id: int
    name: str
    dimension: int
    created_at: datetime

    @property
    def table(self) -> str:
        return f"vec_model_{self.id}"

    @property
    def rows_table(self) -> str:
        """The same vectors one table row each, by memory seq (see vec_storage)."""
        return f"vector_rows_{self.id}"


def to_blob(vector: Vector, dimension: int) -> bytes:
    array = np.asarray(vector, dtype=np.float32)
    if array.ndim != 1 or array.shape[0] != dimension:
        raise InvalidInputError(
            f"This embedding has {array.size} numbers; the model's vectors have {dimension}."
        )
    if not np.all(np.isfinite(array)):
        raise InvalidInputError("An embedding may only hold finite numbers.")
    return array.tobytes()


class VectorStore:
    """Per-model vector tables; a memory with no vector is simply absent from the vector leg."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # -- models ------------------------------------------------------------------------

    def models(self) -> list[EmbeddingModel]:
        with self.db.read() as conn:
            return [
                EmbeddingModel(int(i), str(n), int(d), parse_time(str(c)))
                for i, n, d, c in conn.execute(
                    "SELECT id, name, dimension, created_at FROM embedding_models ORDER BY id"
                )
            ]

    def model(self, name: str) -> EmbeddingModel | None:
        for model in self.models():
            if model.name == name:
                return model
        return None

    def require_model(self, name: str) -> EmbeddingModel:
        model = self.model(name)
        if model is None:
            raise NotFoundError(f"No vectors are stored for the embedding model {name!r}.")
        return model

    def ensure_model(self, name: str, dimension: int) -> EmbeddingModel:
        """The model's record and vector table, created on first use."""
        if not _MODEL_NAME_RE.match(name):
            raise InvalidInputError(f"{name!r} is not a usable embedding model name.")
        if not 0 < dimension <= 16_384:
            raise InvalidInputError(f"An embedding dimension of {dimension} is not supported.")
        existing = self.model(name)
        if existing is not None:
            if existing.dimension != dimension:
                raise StoreError(
                    f"The embedding model {name!r} is recorded with {existing.dimension} "
                    f"dimensions, not {dimension}."
                )
            return existing
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO embedding_models (name, dimension, created_at) VALUES (?, ?, ?) "
                "ON CONFLICT (name) DO NOTHING",
                (name, dimension, format_time(utc_now())),
            )
            model_id = int(scalar(conn, "SELECT id FROM embedding_models WHERE name = ?", (name,)))
            conn.execute(
                f"CREATE VIRTUAL TABLE IF NOT EXISTS vec_model_{model_id} USING vec0 ("
                f"embedding float[{dimension}] distance_metric=cosine)"
            )
            create_float_rows(conn, f"vector_rows_{model_id}")
        model = self.model(name)
        assert model is not None
        return model

    def active_model(self) -> EmbeddingModel | None:
        """The model the vector leg searches (switched only once a backfill completes)."""
        # One statement: the vector leg asks on every turn.
        with self.db.read() as conn:
            rows = conn.execute(
                "SELECT id, name, dimension, created_at FROM embedding_models "
                "WHERE name = (SELECT value FROM meta WHERE key = ?) ORDER BY id LIMIT 1",
                (ACTIVE_MODEL_KEY,),
            ).fetchall()
        if not rows:
            return None
        model_id, name, dimension, created = rows[0]
        return EmbeddingModel(
            int(str(model_id)), str(name), int(str(dimension)), parse_time(str(created))
        )

    def set_active_model(self, name: str | None) -> None:
        if name is not None:
            self.require_model(name)
        self.db.set_meta(ACTIVE_MODEL_KEY, name)

    # -- vectors -----------------------------------------------------------------------

    def put_many(
        self,
        model: EmbeddingModel,
        items: Iterable[tuple[str, Vector]],
        conn: apsw.Connection | None = None,
    ) -> int:
        """Store (or replace) vectors of memories; returns how many were written."""
        rows = [(memory_id, to_blob(vector, model.dimension)) for memory_id, vector in items]
        if not rows:
            return 0
        if conn is None:
            with self.db.write() as write_conn:
                return self._put_rows(write_conn, model, rows)
        return self._put_rows(conn, model, rows)

    def _put_rows(
        self, conn: apsw.Connection, model: EmbeddingModel, rows: list[tuple[str, bytes]]
    ) -> int:
        seqs = {
            str(memory_id): int(seq)
            for memory_id, seq in conn.execute(
                "SELECT id, seq FROM memories WHERE id IN (SELECT value FROM json_each(?))",
                (json.dumps([memory_id for memory_id, _ in rows]),),
            )
        }
        missing = [memory_id for memory_id, _ in rows if memory_id not in seqs]
        if missing:
            raise NotFoundError(f"No memory has the id {missing[0]!r}.")
        # vec0 has no upsert: delete, then insert.
        conn.executemany(
            f"DELETE FROM {model.table} WHERE rowid = ?", [(seqs[m],) for m, _ in rows]
        )
        conn.executemany(
            f"INSERT INTO {model.table} (rowid, embedding) VALUES (?, ?)",
            [(seqs[m], blob) for m, blob in rows],
        )
        conn.executemany(
            f'INSERT INTO "{model.rows_table}" (seq, vector) VALUES (?, ?) '
            "ON CONFLICT (seq) DO UPDATE SET vector = excluded.vector",
            [(seqs[m], blob) for m, blob in rows],
        )
        # vec0 tables take no triggers: note the change here, in the same transaction.
        change = int(
            scalar(
                conn,
                "SELECT coalesce(max(change), 0) + 1 FROM vector_changes WHERE model_id = ?",
                (model.id,),
            )
        )
        conn.executemany(
            "INSERT INTO vector_changes (model_id, memory_seq, change) VALUES (?, ?, ?) "
            "ON CONFLICT (model_id, memory_seq) DO UPDATE SET change = excluded.change",
            [(model.id, seqs[m], change) for m, _ in rows],
        )
        return len(rows)

    def put(self, memory_id: str, model: EmbeddingModel, vector: Vector) -> None:
        self.put_many(model, [(memory_id, vector)])

    def get(self, memory_id: str, model: EmbeddingModel) -> npt.NDArray[np.float32] | None:
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT v.embedding FROM {model.table} v JOIN memories m ON m.seq = v.rowid "
                "WHERE m.id = ?",
                (memory_id,),
            ).fetchall()
        return from_blob(rows[0][0]) if rows else None

    def vectors_of(
        self, memory_ids: Sequence[str]
    ) -> dict[str, tuple[str, npt.NDArray[np.float32]]]:
        """For each memory that has one: (model name, vector), preferring the active model."""
        models = self.models()
        active = self.active_model()
        if active is not None:
            models.sort(key=lambda m: m.id != active.id)
        found: dict[str, tuple[str, npt.NDArray[np.float32]]] = {}
        with self.db.read() as conn:
            for model in models:
                wanted = [m for m in memory_ids if m not in found]
                if not wanted:
                    break
                for memory_id, blob in conn.execute(
                    f"SELECT m.id, v.embedding FROM {model.table} v "
                    "JOIN memories m ON m.seq = v.rowid "
                    "WHERE m.id IN (SELECT value FROM json_each(?))",
                    (json.dumps(wanted),),
                ):
                    found[str(memory_id)] = (model.name, from_blob(blob))
        return found

    def count(self, model: EmbeddingModel) -> int:
        with self.db.read() as conn:
            return int(scalar(conn, f"SELECT count(*) FROM {model.table}"))

    def missing(self, model: EmbeddingModel, statuses: Sequence[str] = ("active",)) -> list[str]:
        """Ids of memories in the given statuses with no vector for this model, oldest first."""
        with self.db.read() as conn:
            return [
                str(row[0])
                for row in conn.execute(
                    # NOT IN over the rowid list: a vec0 lookup per memory costs ~0.5 ms.
                    f"SELECT m.id FROM memories m WHERE m.status IN "
                    f"(SELECT value FROM json_each(?)) "
                    f"AND m.seq NOT IN (SELECT rowid FROM {model.table}) "
                    "ORDER BY m.seq",
                    (json.dumps(list(statuses)),),
                )
            ]

    def nearest(
        self, model: EmbeddingModel, query: Vector, k: int, *, status: str = "active"
    ) -> list[tuple[str, float]]:
        """Exact cosine k-NN among memories of one status: (memory id, cosine distance)."""
        blob = to_blob(query, model.dimension)
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT m.id, vec_distance_cosine(v.embedding, ?) AS d "
                f"FROM {model.table} v JOIN memories m ON m.seq = v.rowid "
                "WHERE m.status = ? ORDER BY d, m.seq LIMIT ?",
                (blob, status, int(k)),
            ).fetchall()
        return [(str(i), float(d) if d is not None else math.inf) for i, d in rows]

    def matrix(
        self, model: EmbeddingModel, *, status: str = "active", read_shadow_tables: bool = True
    ) -> tuple[list[str], npt.NDArray[np.float32]]:
        """All vectors of one status as (ids, n x dimension matrix), in memory order.

        Read from one snapshot, straight from vec0's storage a chunk at a time, into one
        matrix allocated once (no full-size temporary). Through the vec0 table (about 0.5 ms
        a row) only when that storage is not laid out as expected, or when asked to.
        """
        with self.db.read() as conn, conn:  # `with conn`: one read snapshot (a savepoint)
            present = conn.execute(
                "SELECT m.seq, m.id FROM memories m WHERE m.status = ? "
                f"AND m.seq IN (SELECT rowid FROM {model.table}) ORDER BY m.seq",
                (status,),
            ).fetchall()
            seqs = np.array([int(str(seq)) for seq, _ in present], dtype=np.int64)
            ids = [str(memory_id) for _, memory_id in present]
            matrix = np.empty((len(ids), model.dimension), dtype=np.float32)
            filled = np.zeros(len(ids), dtype=bool)

            def fill(
                batches: Iterable[tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]],
            ) -> None:
                for batch_seqs, rows in batches:
                    places = np.searchsorted(seqs, batch_seqs).clip(max=len(seqs) - 1)
                    wanted = seqs[places] == batch_seqs
                    matrix[places[wanted]] = rows[wanted]
                    filled[places[wanted]] = True

            if ids and not read_shadow_tables:
                fill(read_rows(conn, model))
            elif ids:
                try:
                    fill(read_chunks(conn, model))
                except ShadowLayoutError as exc:
                    log.warning("reading %s through vec0 (slow): %s", model.table, exc)
                    filled[:] = False
                    fill(read_rows(conn, model))
        if not filled.all():  # cannot happen within one snapshot; be sure
            raise StoreError(f"Some vectors of {model.name!r} could not be read.")
        return ids, matrix
