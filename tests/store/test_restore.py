"""Restore: a rejected memory goes back to staged, an archived one back to active."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.fakes.embedder import HashingEmbedder
from timothy.errors import IllegalTransitionError, NotFoundError
from timothy.memory.embedding import EmbeddingQueue
from timothy.store import Store
from timothy.store.records import MemoryStatus

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def test_a_rejected_memory_goes_back_to_staged(store: Store) -> None:
    memory = store.memories.stage("The owner plays chess", now=NOW)
    store.memories.reject(memory.id)
    restored = store.memories.restore(memory.id)
    assert restored.status is MemoryStatus.STAGED
    assert store.memories.promote(memory.id).status is MemoryStatus.ACTIVE


def test_an_undone_remember_goes_back_to_staged_not_active(store: Store) -> None:
    # A rejection does not say where the memory came from: the owner decides again.
    memory = store.memories.add("The owner plays chess", source="remember", now=NOW)
    store.memories.reject(memory.id)
    assert store.memories.restore(memory.id).status is MemoryStatus.STAGED


def test_an_archived_memory_goes_back_to_active_keeping_its_confirmation(store: Store) -> None:
    memory = store.memories.add("The owner went to Lisbon in May", type="episodic", now=NOW)
    store.memories.archive(memory.id)
    restored = store.memories.restore(memory.id)
    assert restored.status is MemoryStatus.ACTIVE
    assert restored.last_confirmed_at == memory.last_confirmed_at
    assert restored.content == memory.content


def test_listeners_hear_restored(store: Store) -> None:
    heard: list[tuple[str, MemoryStatus]] = []
    store.memories.listeners.append(lambda event, m: heard.append((event, m.status)))
    memory = store.memories.add("The owner plays chess", now=NOW)
    store.memories.archive(memory.id)
    store.memories.restore(memory.id)
    assert heard[-1] == ("restored", MemoryStatus.ACTIVE)


@pytest.mark.parametrize("status", ["staged", "active", "superseded"])
def test_restore_from_any_other_status_changes_nothing(store: Store, status: str) -> None:
    memory = store.memories.stage("The owner plays chess", now=NOW)
    if status == "active":
        store.memories.promote(memory.id, now=NOW)
    elif status == "superseded":
        store.memories.supersede(memory.id, "The owner plays chess and go", now=NOW)
    before = store.memories.get(memory.id)
    assert before.status.value == status
    with pytest.raises(IllegalTransitionError, match="only a rejected or archived memory"):
        store.memories.restore(memory.id)
    assert store.memories.get(memory.id) == before


def test_restore_an_unknown_id(store: Store) -> None:
    with pytest.raises(NotFoundError, match="No memory has the id 'nope'"):
        store.memories.restore("nope")


def test_an_archived_memory_restored_without_a_vector_gets_one(store: Store) -> None:
    embedder = HashingEmbedder()
    model = store.vectors.ensure_model(embedder.model_id, embedder.dimension)
    memory = store.memories.add("The owner went to Lisbon in May", type="episodic", now=NOW)
    store.memories.archive(memory.id)
    rejected = store.memories.stage("The owner plays chess", now=NOW)
    store.memories.reject(rejected.id)
    with EmbeddingQueue(store, embedder) as queue:
        store.memories.restore(memory.id)
        store.memories.restore(rejected.id)  # staged: waits for confirmation, no vector
        assert queue.wait_idle(10)
    assert store.vectors.get(memory.id, model) is not None
    assert store.vectors.get(rejected.id, model) is None
