"""On a server store, the vector leg's in-process copy answers exactly what pgvector's exact
scan answers, and follows every machine's writes."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import psycopg
import psycopg.errors
import pytest

from timothy.store.postgres import PostgresStore
from timothy.store.postgres.database import PgDatabase
from timothy.store.postgres.migrations import MIGRATIONS
from timothy.store.postgres.vector_copy import PgVectorCopy
from timothy.store.vectors import EmbeddingModel

DIM = 48


def random_unit(rng: np.random.Generator, n: int) -> np.ndarray:
    rows = rng.standard_normal((n, DIM)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.fixture
def server(pg_url: str) -> Iterator[PostgresStore]:
    with PostgresStore(pg_url, follow_changes=False) as store:
        yield store


def populate(
    store: PostgresStore, rng: np.random.Generator, n: int
) -> tuple[EmbeddingModel, list[str]]:
    model = store.vectors.ensure_model("test/random-48", DIM)
    store.vectors.set_active_model(model.name)
    with store.db.write():
        ids = [store.memories.add(f"memory {i}").id for i in range(n)]
    store.vectors.put_many(model, zip(ids, random_unit(rng, n), strict=True))
    return model, ids


def brute_force(store: PostgresStore, model: EmbeddingModel, query: np.ndarray, k: int) -> list:
    """(id, cosine similarity) of the k most similar active memories, by numpy over every
    vector read back from the server."""
    ids, rows = store.vectors.matrix(model)
    unit = query / np.linalg.norm(query)
    norms = np.linalg.norm(rows, axis=1)
    scores = (rows @ unit) / np.where(norms > 0, norms, 1.0)
    order = np.argsort(-scores, kind="stable")[:k]
    return [(ids[i], float(scores[i])) for i in order]


def assert_exact(
    store: PostgresStore,
    model: EmbeddingModel,
    query: np.ndarray,
    k: int = 30,
    copy: PgVectorCopy | None = None,
) -> None:
    if copy is None:
        ours = store.search.vector_hits(model, query, k)
    else:
        with store.db.read() as conn:
            ours = copy.nearest(conn, query, k)
    server = store.vectors.nearest(model, query, k)  # pgvector's exact scan
    numpy = brute_force(store, model, query, k)
    assert len(ours) == len(server) == len(numpy)
    distance = dict(server)
    for (mine, similarity), (theirs, d), (brute, score) in zip(ours, server, numpy, strict=True):
        assert abs(similarity - score) < 1e-5
        if mine != theirs:  # only a floating-point tie may swap two places
            assert abs(distance.get(mine, 2.0) - d) < 1e-6, (mine, theirs)
        if mine != brute:
            assert abs(similarity - score) < 1e-6, (mine, brute)


def retire_some(store: PostgresStore, ids: list[str]) -> None:
    """Some memories leave the active set: the leg must skip them, as pgvector's scan does."""
    for memory_id in ids[::7]:
        store.memories.archive(memory_id)
    for memory_id in ids[3::14]:
        store.memories.reject(memory_id)


def test_top_30_equals_pgvector_exact_cosine(server: PostgresStore) -> None:
    rng = np.random.default_rng(7)
    model, ids = populate(server, rng, 1500)
    retire_some(server, ids)
    for query in random_unit(rng, 20):
        assert_exact(server, model, query)
    copy = server.search.copy(model)
    assert copy.size == 1500 and not copy.coded


@pytest.mark.parametrize("lean", [False, True], ids=["float rows", "float rows from server"])
def test_the_int8_first_pass_leaves_the_answer_exact(server: PostgresStore, lean: bool) -> None:
    rng = np.random.default_rng(8)
    model, ids = populate(server, rng, 1200)
    retire_some(server, ids)
    copy = PgVectorCopy(model, quantized_from=500, float_rows_from_server=lean, lean_from=500)
    for query in random_unit(rng, 20):
        assert_exact(server, model, query, copy=copy)
    # A query near a stored vector, and near one of a retired memory.
    for memory_id in (ids[1], ids[7]):
        vector = server.vectors.get(memory_id, model)
        assert vector is not None
        assert_exact(server, model, vector, copy=copy)
    assert copy.coded and copy.lean == lean
    # It keeps up once coded: new rows are coded as they arrive.
    fresh = [server.memories.add(f"later {i}").id for i in range(40)]
    queries = random_unit(rng, 40)
    server.vectors.put_many(model, zip(fresh, queries, strict=True))
    with server.db.read() as conn:
        assert copy.nearest(conn, queries[3] * 2.0, 1)[0][0] == fresh[3]
    assert copy.size == 1240


def test_the_copy_follows_new_replaced_and_forgotten_vectors(server: PostgresStore) -> None:
    rng = np.random.default_rng(2)
    model, ids = populate(server, rng, 300)
    queries = random_unit(rng, 10)
    for query in queries:
        assert_exact(server, model, query)
    new_ids = [server.memories.add(f"new {i}").id for i in range(50)]
    staged = server.memories.stage("staged then promoted")
    server.vectors.put_many(model, zip([*new_ids, staged.id], random_unit(rng, 51), strict=True))
    server.vectors.put(ids[5], model, queries[0])
    for query in queries:
        assert_exact(server, model, query)
    assert server.search.vector(model, queries[0], 1) == [ids[5]]
    staged_vector = server.vectors.get(staged.id, model)
    assert staged.id not in server.search.vector(model, staged_vector, 5)
    server.memories.promote(staged.id)
    assert server.search.vector(model, staged_vector, 1) == [staged.id]
    # Forgotten for good: the memory's row goes, its vector with it, and matches nothing.
    forgotten = server.vectors.get(ids[6], model)
    with server.db.write() as conn:
        conn.execute("DELETE FROM memories WHERE id = %s", (ids[6],))
    assert ids[6] not in server.search.vector(model, forgotten, 30)
    assert_exact(server, model, forgotten)
    assert server.search.copy(model).size == 351


def test_writes_from_another_machine_reach_the_copy(pg_url: str) -> None:
    rng = np.random.default_rng(3)
    with (
        PostgresStore(pg_url, follow_changes=False) as laptop,
        PostgresStore(pg_url, follow_changes=False) as desktop,
    ):
        model, ids = populate(laptop, rng, 200)
        query = random_unit(rng, 1)[0]
        assert_exact(laptop, model, query)
        made = desktop.memories.add("written on the desktop")
        desktop_model = desktop.vectors.require_model(model.name)
        desktop.vectors.put(made.id, desktop_model, query)
        desktop.vectors.put(ids[0], desktop_model, -query)
        assert laptop.search.vector(model, query, 1) == [made.id]
        assert ids[0] not in laptop.search.vector(model, query, 100)
        desktop.memories.archive(made.id)
        assert made.id not in laptop.search.vector(model, query, 30)
        assert_exact(laptop, model, query)


def test_vector_writers_take_their_change_numbers_in_commit_order(
    server: PostgresStore, pg_url: str
) -> None:
    """A second writer waits for the first's commit before it numbers its change, so a copy
    that has seen a change has seen every lower one (no change committed behind it)."""
    rng = np.random.default_rng(4)
    model, ids = populate(server, rng, 3)
    vectors = random_unit(rng, 2)
    url = pg_url
    with psycopg.connect(url) as first, psycopg.connect(url, autocommit=True) as second:
        first.execute(
            f"UPDATE {model.table} SET embedding = %s::vector "
            "WHERE memory_seq = (SELECT seq FROM memories WHERE id = %s)",
            (str(vectors[0].tolist()), ids[0]),
        )  # uncommitted: it holds the change lock
        second.execute("SET lock_timeout = '200ms'")
        with pytest.raises(psycopg.errors.LockNotAvailable):
            second.execute(
                f"UPDATE {model.table} SET embedding = %s::vector "
                "WHERE memory_seq = (SELECT seq FROM memories WHERE id = %s)",
                (str(vectors[1].tolist()), ids[1]),
            )
        first.commit()
        second.execute(
            f"UPDATE {model.table} SET embedding = %s::vector "
            "WHERE memory_seq = (SELECT seq FROM memories WHERE id = %s)",
            (str(vectors[1].tolist()), ids[1]),
        )
    with server.db.read() as conn:
        changes = dict(
            conn.execute(
                "SELECT m.id, c.change FROM vector_changes c JOIN memories m "
                "ON m.seq = c.memory_seq WHERE c.model_id = %s",
                (model.id,),
            ).fetchall()
        )
    assert changes[ids[1]] > changes[ids[0]] > changes[ids[2]]


def test_vectors_stored_before_the_change_counter_are_counted_once(pg_url: str) -> None:
    rng = np.random.default_rng(5)
    vectors = random_unit(rng, 3)
    old = PgDatabase(pg_url, migrations=MIGRATIONS[:3])
    with old.write() as conn:
        conn.execute(
            "INSERT INTO embedding_models (name, dimension, created_at) "
            "VALUES ('old/48', %s, now())",
            (DIM,),
        )
        conn.execute(
            "CREATE TABLE vec_model_1 (memory_seq bigint PRIMARY KEY REFERENCES memories (seq) "
            f"ON DELETE CASCADE, embedding vector({DIM}) NOT NULL)"
        )
        for place, vector in enumerate(vectors):
            conn.execute(
                "INSERT INTO memories (id, type, content, day, status, confidence, source, "
                "created_at) VALUES (%s, 'semantic', %s, '1 May 2026', 'active', 1, 'manual', "
                "now())",
                (f"old-{place}", f"old memory {place}"),
            )
            conn.execute(
                "INSERT INTO vec_model_1 SELECT seq, %s::vector FROM memories WHERE id = %s",
                (str(vector.tolist()), f"old-{place}"),
            )
    old.close()
    with PostgresStore(pg_url, follow_changes=False) as store:
        model = store.vectors.require_model("old/48")
        assert store.search.vector(model, vectors[2], 1) == ["old-2"]
        with store.db.read() as conn:
            noted = conn.execute("SELECT count(*) FROM vector_changes").fetchone()
        assert noted == (3,)
        made = store.memories.add("new since")
        store.vectors.put(made.id, model, vectors[2])
        assert store.search.vector(model, vectors[2], 2) == ["old-2", made.id]


def test_a_search_inside_a_write_that_is_undone_leaves_the_copy_as_it_was(
    server: PostgresStore,
) -> None:
    rng = np.random.default_rng(11)
    model, ids = populate(server, rng, 40)
    query = random_unit(rng, 1)[0]
    assert_exact(server, model, query)  # the copy is loaded
    far = ids[-1]
    before = dict(server.search.vector_hits(model, query, 40))[far]
    with pytest.raises(RuntimeError), server.db.write():
        server.vectors.put(far, model, query)  # re-embedded as the best possible match
        inside = server.search.vector_hits(model, query, 5)
        raise RuntimeError("undo the write")
    assert inside[0][0] == far  # the write sees its own row
    after = dict(server.search.vector_hits(model, query, 40))[far]
    assert after == pytest.approx(before, abs=1e-6)  # not the undone vector's 1.0
    assert_exact(server, model, query)
