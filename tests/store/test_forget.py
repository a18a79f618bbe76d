"""Forget for good: the memory and every copy of its text leave the database file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from tests.fakes.embedder import HashingEmbedder
from tests.fakes.openai_server import OpenAIServer
from tests.fakes.script import call
from timothy.chat.engine import ChatEngine
from timothy.chat.events import MemorySaved, TurnEvent, TurnFinished
from timothy.chat.settings import ChatSettings
from timothy.chat.transcript import transcript
from timothy.memory.consolidation import (
    LAST_REPORT_KEY,
    ArchivedMemory,
    ConsolidationReport,
    DecayedMemory,
    LeftAlone,
    LeftAloneGroup,
    MergedGroup,
    excerpt,
    last_report,
    record,
)
from timothy.memory.forget import forget
from timothy.providers.factory import chat_provider
from timothy.retrieval import Recaller
from timothy.retrieval.render import BLOCK_CLOSE, BLOCK_OPEN, render_block, render_item
from timothy.retrieval.settings import RecallSettings
from timothy.settings import MemoryPolicySettings, Settings
from timothy.store import Store
from timothy.store.memories import ConfidenceDecay
from timothy.store.records import MemoryStatus, MessageRole

SECRET = "quokkaburrow"  # one word: the text index holds it as a term of its own
LOCKER = f"The owner's gym locker code is {SECRET} 4471"
BIKE_WORD = "zyzzogeton"
BIKE = f"The owner's bike lock word is {BIKE_WORD}"
NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def file_bytes(path: Path) -> bytes:
    """The database file and its WAL, as they are on disk, lowercased (ASCII)."""
    data = path.read_bytes()
    wal = path.with_name(path.name + "-wal")
    if wal.exists():
        data += wal.read_bytes()
    return data.lower()


def traces(data: bytes, word: str) -> list[bytes]:
    """Where `word` is left in `data`, with some bytes either side (for a failure's message)."""
    found, start = [], data.find(word.encode())
    while start >= 0:
        found.append(data[max(0, start - 60) : start + 60])
        start = data.find(word.encode(), start + 1)
    return found


@pytest.fixture
def engine(store: Store, openai_server: OpenAIServer) -> Iterator[ChatEngine]:
    settings = Settings(chat_provider="openai", openai=openai_server.settings(use_memories=True))
    made = ChatEngine(
        store,
        chat=chat_provider(settings),
        embedder=HashingEmbedder(),
        recall_settings=RecallSettings(time_bound_seconds=5.0),
        chat_settings=ChatSettings(),
        policy=MemoryPolicySettings(ask_before_saving=False),
        use_memories=True,
    )
    yield made
    made.wait_idle(timeout=10)
    made.close()


def turn(engine: ChatEngine, text: str, session_id: str | None = None) -> list[TurnEvent]:
    events = list(engine.send(text, session_id=session_id))
    engine.wait_idle(10)
    return events


def embed_active(store: Store, embedder: HashingEmbedder) -> None:
    model = store.vectors.ensure_model(embedder.model_id, embedder.dimension)
    memories = store.memories.list(status="active")
    store.vectors.put_many(
        model,
        zip([m.id for m in memories], embedder.embed([m.content for m in memories]), strict=True),
    )
    store.vectors.set_active_model(model.name)


@pytest.mark.sqlite_only
def test_forget_removes_every_trace_from_the_file(
    store: Store, engine: ChatEngine, openai_server: OpenAIServer
) -> None:
    locker = store.memories.add(LOCKER, entities=["Quokkaburrow Gym"], now=NOW)
    other = store.memories.add("The owner's gym is open until 22:00", now=NOW)
    embedder = HashingEmbedder()
    embed_active(store, embedder)
    # A turn that recalls the locker code: its block and recall record are kept with it.
    openai_server.reply("It is in your memories.")
    first = turn(engine, "What is my gym locker code?")
    session = first[0].session  # type: ignore[union-attr]
    recalled = next(e for e in first if isinstance(e, TurnFinished)).message
    assert recalled.memory_block is not None and LOCKER in recalled.memory_block
    # A turn where the model remembers a fact: the call and the result both carry it.
    openai_server.reply(tool_calls=[call("remember", {"content": BIKE, "entities": ["Bike"]})])
    openai_server.reply("Noted.")
    second = turn(engine, "Please remember my bike lock word.", session.id)
    [saved] = [e.memory for e in second if isinstance(e, MemorySaved)]
    # The owner never wrote the word: the fact waited for their review, and they kept it.
    assert store.memories.get(saved.id).status is MemoryStatus.STAGED
    store.memories.confirm(saved.id, now=NOW)
    embed_active(store, embedder)
    # Consolidation's report quotes it, and it has a decay record.
    record(
        store,
        ConsolidationReport(
            ran_at=NOW, archived=(ArchivedMemory(locker.id, excerpt(LOCKER), NOW),)
        ),
    )
    lowered = store.memories.decay([ConfidenceDecay(locker.id, locker.created_at, 1, 0.7)], now=NOW)
    assert [m.id for m in lowered] == [locker.id]
    # The vector leg has loaded its in-memory copy, locker vector included.
    model = store.vectors.active_model()
    assert model is not None
    locker_vector = np.asarray(embedder.embed([LOCKER])[0], dtype=np.float32)
    assert store.search.vector(model, locker_vector, 5)[0] == locker.id
    before = file_bytes(store.path)
    assert SECRET.encode() in before and BIKE_WORD.encode() in before

    report = forget(store, [locker.id, saved.id])

    assert set(report.forgotten) == {locker.id, saved.id}
    assert report.erased.turns_redacted >= 1
    assert report.erased.tool_messages_redacted == 2  # the result and the call
    assert report.erased.meta_redacted == (LAST_REPORT_KEY,)
    assert report.erased.vectors_removed == 2
    assert report.compacted
    # Gone from every table and index.
    assert store.memories.get_many([locker.id, saved.id]) == {}
    assert store.memories.list(text=SECRET) == []
    assert store.memories.list(text=BIKE_WORD) == []
    assert store.search.entity("Quokkaburrow Gym", 10) == []
    with store.db.read() as conn:
        assert conn.execute("SELECT count(*) FROM memory_decay").fetchall()[0][0] == 0
        assert conn.execute("SELECT count(*) FROM memory_entities").fetchall()[0][0] == 0
    assert store.vectors.get(locker.id, model) is None
    # The vector leg (its in-memory copy follows vector_changes) no longer returns it.
    assert locker.id not in store.search.vector(model, locker_vector, 5)
    with Recaller(store, embedder=embedder) as recaller:
        result = recaller.recall("What is my gym locker code?", now=NOW, mark=False)
    found = {c.memory.id for c in result.ranked} | {b.memory.id for b in result.below_floor}
    assert locker.id not in found
    assert other.id in found  # still searched: only the forgotten memory is gone
    # The recorded turn's block keeps its shape; the line says "[forgotten]".
    kept = store.sessions.message(recalled.id)
    assert kept.memory_block is not None
    assert kept.memory_block.startswith(BLOCK_OPEN) and kept.memory_block.endswith(BLOCK_CLOSE)
    assert kept.memory_block.count("\n- [") == recalled.memory_block.count("\n- [")
    assert render_item("semantic", "[forgotten]") in kept.memory_block
    assert kept.memory_block == recalled.memory_block.replace(
        render_item("semantic", LOCKER), render_item("semantic", "[forgotten]")
    )
    assert kept.recall is not None
    assert kept.recall.block == kept.memory_block
    [entry] = [item for item in kept.recall.items if item.id == locker.id]
    assert entry.content == "[forgotten]" and entry.entities == ()
    # The remember call and its result keep their shape without the fact.
    messages = store.sessions.messages(session.id)
    [result_message] = [m for m in messages if m.role is MessageRole.TOOL]
    assert json.loads(result_message.content)["content"] == "[forgotten]"
    [caller] = [m for m in messages if m.tool_calls]
    arguments = json.loads(caller.tool_calls[0].arguments)
    assert arguments == {"content": "[forgotten]", "entities": []}
    assert not any(m.remembered for m in transcript(store, session.id))
    stored_report = last_report(store)
    assert stored_report is not None and stored_report.archived[0].content == "[forgotten]"
    # And no byte of either text is left in the file or its WAL: while the store is open
    # (closing the last connection checkpoints and deletes the WAL anyway), and after.
    assert locker_vector.tobytes().lower() in before
    for after in (file_bytes(store.path), (store.close(), file_bytes(store.path))[1]):
        assert traces(after, SECRET) == []
        assert traces(after, BIKE_WORD) == []
        # vec0 keeps a deleted row's bytes in its chunk: the vector was zeroed first.
        assert locker_vector.tobytes().lower() not in after


def test_forget_one_version_keeps_the_rest_of_the_chain_readable(store: Store) -> None:
    first = store.memories.add("The owner runs 5 km", now=NOW)
    second = store.memories.supersede(first.id, "The owner runs 10 km", now=NOW + timedelta(1))
    third = store.memories.supersede(second.id, "The owner runs 21 km", now=NOW + timedelta(2))

    report = forget(store, [second.id])

    assert report.forgotten == (second.id,) and report.chains == 0
    assert set(report.erased.relinked) == {first.id, third.id}
    assert [m.id for m in store.memories.chain(first.id)] == [first.id, third.id]
    assert [m.id for m in store.memories.chain(third.id)] == [first.id, third.id]
    assert store.memories.get(first.id).superseded_by == third.id
    assert store.memories.get(third.id).supersedes == first.id


def test_forget_the_newest_version_leaves_the_older_one_a_chain_of_its_own(
    store: Store,
) -> None:
    old = store.memories.add("The owner lives in Porto", now=NOW)
    new = store.memories.supersede(old.id, "The owner lives in Lyon", now=NOW + timedelta(1))

    forget(store, [new.id])

    kept = store.memories.get(old.id)
    assert kept.superseded_by is None and kept.status.value == "superseded"
    assert [m.id for m in store.memories.chain(old.id)] == [old.id]


def test_forget_chain_removes_every_version(store: Store) -> None:
    first = store.memories.add("The owner's PIN is 1111", now=NOW)
    second = store.memories.supersede(first.id, "The owner's PIN is 2222", now=NOW)
    merged_with = store.memories.add("The owner's PIN is 2222.", now=NOW)
    canonical = store.memories.merge([second.id, merged_with.id], "The owner's PIN is 2222")
    bystander = store.memories.add("The owner likes tea", now=NOW)

    report = forget(store, [first.id], chain=True)

    assert set(report.forgotten) == {first.id, second.id, merged_with.id, canonical.id}
    assert report.chains == 1
    assert report.erased.relinked == ()
    assert [m.id for m in store.memories.list()] == [bystander.id]
    index = "memories_fts" if isinstance(store, Store) else "memories WHERE tsv IS NOT NULL"
    with store.db.read() as conn:
        assert conn.execute(f"SELECT count(*) FROM {index}").fetchall()[0][0] == 1


def test_a_forgotten_memory_is_not_found_as_its_words_are_typed(store: Store) -> None:
    gone = store.memories.add(BIKE, now=NOW)
    kept = store.memories.add("The owner's bike is blue", now=NOW)
    assert [m.id for m in store.memories.list(text="zyzzog")] == [gone.id]

    forget(store, [gone.id])

    assert store.memories.list(text="zyzzog") == []
    assert store.memories.list(text="zyzzog", match_any=True) == []
    assert [m.id for m in store.memories.list(text="bik")] == [kept.id]
    if isinstance(store, Store):  # nor kept in the index of the words as written
        assert traces(file_bytes(store.path), BIKE_WORD) == []


def test_an_unknown_id_forgets_nothing(store: Store) -> None:
    kept = store.memories.add("The owner likes tea", now=NOW)
    with pytest.raises(Exception, match="No memory has the id 'nope'"):
        forget(store, [kept.id, "nope"])
    assert store.memories.get(kept.id).content == "The owner likes tea"


def test_listeners_hear_forgotten(store: Store) -> None:
    heard: list[tuple[str, str]] = []
    store.memories.listeners.append(lambda event, memory: heard.append((event, memory.id)))
    memory = store.memories.add("The owner likes tea", now=NOW)
    forget(store, [memory.id])
    assert heard[-1] == ("forgotten", memory.id)


def test_a_new_memory_reusing_the_forgotten_seq_gets_no_stale_vector(store: Store) -> None:
    embedder = HashingEmbedder()
    store.memories.add("The owner likes tea", now=NOW)
    gone = store.memories.add(LOCKER, now=NOW)
    embed_active(store, embedder)
    model = store.vectors.active_model()
    assert model is not None
    query = embedder.embed([LOCKER])[0]
    assert store.search.vector(model, query, 5)[0] == gone.id
    forget(store, [gone.id])
    fresh = store.memories.add("Something else entirely", now=NOW)  # may take the same seq
    assert fresh.id not in store.search.vector(model, query, 5)
    assert gone.id not in store.search.vector(model, query, 5)


def recorded_turn(store: Store, block: str) -> str:
    session = store.sessions.create(now=NOW)
    reply = store.sessions.add_message(session.id, MessageRole.ASSISTANT, "ok", now=NOW)
    store.sessions.update_message(reply.id, memory_block=block)
    return reply.id


def test_only_the_forgotten_line_is_redacted_even_when_escaped(store: Store) -> None:
    planted = store.memories.add("tried </memory> to\nbreak out", type="procedural", now=NOW)
    gone = store.memories.add("foo", now=NOW)
    lookalike = store.memories.add("bar - [semantic] foo", now=NOW)  # ends like gone's line
    block = render_block([planted, gone, lookalike])
    reply = recorded_turn(store, block)

    forget(store, [planted.id, gone.id])

    assert store.sessions.message(reply).memory_block == render_block(
        [
            replace(planted, content="[forgotten]"),
            replace(gone, content="[forgotten]"),
            lookalike,
        ]
    )


def test_a_faded_memory_in_a_turns_recall_record_is_redacted_too(store: Store) -> None:
    faded = store.memories.add("My old PIN is 4711", now=NOW - timedelta(days=400))
    with Recaller(store) as recaller:
        result = recaller.recall("What is my old PIN?", now=NOW, mark=False)
    assert [c.memory.id for c in result.faded] == [faded.id]
    reply = recorded_turn(store, result.block)
    store.sessions.update_message(reply, recall=result.record())
    assert "4711" in json.dumps(store.sessions.message(reply).recall.to_json())  # type: ignore[union-attr]

    forget(store, [faded.id])

    kept = store.sessions.message(reply).recall
    assert kept is not None
    (entry,) = kept.faded
    assert entry.id == faded.id and entry.content == "[forgotten]" and entry.entities == ()
    assert "4711" not in json.dumps(kept.to_json())


def test_the_consolidation_report_loses_the_forgotten_excerpts(store: Store) -> None:
    one = store.memories.add("The owner's shed code is 1234", now=NOW)
    two = store.memories.add("The owner's shed code is 1234.", now=NOW)
    kept = store.memories.add("The owner likes tea", now=NOW)
    report = ConsolidationReport(
        ran_at=NOW,
        merged=(MergedGroup((kept.id, "x"), canonical=one.id, content="shed code 1234"),),
        left_alone=(
            LeftAloneGroup((two.id, kept.id), LeftAlone.FIGURES_DIFFER, "1234 / 4321"),
            LeftAloneGroup(("a", "b"), LeftAlone.NOT_DUPLICATES, "other facts"),
        ),
        decayed=(DecayedMemory(two.id, "The owner's shed code is 1234.", 0.9, 0.8, 1),),
        archived=(ArchivedMemory(kept.id, "The owner likes tea", NOW),),
    )
    record(store, report)

    forget(store, [one.id, two.id])

    stored = last_report(store)
    assert stored is not None
    assert stored.merged[0].content == "[forgotten]"
    assert [g.detail for g in stored.left_alone] == ["[forgotten]", "other facts"]
    assert stored.decayed[0].content == "[forgotten]"
    assert stored.archived[0].content == "The owner likes tea"
    assert "1234" not in (store.db.get_meta(LAST_REPORT_KEY) or "")


@pytest.mark.sqlite_only
def test_forget_inside_a_transaction_still_forgets_and_says_the_file_was_not_rebuilt(
    store: Store,
) -> None:
    memory = store.memories.add(LOCKER, now=NOW)
    with store.db.write():
        report = forget(store, [memory.id])
    assert report.forgotten == (memory.id,)
    assert report.compacted is False
    assert store.memories.get_many([memory.id]) == {}


@pytest.mark.sqlite_only
def test_a_reader_holding_the_wal_is_reported(store: Store) -> None:
    memory = store.memories.add(LOCKER, now=NOW)
    reader = store.db.connect()
    reader.set_busy_timeout(0)
    reader.execute("BEGIN")
    reader.execute("SELECT count(*) FROM memories").fetchall()
    try:
        report = forget(store, [memory.id])
    finally:
        reader.execute("COMMIT")
    assert report.compacted is False
    assert store.memories.get_many([memory.id]) == {}
