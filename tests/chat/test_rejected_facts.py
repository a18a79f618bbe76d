"""A fact the owner rejected is never proposed again: compaction re-reads the older turns and
extracts from them once more, and what the owner said no to must not come back."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from tests.chat.conftest import MakeEngine, run
from tests.fakes.openai_server import OpenAIServer
from timothy.chat.events import BackgroundEvent, FactsProposed
from timothy.chat.settings import ChatSettings
from timothy.memory.extraction import rejected_before
from timothy.store import Store
from timothy.store.records import MemoryStatus

NOW = datetime(2026, 11, 30, 15, 0, tzinfo=UTC)


def facts(*contents: str) -> str:
    return json.dumps({"facts": [{"content": c, "confidence": 0.9} for c in contents]})


def test_a_rejected_fact_is_not_staged_again_by_compaction(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    engine = make_engine(openai_server, chat_settings=ChatSettings(keep_recent_messages=2))
    heard: list[BackgroundEvent] = []
    engine.background_listeners.append(heard.append)
    openai_server.reply("A cat called Miso, lovely.")
    openai_server.reply("Miso the cat")  # the title
    openai_server.reply(facts("The owner's cat is called Miso"))
    events = run(engine.send("My cat is called Miso and she hates Mondays", now=NOW))
    session_id = events[0].session.id  # type: ignore[union-attr]
    assert engine.wait_idle(10)
    [staged] = store.memories.list(status="staged")
    store.memories.reject(staged.id)  # the owner says no

    openai_server.reply("Noted.")
    openai_server.reply(facts())  # the second turn's own extraction
    run(engine.send("I also like tea", session_id=session_id, now=NOW + timedelta(hours=1)))
    assert engine.wait_idle(10)

    # Compaction extracts from the first turn again; the model proposes the same fact,
    # worded a little differently, next to a new one.
    openai_server.reply(facts("Owner's cats are called MISO.", "The owner dislikes Mondays"))
    openai_server.reply("The owner talked about their cat.")  # the summary
    assert engine.compact(session_id, now=NOW + timedelta(hours=2)) is not None
    assert engine.wait_idle(10)

    staged_now = store.memories.list(status="staged")
    assert [m.content for m in staged_now] == ["The owner dislikes Mondays"]
    assert [m.status for m in store.memories.list()].count(MemoryStatus.REJECTED) == 1
    proposed = [m.content for e in heard if isinstance(e, FactsProposed) for m in e.memories]
    assert "Owner's cats are called MISO." not in proposed


def test_rejected_facts_match_with_the_restatement_normalisation(store: Store) -> None:
    rejected = store.memories.stage("The owner's cat is called Miso")
    store.memories.reject(rejected.id)
    assert rejected_before(store, "the owner's cat is called Miso!")
    assert rejected_before(store, "Owner’s cats are called MISO")  # case, plural, apostrophe
    assert rejected_before(store, "The owner's cat is called Miso")
    assert not rejected_before(store, "The owner's dog is called Miso")
    assert not rejected_before(store, "The owner's cat Miso is twelve years old")


def test_an_active_fact_is_not_mistaken_for_a_rejected_one(store: Store) -> None:
    store.memories.add("The owner's cat is called Miso")
    assert not rejected_before(store, "The owner's cat is called Miso")
