"""Vectors follow the memories: the background queue, backfill, and switching models safely."""

from __future__ import annotations

import logging

import pytest

from tests.fakes.bedrock_server import TITAN_V1, BedrockServer
from tests.fakes.openai_server import OpenAIServer
from tests.fakes.script import Step
from timothy.memory.embedding import EmbeddingQueue, backfill
from timothy.providers.backoff import Backoff
from timothy.providers.factory import embedder_for_model, local_embedder, query_embedder
from timothy.providers.local import MODEL_ID as LOCAL
from timothy.providers.openai_embeddings import OpenAIEmbeddings
from timothy.providers.titan import TitanEmbeddings
from timothy.settings import Settings
from timothy.store import Store

NO_RETRY = Backoff(max_attempts=1)


def active_name(store: Store) -> str | None:
    active = store.vectors.active_model()
    return None if active is None else active.name


def has_vector(store: Store, memory_id: str, model_name: str) -> bool:
    model = store.vectors.model(model_name)
    return model is not None and store.vectors.get(memory_id, model) is not None


def test_the_queue_embeds_added_promoted_and_superseded_memories(store: Store) -> None:
    with EmbeddingQueue(store, local_embedder()) as queue:
        added = store.memories.add("I prefer aisle seats on long flights")
        staged = store.memories.stage("My sister lives in Lisbon")
        assert queue.wait_idle(30)
        assert has_vector(store, added.id, LOCAL)
        assert not has_vector(store, staged.id, LOCAL)  # staged waits for the backfill

        store.memories.promote(staged.id)
        edited = store.memories.supersede(added.id, "I prefer window seats on long flights")
        assert queue.wait_idle(30)
    assert has_vector(store, staged.id, LOCAL)
    assert has_vector(store, edited.id, LOCAL)
    assert queue.embedded == 3
    # a fresh store had no vector model: the first one that covers everything becomes active
    active = store.vectors.active_model()
    assert active is not None and active.name == LOCAL
    assert store.memories.listeners == []  # stopping unsubscribed


def test_a_write_never_waits_for_the_network_and_a_failure_is_caught_up_later(
    store: Store, openai_server: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    openai_server.hang(on="embeddings")
    embedder = OpenAIEmbeddings(openai_server.settings(timeout_seconds=1.0), backoff=NO_RETRY)
    with caplog.at_level(logging.WARNING), EmbeddingQueue(store, embedder) as queue:
        memory = store.memories.add("I prefer aisle seats on long flights")
        # add() has returned although the embedding request is still hanging on the server
        assert openai_server.wait_for_requests(1, timeout=10)
        assert not queue.wait_idle(0)
        assert store.memories.get(memory.id).content == "I prefer aisle seats on long flights"
        assert queue.wait_idle(30)  # the read timeout ends the hang
    assert queue.failed == 1
    assert "backfill will retry" in caplog.text
    assert not has_vector(store, memory.id, embedder.model_id)

    result = backfill(store, embedder)
    assert (result.total, result.embedded, result.complete) == (1, 1, True)
    assert has_vector(store, memory.id, embedder.model_id)


def test_backfill_covers_active_memories_only(store: Store) -> None:
    """Staged proposals are embedded when the owner confirms them, not before."""
    active = [store.memories.add(f"active fact {i}") for i in range(5)]
    staged = store.memories.stage("a staged fact")
    rejected = store.memories.stage("a rejected fact")
    store.memories.reject(rejected.id)
    archived = store.memories.add("an archived fact")
    store.memories.archive(archived.id)
    seen: list[tuple[int, int]] = []

    result = backfill(
        store, local_embedder(), batch_size=2, progress=lambda d, t: seen.append((d, t))
    )

    assert (result.total, result.embedded, result.failed) == (5, 5, 0)
    assert result.complete and result.switched
    for memory in active:
        assert has_vector(store, memory.id, LOCAL)
    for memory in (staged, rejected, archived):
        assert not has_vector(store, memory.id, LOCAL)
    assert seen == [(0, 5), (2, 5), (4, 5), (5, 5)]
    again = backfill(store, local_embedder())
    assert (again.total, again.embedded, again.switched) == (0, 0, False)


def test_a_model_switch_moves_the_vector_leg_only_when_the_backfill_completes(
    store: Store, openai_server: OpenAIServer
) -> None:
    memories = [store.memories.add(f"fact {i} about seats and flights") for i in range(5)]
    assert backfill(store, local_embedder()).complete
    assert active_name(store) == LOCAL

    # the new model: the second of three batches fails (a bad request is not retried)
    openai_server.script.push(Step(), on="embeddings")
    openai_server.fail(400, on="embeddings")
    new = OpenAIEmbeddings(openai_server.settings(), backoff=NO_RETRY)
    partial = backfill(store, new, batch_size=2)
    assert (partial.total, partial.embedded, partial.failed) == (5, 3, 2)
    assert not partial.complete and not partial.switched
    assert partial.error is not None and partial.error.kind == "bad_request"
    # recall keeps searching the old model's vectors, which still cover every memory
    active = store.vectors.active_model()
    assert active is not None and active.name == LOCAL
    query = local_embedder().embed_query("fact 3 about seats and flights")
    assert store.vectors.nearest(active, query, k=1)[0][0] == memories[3].id

    finished = backfill(store, new, batch_size=2)
    assert (finished.total, finished.embedded, finished.complete, finished.switched) == (
        2,
        2,
        True,
        True,
    )
    assert active_name(store) == "openai/text-embedding-3-small"
    # the old vectors are kept (switching back needs no re-embedding)
    assert store.vectors.count(store.vectors.require_model(LOCAL)) == 5


def test_a_fatal_failure_stops_the_backfill_at_once(
    store: Store, openai_server: OpenAIServer
) -> None:
    for i in range(10):
        store.memories.add(f"fact {i}")
    openai_server.fail(401, on="embeddings", times=None)
    result = backfill(store, OpenAIEmbeddings(openai_server.settings()), batch_size=2)
    assert (result.embedded, result.failed, result.complete) == (0, 10, False)
    assert result.error is not None and "refused the API key" in result.error.message
    assert len(openai_server.embedding_requests) == 1
    assert store.vectors.active_model() is None


def test_dimensions_are_recorded_per_model(
    store: Store, openai_server: OpenAIServer, bedrock_server: BedrockServer
) -> None:
    store.memories.add("I prefer aisle seats on long flights")
    embedders = [
        local_embedder(),
        OpenAIEmbeddings(openai_server.settings()),
        TitanEmbeddings(bedrock_server.settings()),
        TitanEmbeddings(bedrock_server.settings(embedding_dimension=512)),
        TitanEmbeddings(bedrock_server.settings(embedding_model=TITAN_V1)),
    ]
    for embedder in embedders:
        assert backfill(store, embedder).embedded == 1
    assert {(m.name, m.dimension) for m in store.vectors.models()} == {
        (LOCAL, 384),
        ("openai/text-embedding-3-small", 1536),
        ("bedrock/amazon.titan-embed-text-v2:0@1024", 1024),
        ("bedrock/amazon.titan-embed-text-v2:0@512", 512),
        ("bedrock/amazon.titan-embed-text-v1", 1536),
    }


def test_a_memory_is_embedded_with_its_entities_in_front(
    store: Store, openai_server: OpenAIServer
) -> None:
    store.memories.add("likes green tea", entities=["Zoë", "Tea House"])
    store.memories.add("I prefer aisle seats")
    backfill(store, OpenAIEmbeddings(openai_server.settings()))
    assert openai_server.embedding_requests[-1]["input"] == [
        "Zoë, Tea House: likes green tea",
        "I prefer aisle seats",
    ]


def test_recall_embeds_its_query_with_the_active_model_during_a_switch(
    store: Store, openai_server: OpenAIServer, bedrock_server: BedrockServer
) -> None:
    settings = Settings(
        embedding_provider="openai",
        openai=openai_server.settings(),
        bedrock=bedrock_server.settings(),
    )
    store.memories.add("I prefer aisle seats on long flights")
    assert backfill(store, local_embedder()).switched
    # configured: OpenAI; active: still the local model until OpenAI covers every memory
    query = query_embedder(settings, active_name(store))
    assert query is local_embedder()
    assert query_embedder(settings, None) is None

    for name in (
        "openai/text-embedding-3-small",
        "openai/text-embedding-3-large@256",
        "bedrock/amazon.titan-embed-text-v2:0@512",
        "bedrock/amazon.titan-embed-text-v1",
        LOCAL,
    ):
        assert embedder_for_model(settings, name).model_id == name
    assert query_embedder(settings, "cohere/embed-v3") is None
