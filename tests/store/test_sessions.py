"""Conversations and messages: order, search, titles, the bin, and what the model saw."""

from __future__ import annotations

import gc
import json
import tracemalloc
from datetime import UTC, datetime, timedelta

import pytest

from timothy.cli import main
from timothy.errors import InvalidInputError, NotFoundError
from timothy.store import Store
from timothy.store.records import (
    BelowFloorMemory,
    LegVerdict,
    MemoryType,
    MessageRole,
    MessageStatus,
    ReadLater,
    RecalledMemory,
    RecallRecord,
    StoredToolCall,
)

T0 = datetime(2026, 4, 1, 12, 0, tzinfo=UTC)


def test_sessions_are_listed_most_recently_active_first(store: Store) -> None:
    older = store.sessions.create(now=T0)
    newer = store.sessions.create(now=T0 + timedelta(minutes=1))
    assert [s.id for s in store.sessions.list()] == [newer.id, older.id]
    store.sessions.add_message(older.id, "user", "hello again", now=T0 + timedelta(hours=1))
    assert [s.id for s in store.sessions.list()] == [older.id, newer.id]


def test_messages_keep_order_and_every_field(store: Store) -> None:
    session = store.sessions.create(now=T0)
    user = store.sessions.add_message(session.id, MessageRole.USER, "Remember my seat", now=T0)
    reply = store.sessions.add_message(
        session.id,
        "assistant",
        "",
        status="streaming",
        tool_calls=[StoredToolCall("c1", "remember", '{"content": "aisle"}')],
        provider="openai",
        model="gpt-x",
        now=T0,
    )
    tool = store.sessions.add_message(session.id, "tool", '{"ok": true}', tool_call_id="c1", now=T0)
    done = store.sessions.update_message(
        reply.id,
        content="Saved.",
        status=MessageStatus.COMPLETE,
        input_tokens=10,
        output_tokens=2,
        cached_tokens=8,
        memory_block="<memory ...>",
        recall=RecallRecord("<memory ...>", 5, 1000, (), (), {"text": "ok"}, 1.5),
    )
    assert done.content == "Saved." and done.cached_tokens == 8
    assert done.recall == RecallRecord("<memory ...>", 5, 1000, (), (), {"text": "ok"}, 1.5)
    assert done.tool_calls[0].name == "remember"
    messages = store.sessions.messages(session.id)
    assert [m.id for m in messages] == [user.id, reply.id, tool.id]
    assert messages[1] == done
    assert messages[2].tool_call_id == "c1"


def test_search_over_titles_and_message_text(store: Store) -> None:
    trip = store.sessions.create(title="Lisbon trip", now=T0)
    food = store.sessions.create(now=T0)
    store.sessions.add_message(food.id, "user", "Which sushi places near Alfama?", now=T0)
    assert [s.id for s in store.sessions.list(search="lisbon")] == [trip.id]
    assert [s.id for s in store.sessions.list(search="sushi")] == [food.id]
    assert [s.id for s in store.sessions.list(search="alfa")] == [food.id]
    assert store.sessions.list(search='"unbalanced NEAR(') == []


def test_search_takes_ss_and_sharp_s_as_the_same_letters(store: Store) -> None:
    """Folding makes a typed "ß" "ss", but the messages' index keeps "ß" as said: a search
    for either spelling finds both, as the last word typed too ("stras" on the way)."""
    german = store.sessions.create(now=T0)
    store.sessions.add_message(german.id, "user", "Parking on the Hauptstraße again?", now=T0)
    swiss = store.sessions.create(now=T0)
    store.sessions.add_message(swiss.id, "user", "The Bahnhofstrasse shops close early", now=T0)
    assert [s.id for s in store.sessions.list(search="hauptstrasse")] == [german.id]
    assert [s.id for s in store.sessions.list(search="Hauptstraße parking")] == [german.id]
    assert [s.id for s in store.sessions.list(search="Bahnhofstraße")] == [swiss.id]
    assert [s.id for s in store.sessions.list(search="parking hauptstras")] == [german.id]


def test_a_title_is_found_whatever_the_case_of_its_letters(store: Store) -> None:
    """SQLite's lower() folds ASCII only: "über" did not find "Über Berlin"."""
    berlin = store.sessions.create(title="Über Berlin", now=T0)
    emile = store.sessions.create(title="Ça va, Émile?", now=T0)
    plans = store.sessions.create(title="Große Pläne", now=T0)
    assert [s.id for s in store.sessions.list(search="über")] == [berlin.id]
    assert [s.id for s in store.sessions.list(search="ÉMILE")] == [emile.id]
    assert [s.id for s in store.sessions.list(search=" ça va")] == [emile.id]
    assert [s.id for s in store.sessions.list(search="grosse")] == [plans.id]
    assert [s.id for s in store.sessions.list(search="PLÄNE")] == [plans.id]
    store.sessions.delete(plans.id, now=T0)
    assert store.sessions.list(search="pläne") == []
    assert [s.id for s in store.sessions.list(search="pläne", include_deleted=True)] == [plans.id]


def test_titles(store: Store) -> None:
    session = store.sessions.create(now=T0)
    assert session.title == "" and session.title_source == "none"
    titled = store.sessions.set_title(session.id, "  Trip\nplanning  ", source="auto")
    assert titled.title == "Trip planning" and titled.title_source == "auto"
    with pytest.raises(InvalidInputError):
        store.sessions.set_title(session.id, "   ")
    with pytest.raises(NotFoundError):
        store.sessions.set_title("NOPE", "x")


def test_delete_is_undoable_then_purged(store: Store) -> None:
    session = store.sessions.create(now=T0)
    store.sessions.add_message(session.id, "user", "hi", now=T0)
    store.sessions.delete(session.id, now=T0)
    assert store.sessions.list() == []
    store.sessions.restore(session.id)
    assert [s.id for s in store.sessions.list()] == [session.id]
    store.sessions.delete(session.id, now=T0)
    assert store.sessions.purge_deleted(before=T0 + timedelta(days=30)) == 1
    with pytest.raises(NotFoundError):
        store.sessions.get(session.id)
    with store.db.read() as conn:
        assert conn.execute("SELECT count(*) FROM messages").fetchall() == [(0,)]


def test_regenerate_deletes_from_a_message_on(store: Store) -> None:
    session = store.sessions.create(now=T0)
    first = store.sessions.add_message(session.id, "user", "q", now=T0)
    answer = store.sessions.add_message(session.id, "assistant", "a", now=T0)
    store.sessions.add_message(session.id, "user", "q2", now=T0)
    assert store.sessions.delete_messages_from(answer.id) == 2
    assert [m.id for m in store.sessions.messages(session.id)] == [first.id]


def test_compacted_messages_leave_the_model_view(store: Store) -> None:
    session = store.sessions.create(now=T0)
    old = [store.sessions.add_message(session.id, "user", f"m{i}", now=T0) for i in range(3)]
    summary = store.sessions.add_message(session.id, "summary", "earlier: m0..m2", now=T0)
    store.sessions.mark_compacted([m.id for m in old], summary.id)
    assert [m.id for m in store.sessions.messages(session.id, include_compacted=False)] == [
        summary.id
    ]
    assert len(store.sessions.messages(session.id)) == 4


def test_cli_lists_and_shows_with_the_memory_block(
    store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    session = store.sessions.create(title="Seats", now=T0)
    store.sessions.add_message(session.id, "user", "Where do I sit?", now=T0)
    reply = store.sessions.add_message(session.id, "assistant", "By the aisle.", now=T0)
    store.sessions.update_message(reply.id, memory_block="<memory>aisle</memory>")
    assert main(["sessions", "list", "--json"]) == 0
    [listed] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert listed["id"] == session.id and listed["title"] == "Seats"
    assert main(["sessions", "show", session.id, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [m["role"] for m in shown["messages"]] == ["user", "assistant"]
    assert shown["messages"][1]["memory_block"] == "<memory>aisle</memory>"
    assert main(["sessions", "show", session.id]) == 0
    text = capsys.readouterr().out
    assert "<memory>aisle</memory>" in text and "By the aisle." in text


def _recalled(memory_id: str, rank: int) -> RecalledMemory:
    return RecalledMemory(
        id=memory_id,
        type=MemoryType.SEMANTIC,
        content=f"Fact {memory_id}",
        entities=("Ana",),
        created_at=T0,
        last_confirmed_at=None,
        rank=rank,
        ranks={"text": rank},
        rrf=1 / (60 + rank),
        decay=1.0,
        weight=1.0,
        score=1 / (60 + rank),
        days_unconfirmed=0.0,
    )


def _stored_reply(store: Store) -> tuple[str, RecallRecord]:
    session = store.sessions.create(now=T0)
    store.sessions.add_message(session.id, "user", "Where does Ana live?", now=T0)
    reply = store.sessions.add_message(session.id, "assistant", "", status="streaming", now=T0)
    record = RecallRecord(
        "<memory ...>",
        20,
        1000,
        (_recalled("m1", 1),),
        tuple(_recalled(f"m{n}", n) for n in range(1, 5)),
        {"text": "ok"},
        1.5,
        below_floor=(
            BelowFloorMemory(
                "m9",
                MemoryType.EPISODIC,
                "Ana said hello",
                ("Ana",),
                {"text": LegVerdict("text", 9, False, 0.2, 0.5, "too little in common")},
            ),
        ),
    )
    store.sessions.update_message(reply.id, content="Lisbon.", status="complete", recall=record)
    return session.id, record


def test_a_stored_records_long_lists_are_read_when_first_used(
    store: Store, store_kind: str
) -> None:
    """Opening a conversation reads every reply's record: the packed memories at once, the
    whole ranked list and what stayed below the floor only when the owner asks to see them
    (they were most of the reading), and then equal to what was stored. (The server store
    copies what it reads into this machine's mirror, which reads them.)"""
    session_id, record = _stored_reply(store)
    (_, reply) = store.sessions.messages(session_id)
    read = reply.recall
    assert read is not None
    assert read.items == record.items  # read at once
    assert isinstance(read.ranked, ReadLater) and isinstance(read.below_floor, ReadLater)
    if store_kind == "sqlite":
        assert not read.ranked.is_read and not read.below_floor.is_read
    assert len(read.ranked) == 4 and read.ranked.is_read
    assert [m.id for m in read.ranked] == ["m1", "m2", "m3", "m4"]
    assert read.ranked[1:3] == record.ranked[1:3] and read.ranked[-1].rank == 4
    assert read.below_floor[0].reason == "text: too little in common"
    assert read == record and read.to_json() == record.to_json()


@pytest.mark.sqlite_only
def test_an_opened_record_keeps_its_unread_lists_as_text(store: Store) -> None:
    """An opened conversation holds every reply's record. Its lists read later were kept
    as parsed entries, ~2.5 times their text (~150 KB a reply on bench/app_startup.py's
    records); now as the text, parsed again when first used."""
    session = store.sessions.create(now=T0)
    reply = store.sessions.add_message(session.id, "assistant", "", status="streaming", now=T0)
    record = RecallRecord(
        "",
        0,
        1000,
        (),
        tuple(_recalled(f"m{n}", n) for n in range(1, 301)),
        {"text": "ok"},
        1.5,
    )
    store.sessions.update_message(reply.id, content="Lisbon.", status="complete", recall=record)
    text = len(json.dumps(record.to_json(), ensure_ascii=False))
    gc.collect()
    tracemalloc.start()
    try:
        (opened,) = store.sessions.messages(session.id)
        gc.collect()
        held, _peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert opened.recall is not None and not opened.recall.ranked.is_read
    assert held < 1.5 * text, f"{held:,} bytes held for {text:,} bytes of text"
    assert opened.recall == record  # and all of it reads when asked


def damage(store: Store, stored: dict[str, object]) -> None:
    """Write a reply's stored record as given (damaged by hand)."""
    sql = store.memories.dialect.sql("UPDATE messages SET recall = ? WHERE role = 'assistant'")
    with store.db.write() as conn:
        conn.execute(sql, (json.dumps(stored),))


def test_a_stored_list_that_no_longer_reads_is_left_out_not_fatal(store: Store) -> None:
    session_id, record = _stored_reply(store)
    stored = record.to_json()
    stored["ranked"][2]["type"] = "no such type"  # one damaged entry
    stored["below_floor"] = "not a list"
    damage(store, stored)
    (_, reply) = store.sessions.messages(session_id)
    # The list of the wrong kind: the record does not read, and is left out as before.
    assert reply.recall is None and reply.content == "Lisbon."
    stored["below_floor"] = []
    damage(store, stored)
    (_, reply) = store.sessions.messages(session_id)
    assert reply.recall is not None and reply.recall.items == record.items
    assert len(reply.recall.ranked) == 0 and list(reply.recall.ranked) == []
