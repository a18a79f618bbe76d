"""The degradation contract: recall, embeddings or the store failing never fail the turn."""

from __future__ import annotations

import time

from tests.chat.conftest import MakeEngine, run
from tests.fakes.openai_server import OpenAIServer
from timothy.chat.events import RecallFinished, TurnFinished
from timothy.chat.prompt import STABLE_PREFIX
from timothy.memory.embedding import backfill
from timothy.providers.base import EmbeddingProvider
from timothy.providers.factory import embedding_provider
from timothy.retrieval.render import BLOCK_OPEN
from timothy.settings import Settings
from timothy.store import Store
from timothy.store.postgres import PostgresStore

BOUND = 0.6
MARGIN = 3.0


def embedded_store(store: Store, server: OpenAIServer) -> EmbeddingProvider:
    """A store whose memory only the vector leg can find, and the embedder for its model."""
    embedder = embedding_provider(Settings(embedding_provider="openai", openai=server.settings()))
    assert embedder is not None
    store.memories.add("Grandmother's apple strudel recipe uses cinnamon")
    result = backfill(store, embedder)
    assert result.complete and store.vectors.active_model() is not None
    return embedder


def turn(engine_events: list[object]) -> tuple[RecallFinished, TurnFinished]:
    recall = next(e for e in engine_events if isinstance(e, RecallFinished))
    finished = next(e for e in engine_events if isinstance(e, TurnFinished))
    return recall, finished


def last_system(server: OpenAIServer) -> str:
    streams = [r for r in server.chat_requests if r.get("stream")]
    return str(streams[-1]["messages"][0]["content"])


def test_recall_hanging_past_its_bound(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    embedder = embedded_store(store, openai_server)
    engine = make_engine(openai_server, embedder=embedder, recall_bound=BOUND)
    openai_server.hang(on="embeddings", times=None)
    openai_server.reply("Here is a dessert idea.")
    started = time.monotonic()
    recall, finished = turn(run(engine.send("Something sweet to bake on Sunday?")))
    elapsed = time.monotonic() - started
    assert finished.message.content == "Here is a dessert idea."
    assert recall.block == ""
    assert recall.recall is not None and recall.recall.legs["vector"].startswith("failed")
    assert BLOCK_OPEN not in last_system(openai_server)
    assert elapsed < BOUND + MARGIN


def test_the_embedding_provider_down(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    embedder = embedded_store(store, openai_server)
    engine = make_engine(openai_server, embedder=embedder, recall_bound=BOUND)
    openai_server.fail(500, on="embeddings", times=None)
    openai_server.reply("Try a crumble.")
    recall, finished = turn(run(engine.send("Something sweet to bake on Sunday?")))
    assert finished.message.content == "Try a crumble."
    assert recall.block == ""
    assert last_system(openai_server).startswith(STABLE_PREFIX)


def test_the_vector_leg_works_when_the_embedder_answers(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    embedder = embedded_store(store, openai_server)
    engine = make_engine(openai_server, embedder=embedder, recall_bound=BOUND)
    openai_server.reply("Your grandmother's strudel!")
    recall, _ = turn(run(engine.send("apple strudel recipe with cinnamon")))
    assert "strudel" in recall.block
    assert recall.recall is not None and recall.recall.legs["vector"] == "ok"


def test_the_whole_store_failing_on_recall(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    store.memories.add("I prefer aisle seats on long flights", entities=["Lufthansa"])
    # Take the text and entity indexes away: every text and entity query now raises. (Wrecking
    # their pages would be damage, which makes the whole store read only and refuses the
    # reply's save too: tests/store/test_damage.py.)
    if isinstance(store, PostgresStore):  # the server's text column and entity table
        with store.db.write() as server:
            server.execute("ALTER TABLE memories DROP COLUMN tsv")
            server.execute("DROP TABLE memory_entities")
    else:
        conn = store.db.connection()
        conn.execute("DROP TABLE memories_fts")
        conn.execute("DROP TABLE memory_entities")
    engine = make_engine(openai_server, recall_bound=BOUND)
    openai_server.reply("Window or aisle, your call.")
    started = time.monotonic()
    recall, finished = turn(run(engine.send("Which seat on long Lufthansa flights?")))
    assert finished.message.content == "Window or aisle, your call."
    assert recall.block == "" and recall.note == "recall failed"
    assert BLOCK_OPEN not in last_system(openai_server)
    assert time.monotonic() - started < BOUND + MARGIN
