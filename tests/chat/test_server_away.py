"""A turn while the memory server is out of reach: the reply streams, the turn says it ran
without memories, and its messages reach the server when it answers again."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.chat.conftest import MakeEngine, run
from tests.fakes.openai_server import OpenAIServer
from tests.fakes.postgres import PgServer
from timothy.chat.engine import SERVER_AWAY_NOTE
from timothy.chat.events import RecallFinished, TurnFinished, TurnStarted
from timothy.store.postgres import PostgresStore


@pytest.fixture
def store(pg_url: str) -> Iterator[PostgresStore]:
    with PostgresStore(pg_url, connect_timeout=2) as opened:
        assert opened.changes is not None and opened.changes.wait_connected(0, 10)
        yield opened


def test_a_turn_goes_on_without_memories_and_its_messages_reach_the_server_later(
    store: PostgresStore,
    pg_server: PgServer,
    pg_url: str,
    openai_server: OpenAIServer,
    make_engine: MakeEngine,
    tmp_path: Path,
) -> None:
    store.memories.add("My sister lives in Lyon", entities=["Lyon"])
    engine = make_engine(openai_server)
    openai_server.reply("Nice to hear from you.")
    first = run(engine.send("Hello there"))
    session = next(e for e in first if isinstance(e, TurnStarted)).session
    assert store.changes is not None
    before = store.changes.connections
    pg_server.kill()
    try:
        store.sessions.list()  # the window's list finds the server gone
        openai_server.reply("Lyon is two hours from Paris by train.")
        events = run(engine.send("How far is my sister?", session_id=session.id))
        engine.wait_idle(timeout=10)
    finally:
        pg_server.start()
    recall = next(e for e in events if isinstance(e, RecallFinished))
    finished = next(e for e in events if isinstance(e, TurnFinished))
    asked = next(e for e in events if isinstance(e, TurnStarted)).user_message
    assert recall.block == "" and recall.note == SERVER_AWAY_NOTE
    assert finished.message.content == "Lyon is two hours from Paris by train."
    assert store.changes.wait_connected(before, 60)
    assert store.sessions.pending_count() == 0
    with PostgresStore(pg_url, follow_changes=False, outbox_dir=tmp_path / "other") as desktop:
        said = [(m.role.value, m.content) for m in desktop.sessions.branch(session.id)]
    assert said == [
        ("user", "Hello there"),
        ("assistant", "Nice to hear from you."),
        ("user", "How far is my sister?"),
        ("assistant", "Lyon is two hours from Paris by train."),
    ]
    assert asked.content == "How far is my sister?"


def test_a_turn_that_finds_the_server_gone_says_so(
    store: PostgresStore, pg_server: PgServer, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    """The first call to find it gone is the turn's own (nothing knew before)."""
    engine = make_engine(openai_server)
    openai_server.reply("Hello!")
    pg_server.kill()
    try:
        events = run(engine.send("Hi"))
        engine.wait_idle(timeout=10)
    finally:
        pg_server.start()
    recall = next(e for e in events if isinstance(e, RecallFinished))
    assert recall.note == SERVER_AWAY_NOTE
    assert next(e for e in events if isinstance(e, TurnFinished)).message.content == "Hello!"
