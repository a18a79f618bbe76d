"""Each model's vectors one table row each (migration 7): written with every vector, filled
from an older file's vec0 tables, gone with a memory forgotten for good, and what a lean
in-memory copy re-scores from."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from timothy.memory.forget import forget
from timothy.store import Store
from timothy.store.db import Database
from timothy.store.migrations import MIGRATIONS, SCHEMA_VERSION
from timothy.store.vector_index import VectorIndex
from timothy.store.vectors import EmbeddingModel

DIM = 64


def float_rows(store: Store, model: EmbeddingModel) -> dict[str, bytes]:
    """memory id -> its float row's bytes, as stored."""
    with store.db.read() as conn:
        return {
            str(memory_id): bytes(blob)
            for memory_id, blob in conn.execute(
                f'SELECT m.id, r.vector FROM "{model.rows_table}" r '
                "JOIN memories m ON m.seq = r.seq"
            )
        }


def test_every_vector_written_is_a_float_row_too(store: Store) -> None:
    rng = np.random.default_rng(1)
    model = store.vectors.ensure_model("test/rows", DIM)
    with store.db.write():
        ids = [store.memories.add(f"fact {i}").id for i in range(50)]
    first = rng.standard_normal((50, DIM)).astype(np.float32)
    store.vectors.put_many(model, zip(ids, first, strict=True))
    again = rng.standard_normal((10, DIM)).astype(np.float32)
    store.vectors.put_many(model, zip(ids[:10], again, strict=True))  # replaced, not added
    rows = float_rows(store, model)
    assert len(rows) == 50
    for place, memory_id in enumerate(ids):
        expected = again[place] if place < 10 else first[place]
        assert rows[memory_id] == expected.tobytes()
        stored = store.vectors.get(memory_id, model)  # through vec0: the same vector
        assert stored is not None and stored.tobytes() == rows[memory_id]


def test_forgetting_a_memory_for_good_removes_its_float_row(store: Store) -> None:
    model = store.vectors.ensure_model("test/rows", DIM)
    kept, gone = store.memories.add("kept"), store.memories.add("forgotten")
    vectors = np.random.default_rng(2).standard_normal((2, DIM)).astype(np.float32)
    store.vectors.put_many(model, [(kept.id, vectors[0]), (gone.id, vectors[1])])
    forget(store, [gone.id])
    assert list(float_rows(store, model)) == [kept.id]
    raw = store.db.path.read_bytes()
    assert vectors[1].tobytes() not in raw and vectors[0].tobytes() in raw


def test_an_older_file_gets_float_rows_of_its_vectors(data_dir: Path) -> None:
    """Real schema-6 rows: two models (one with more vectors than a vec0 chunk holds, one
    with none), replaced vectors, a vector whose memory is gone; migration 7 copies each
    stored vector, and the lean copy searches them exactly."""
    path = data_dir / "timothy.db"
    rng = np.random.default_rng(3)
    old = Database(path, migrations=MIGRATIONS[:6])
    count = 1_500
    vectors = rng.standard_normal((count, DIM)).astype(np.float32)
    replaced = rng.standard_normal((100, DIM)).astype(np.float32)
    with old.write() as conn:
        for seq in range(1, count + 1):
            conn.execute(
                "INSERT INTO memories (seq, id, type, content, status, confidence, source, "
                "created_at) VALUES (?, ?, 'semantic', ?, 'active', 1.0, 'manual', "
                "'2025-01-01T00:00:00Z')",
                (seq, f"m{seq}", f"fact {seq}"),
            )
        for model_id, name, dimension in ((1, "old/64", DIM), (2, "old/empty", 8)):
            conn.execute(
                "INSERT INTO embedding_models (id, name, dimension, created_at) "
                "VALUES (?, ?, ?, '2025-01-01T00:00:00Z')",
                (model_id, name, dimension),
            )
            conn.execute(
                f"CREATE VIRTUAL TABLE vec_model_{model_id} USING vec0 ("
                f"embedding float[{dimension}] distance_metric=cosine)"
            )
        conn.executemany(
            "INSERT INTO vec_model_1 (rowid, embedding) VALUES (?, ?)",
            [(seq, vectors[seq - 1].tobytes()) for seq in range(1, count + 1)],
        )
        # Replaced as the store replaces them: deleted, then inserted (a new chunk slot).
        conn.executemany(
            "DELETE FROM vec_model_1 WHERE rowid = ?", [(seq,) for seq in range(1, 101)]
        )
        conn.executemany(
            "INSERT INTO vec_model_1 (rowid, embedding) VALUES (?, ?)",
            [(seq, replaced[seq - 1].tobytes()) for seq in range(1, 101)],
        )
        # A memory removed by hand after its vector was written: no row to copy for it.
        conn.execute("DELETE FROM memories WHERE seq = ?", (count,))
    old.close()
    vectors[:100] = replaced

    with Store.open(data_dir) as store:
        with store.db.read() as conn:
            assert conn.execute("PRAGMA user_version").fetchall()[0][0] == SCHEMA_VERSION
        model = store.vectors.require_model("old/64")
        rows = float_rows(store, model)
        assert len(rows) == count - 1
        for seq in range(1, count):
            assert rows[f"m{seq}"] == vectors[seq - 1].tobytes()
        assert float_rows(store, store.vectors.require_model("old/empty")) == {}

        index = VectorIndex(model, quantized_from=0, lean_from_bytes=0)
        units = vectors[: count - 1] / np.linalg.norm(vectors[: count - 1], axis=1, keepdims=True)
        for query in [*rng.standard_normal((3, DIM)).astype(np.float32), vectors[5]]:
            with store.db.read() as conn:
                found = index.nearest(conn, query, 30)
            scores = units.astype(np.float64) @ (query / np.linalg.norm(query))
            best = np.argsort(-scores, kind="stable")[:30]
            assert [memory_id for memory_id, _ in found] == [f"m{i + 1}" for i in best]
            assert np.allclose([s for _, s in found], scores[best], atol=1e-5)
        assert index.lean
