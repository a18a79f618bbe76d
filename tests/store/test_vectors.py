"""Reading a model's whole matrix: straight from sqlite-vec's chunks, same as through vec0."""

from __future__ import annotations

import numpy as np

from timothy.store import Store
from timothy.store.records import MemoryStatus


def test_matrix_matches_vec0_across_chunks_replacements_and_statuses(store: Store) -> None:
    rng = np.random.default_rng(3)
    model = store.vectors.ensure_model("test/4d", 4)
    repo = store.memories
    with store.db.write() as conn:
        memories = [repo.add(f"fact {i}") for i in range(2_300)]  # more than two 1024-chunks
        store.vectors.put_many(model, [(m.id, rng.standard_normal(4)) for m in memories], conn=conn)
    # Replaced vectors move to new chunk slots; archived memories drop out of "active";
    # a memory without a vector is simply absent.
    store.vectors.put_many(model, [(m.id, rng.standard_normal(4)) for m in memories[::7]])
    for memory in memories[5:2_300:11]:
        repo.archive(memory.id)
    unembedded = repo.add("no vector yet")

    for status in (MemoryStatus.ACTIVE, MemoryStatus.ARCHIVED):
        ids, matrix = store.vectors.matrix(model, status=status)
        slow_ids, slow = store.vectors.matrix(model, status=status, read_shadow_tables=False)
        assert ids == slow_ids and np.array_equal(matrix, slow)
        expected = [m.id for m in memories if repo.get(m.id).status is status]
        assert ids == expected  # memory order
        for index, memory_id in enumerate(ids):
            stored = store.vectors.get(memory_id, model)  # through the vec0 table
            assert stored is not None and np.array_equal(matrix[index], stored)
    assert store.vectors.missing(model, statuses=("active",)) == [unembedded.id]


def test_an_empty_model_gives_an_empty_matrix(store: Store) -> None:
    model = store.vectors.ensure_model("test/8d", 8)
    store.memories.add("no vector")
    ids, matrix = store.vectors.matrix(model)
    assert ids == [] and matrix.shape == (0, 8)
