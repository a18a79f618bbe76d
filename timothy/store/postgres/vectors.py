"""Embeddings on pgvector: one table per embedding model (`vec_model_<id>`, the model's own
dimension), keyed by memory; exact cosine search by default."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from datetime import UTC
from typing import TYPE_CHECKING

from timothy.errors import InvalidInputError, NotFoundError, StoreError
from timothy.lazy import lazy_module
from timothy.store.postgres.database import PgDatabase
from timothy.store.postgres.migrations import vector_trigger_sql
from timothy.store.postgres.rows import Conn
from timothy.store.records import utc_now
from timothy.store.vectors import ACTIVE_MODEL_KEY, EmbeddingModel, Vector, to_blob

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    np = lazy_module("numpy")

_MODEL_NAME_RE = re.compile(r"^[\w.:/@+-]{1,200}$")
# pgvector stores up to 16,000 dimensions.
MAX_DIMENSION = 16_000
# Up to this many dimensions a vector (4 bytes each) fits in its row's page, and is kept
# there (STORAGE PLAIN) rather than out of line: the exact scan reads 2-3 times faster
# (bench/recall.py --store: 10k x 1536-d, 472 -> 180 ms p50 on a loaded 2-core machine).
IN_ROW_DIMENSIONS = 1_800


def as_array(vector: Vector, dimension: int) -> npt.NDArray[np.float32]:
    """The vector as float32, checked like the SQLite store checks it."""
    to_blob(vector, dimension)  # raises InvalidInputError on a wrong size or a non-finite value
    return np.asarray(vector, dtype=np.float32)


def from_server(value: object) -> npt.NDArray[np.float32]:
    """A vector as the pgvector adapter reads it (its Vector, or an array) as float32."""
    to_numpy = getattr(value, "to_numpy", None)
    return np.asarray(to_numpy() if callable(to_numpy) else value, dtype=np.float32)


def _model(row: Sequence[object]) -> EmbeddingModel:
    created = row[3]
    assert hasattr(created, "astimezone")
    return EmbeddingModel(int(str(row[0])), str(row[1]), int(str(row[2])), created.astimezone(UTC))


class PgVectorStore:
    """Per-model vector tables; a memory with no vector is simply absent from the vector leg."""

    def __init__(self, db: PgDatabase) -> None:
        self.db = db

    # -- models ------------------------------------------------------------------------

    def models(self) -> list[EmbeddingModel]:
        with self.db.read() as conn:
            return [
                _model(row)
                for row in conn.execute(
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
        if not _MODEL_NAME_RE.match(name):
            raise InvalidInputError(f"{name!r} is not a usable embedding model name.")
        if not 0 < dimension <= MAX_DIMENSION:
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
                "INSERT INTO embedding_models (name, dimension, created_at) "
                "VALUES (%s, %s, %s) ON CONFLICT (name) DO NOTHING",
                (name, dimension, utc_now()),
            )
            row = conn.execute(
                "SELECT id, dimension FROM embedding_models WHERE name = %s", (name,)
            ).fetchone()
            assert row is not None
            model_id, stored = int(row[0]), int(row[1])
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS vec_model_{model_id} ("
                "memory_seq bigint PRIMARY KEY REFERENCES memories (seq) ON DELETE CASCADE, "
                f"embedding vector({stored}) NOT NULL)"
            )
            exists = conn.execute(
                "SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass(%s) AND tgname = %s",
                (f"vec_model_{model_id}", f"vec_model_{model_id}_changed"),
            ).fetchone()
            if exists is None:
                conn.execute(vector_trigger_sql(model_id))
            if stored <= IN_ROW_DIMENSIONS:
                conn.execute(
                    f"ALTER TABLE vec_model_{model_id} ALTER COLUMN embedding SET STORAGE PLAIN"
                )
        model = self.model(name)
        assert model is not None
        return model

    def active_model(self) -> EmbeddingModel | None:
        # One statement (each recall asks): the meta key and its model.
        with self.db.read() as conn:
            row = conn.execute(
                "SELECT e.id, e.name, e.dimension, e.created_at FROM meta "
                "JOIN embedding_models e ON e.name = meta.value WHERE meta.key = %s",
                (ACTIVE_MODEL_KEY,),
            ).fetchone()
        return None if row is None else _model(row)

    def set_active_model(self, name: str | None) -> None:
        if name is not None:
            self.require_model(name)
        self.db.set_meta(ACTIVE_MODEL_KEY, name)

    # -- vectors -----------------------------------------------------------------------

    def put_many(
        self,
        model: EmbeddingModel,
        items: Iterable[tuple[str, Vector]],
        conn: Conn | None = None,
    ) -> int:
        rows = [(memory_id, as_array(vector, model.dimension)) for memory_id, vector in items]
        if not rows:
            return 0
        if conn is None:
            with self.db.write() as write_conn:
                return self._put_rows(write_conn, model, rows)
        return self._put_rows(conn, model, rows)

    def _put_rows(
        self,
        conn: Conn,
        model: EmbeddingModel,
        rows: list[tuple[str, npt.NDArray[np.float32]]],
    ) -> int:
        seqs = {
            str(memory_id): int(seq)
            for memory_id, seq in conn.execute(
                "SELECT id, seq FROM memories WHERE id = ANY(%s)",
                ([memory_id for memory_id, _ in rows],),
            )
        }
        missing = [memory_id for memory_id, _ in rows if memory_id not in seqs]
        if missing:
            raise NotFoundError(f"No memory has the id {missing[0]!r}.")
        with conn.cursor() as cur:
            cur.executemany(
                f"INSERT INTO {model.table} (memory_seq, embedding) VALUES (%s, %s) "
                "ON CONFLICT (memory_seq) DO UPDATE SET embedding = excluded.embedding",
                [(seqs[memory_id], vector) for memory_id, vector in rows],
            )
        return len(rows)

    def put(self, memory_id: str, model: EmbeddingModel, vector: Vector) -> None:
        self.put_many(model, [(memory_id, vector)])

    def get(self, memory_id: str, model: EmbeddingModel) -> npt.NDArray[np.float32] | None:
        with self.db.read() as conn:
            row = conn.execute(
                f"SELECT v.embedding FROM {model.table} v JOIN memories m ON m.seq = v.memory_seq "
                "WHERE m.id = %s",
                (memory_id,),
            ).fetchone()
        return None if row is None else from_server(row[0])

    def vectors_of(
        self, memory_ids: Sequence[str]
    ) -> dict[str, tuple[str, npt.NDArray[np.float32]]]:
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
                for memory_id, vector in conn.execute(
                    f"SELECT m.id, v.embedding FROM {model.table} v "
                    "JOIN memories m ON m.seq = v.memory_seq WHERE m.id = ANY(%s)",
                    (wanted,),
                ):
                    found[str(memory_id)] = (model.name, from_server(vector))
        return found

    def count(self, model: EmbeddingModel) -> int:
        with self.db.read() as conn:
            row = conn.execute(f"SELECT count(*) FROM {model.table}").fetchone()
        return 0 if row is None else int(row[0])

    def missing(self, model: EmbeddingModel, statuses: Sequence[str] = ("active",)) -> list[str]:
        with self.db.read() as conn:
            return [
                str(row[0])
                for row in conn.execute(
                    f"SELECT m.id FROM memories m WHERE m.status = ANY(%s) AND NOT EXISTS "
                    f"(SELECT 1 FROM {model.table} v WHERE v.memory_seq = m.seq) ORDER BY m.seq",
                    (list(statuses),),
                )
            ]

    def nearest(
        self, model: EmbeddingModel, query: Vector, k: int, *, status: str = "active"
    ) -> list[tuple[str, float]]:
        """Exact cosine k-NN among memories of one status: (memory id, cosine distance)."""
        vector = as_array(query, model.dimension)
        with self.db.read() as conn:
            rows = conn.execute(
                f"SELECT m.id, v.embedding <=> %s AS d FROM {model.table} v "
                "JOIN memories m ON m.seq = v.memory_seq WHERE m.status = %s "
                "ORDER BY d, m.seq LIMIT %s",
                (vector, status, int(k)),
            ).fetchall()
        return [
            (str(i), float(d) if d is not None and not math.isnan(d) else math.inf) for i, d in rows
        ]

    def matrix(
        self, model: EmbeddingModel, *, status: str = "active", read_shadow_tables: bool = True
    ) -> tuple[list[str], npt.NDArray[np.float32]]:
        """All vectors of one status as (ids, n x dimension matrix), in memory order, from
        one snapshot."""
        with self.db.read() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            rows = conn.execute(
                f"SELECT m.id, v.embedding FROM {model.table} v "
                "JOIN memories m ON m.seq = v.memory_seq WHERE m.status = %s ORDER BY m.seq",
                (status,),
            ).fetchall()
        ids = [str(row[0]) for row in rows]
        matrix = np.empty((len(ids), model.dimension), dtype=np.float32)
        for place, row in enumerate(rows):
            matrix[place] = from_server(row[1])
        return ids, matrix
