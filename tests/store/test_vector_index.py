"""The vector leg's in-memory copy answers exactly what sqlite-vec's exact scan answers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from timothy.store import Store
from timothy.store.vector_index import VectorIndex
from timothy.store.vectors import EmbeddingModel

DIM = 48


def random_unit(rng: np.random.Generator, n: int) -> np.ndarray:
    rows = rng.standard_normal((n, DIM)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def populate(store: Store, rng: np.random.Generator, n: int) -> tuple[EmbeddingModel, list[str]]:
    model = store.vectors.ensure_model("test/random-48", DIM)
    store.vectors.set_active_model(model.name)
    with store.db.write():  # one transaction: each add is a savepoint inside it
        ids = [store.memories.add(f"memory {i}").id for i in range(n)]
    store.vectors.put_many(model, zip(ids, random_unit(rng, n), strict=True))
    return model, ids


def assert_exact(store: Store, model: EmbeddingModel, query: np.ndarray, k: int = 30) -> None:
    ours = store.search.vector(model, query, k)
    exact = store.vectors.nearest(model, query, k)
    assert len(ours) == len(exact)
    distance = dict(exact)
    for mine, (theirs, d) in zip(ours, exact, strict=True):
        if mine != theirs:  # only a floating-point tie may swap two places
            mine_d = distance.get(mine)
            assert mine_d is not None and abs(mine_d - d) < 1e-6, (mine, theirs)


def test_top_30_equals_sqlite_vec_exact_cosine(store: Store) -> None:
    rng = np.random.default_rng(7)
    model, ids = populate(store, rng, 1500)
    # Some memories leave the active set: the leg must skip them, as sqlite-vec's does.
    for memory_id in ids[::7]:
        store.memories.archive(memory_id)
    for memory_id in ids[3::14]:
        store.memories.reject(memory_id)
    for query in random_unit(rng, 25):
        assert_exact(store, model, query)
    assert store.search.index(model).size == 1500


def test_a_query_near_a_memory_finds_it_first(store: Store) -> None:
    rng = np.random.default_rng(1)
    model, ids = populate(store, rng, 200)
    target = store.vectors.get(ids[42], model)
    assert target is not None
    assert store.search.vector(model, target * 3.0, 30)[0] == ids[42]


def test_the_copy_follows_new_and_replaced_vectors(store: Store) -> None:
    rng = np.random.default_rng(2)
    model, ids = populate(store, rng, 300)
    queries = random_unit(rng, 10)
    for query in queries:
        assert_exact(store, model, query)
    # New memories, a staged one promoted, and a replaced vector.
    new_ids = [store.memories.add(f"new {i}").id for i in range(50)]
    staged = store.memories.stage("staged then promoted")
    store.vectors.put_many(model, zip([*new_ids, staged.id], random_unit(rng, 51), strict=True))
    store.vectors.put(ids[5], model, queries[0])
    for query in queries:
        assert_exact(store, model, query)
    assert store.search.vector(model, queries[0], 1) == [ids[5]]
    assert staged.id not in store.search.vector(model, store.vectors.get(staged.id, model), 5)
    store.memories.promote(staged.id)
    assert store.search.vector(model, store.vectors.get(staged.id, model), 1) == [staged.id]
    assert store.search.index(model).size == 351


def test_the_copy_follows_writes_from_another_process(store: Store, data_dir: Path) -> None:
    rng = np.random.default_rng(3)
    model, ids = populate(store, rng, 100)
    query = random_unit(rng, 1)[0]
    assert_exact(store, model, query)
    with Store.open(data_dir) as other:  # its own connections, as another process has
        added = other.memories.add("written elsewhere")
        other.vectors.put(added.id, model, query)
        other.vectors.put(ids[0], model, -query)
    assert store.search.vector(model, query, 1) == [added.id]
    assert ids[0] not in store.search.vector(model, query, 100)
    assert_exact(store, model, query)


def test_zero_vectors_match_nothing(store: Store) -> None:
    rng = np.random.default_rng(4)
    model, ids = populate(store, rng, 20)
    store.vectors.put(ids[0], model, np.zeros(DIM, dtype=np.float32))
    assert ids[0] not in store.search.vector(model, random_unit(rng, 1)[0], 30)
    assert store.search.vector(model, np.zeros(DIM), 30) == []


def test_a_query_of_the_wrong_size_is_refused(store: Store) -> None:
    model, _ = populate(store, np.random.default_rng(5), 5)
    with pytest.raises(ValueError, match="48"):
        store.search.vector(model, [1.0, 0.0], 30)


def test_no_vectors_no_results(store: Store) -> None:
    model = store.vectors.ensure_model("test/empty", DIM)
    store.memories.add("no vector")
    assert not store.search.has_vectors(model)
    assert store.search.vector(model, np.ones(DIM), 30) == []


def test_a_deadline_already_past_stops_a_leg(store: Store) -> None:
    store.memories.add("tea with Zoë", entities=["Zoë"])
    for leg in (store.search.text, store.search.entity):
        with pytest.raises(TimeoutError):
            leg("tea Zoë", 30, deadline=0.0)


def test_reading_vec0_storage_equals_reading_the_table(store: Store) -> None:
    rng = np.random.default_rng(6)
    model, ids = populate(store, rng, 1100)  # more than one vec0 chunk
    store.vectors.put(ids[10], model, random_unit(rng, 1)[0])  # a replaced slot
    fast, slow = VectorIndex(model), VectorIndex(model, read_shadow_tables=False)
    with store.db.read() as conn:
        for query in random_unit(rng, 5):
            assert fast.nearest(conn, query, 50) == slow.nearest(conn, query, 50)
        assert fast.read_shadow_tables and fast.size == slow.size == 1100
        # Changes are read straight from the chunk blobs too.
        added = store.memories.add("late")
        store.vectors.put(added.id, model, random_unit(rng, 1)[0])
        store.vectors.put(ids[20], model, random_unit(rng, 1)[0])
        query = store.vectors.get(ids[20], model)
        assert fast.nearest(conn, query, 50) == slow.nearest(conn, query, 50)
        assert fast.nearest(conn, query, 1)[0][0] == ids[20]
        assert fast.size == 1101
