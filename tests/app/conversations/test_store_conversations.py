"""The conversations pane on the store's real sessions: listing, search with a matching line,
opening with each turn's recall, what `remember` saved and where older turns were summarised,
rename, delete to the bin and undo, and sending explaining there is no chat model."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from pytestqt.qtbot import QtBot

from app.conversations.chat_port import ChatUnavailableError
from app.conversations.store_conversations import StoreConversations, snippet_of
from tests.app.conftest import WindowFactory, settle
from timothy.providers.base import CancelToken
from timothy.store import MemoryStatus, Store
from timothy.store.records import (
    MemoryType,
    MessageStatus,
    RecalledMemory,
    RecallRecord,
    StoredToolCall,
    parse_time,
    utc_now,
)

LISBON = RecalledMemory(
    id="01M8NEM1J78H0C3RRKVN4VH1V1",
    type=MemoryType.SEMANTIC,
    content="Lives in Lisbon",
    entities=("Lisbon",),
    created_at=parse_time("2026-11-02T09:00:00Z"),
    last_confirmed_at=None,
    rank=1,
    ranks={"text": 1, "entity": 2},
    rrf=1 / 61 + 1 / 62,
    decay=0.75,
    weight=1.0,
    score=0.0243,
    days_unconfirmed=29.5,
    tokens=9,
)
LISBON_RECALL = RecallRecord(
    block="<memory>- [semantic] Lives in Lisbon</memory>",
    tokens=12,
    budget=1500,
    items=(LISBON,),
    ranked=(LISBON,),
    legs={"vector": "off", "text": "ok", "entity": "ok"},
    elapsed_ms=3.25,
)


def seed(store: Store) -> tuple[str, str]:
    now = utc_now()
    older = store.sessions.create(title="Garden plans", now=now - timedelta(days=3))
    store.sessions.add_message(
        older.id, "user", "When do I plant tomatoes?", now=now - timedelta(days=3)
    )
    store.sessions.add_message(
        older.id, "assistant", "After the last frost.", now=now - timedelta(days=3)
    )
    newer = store.sessions.create(title="Trip", now=now - timedelta(hours=1))
    store.sessions.add_message(newer.id, "user", "Trains to Porto?", now=now - timedelta(hours=1))
    store.sessions.add_message(
        newer.id, "assistant", "", tool_calls=[StoredToolCall("c1", "remember", "{}")], now=now
    )
    store.sessions.add_message(newer.id, "tool", "saved", tool_call_id="c1", now=now)
    reply = store.sessions.add_message(
        newer.id, "assistant", "Hourly from Lisbon.", status=MessageStatus.STREAMING, now=now
    )
    store.sessions.update_message(
        reply.id,
        status=MessageStatus.CANCELLED,
        memory_block="<memory>- [semantic] Lives in Lisbon</memory>",
        recall=LISBON_RECALL,
    )
    return older.id, newer.id


def test_lists_newest_first_and_searches_titles_and_messages(store: Store) -> None:
    older, newer = seed(store)
    conversations = StoreConversations(store)
    assert [c.id for c in conversations.list()] == [newer, older]
    assert [c.title for c in conversations.list(search="porto")] == ["Trip"]
    assert [c.title for c in conversations.list(search="garden")] == ["Garden plans"]


def test_messages_show_user_and_assistant_turns_with_what_the_model_saw(store: Store) -> None:
    _older, newer = seed(store)
    messages = StoreConversations(store).messages(newer)
    assert [(m.role, m.content) for m in messages] == [
        ("user", "Trains to Porto?"),
        ("assistant", "Hourly from Lisbon."),
    ]
    reply = messages[1]
    assert reply.stopped
    assert reply.recall == LISBON_RECALL


def test_rename_delete_restore_and_titles(store: Store) -> None:
    older, _newer = seed(store)
    conversations = StoreConversations(store)
    conversations.rename(older, "  Tomatoes   and frost ")
    assert conversations.title_of(older) == "Tomatoes and frost"
    conversations.delete(older)
    assert older not in [c.id for c in conversations.list()]
    assert conversations.title_of(older) is None
    conversations.restore(older)
    assert conversations.title_of(older) == "Tomatoes and frost"
    assert conversations.title_of("no-such-id") is None


def test_sending_without_a_chat_model_explains(store: Store) -> None:
    conversations = StoreConversations(store)
    with pytest.raises(ChatUnavailableError, match="No chat model is set up yet"):
        conversations.send(None, "hello", CancelToken())
    conversations.set_engine(None, "No OpenAI API key is set.")
    with pytest.raises(ChatUnavailableError, match="No OpenAI API key"):
        conversations.regenerate("any", CancelToken())
    assert store.sessions.list() == []


def test_search_shows_the_matching_line(store: Store) -> None:
    seed(store)
    conversations = StoreConversations(store)
    [found] = conversations.list(search="porto")
    assert (found.title, found.snippet) == ("Trip", "Trains to Porto?")
    [found] = conversations.list(search="garden")
    assert found.snippet == ""  # the title matched: nothing more to show
    [found] = conversations.list(search="last frost")
    assert found.snippet == "After the last frost."
    long = store.sessions.create(title="Long")
    store.sessions.add_message(long.id, "user", "word " * 40 + "the needle is here " + "x " * 40)
    [found] = conversations.list(search="needle")
    assert found.snippet.startswith("…") and "the needle is here" in found.snippet


def test_reopened_turns_show_what_remember_saved(store: Store) -> None:
    session = store.sessions.create(title="Family")
    store.sessions.add_message(session.id, "user", "Remember my sister is Ana")
    kept = store.memories.add("Sister is Ana", source="remember", session_id=session.id)
    undone = store.memories.add("Brother is Bo", source="remember", session_id=session.id)
    store.memories.reject(undone.id)
    calls = [StoredToolCall("c1", "remember", "{}"), StoredToolCall("c2", "remember", "{}")]
    store.sessions.add_message(session.id, "assistant", "", tool_calls=calls)
    for call_id, memory in (("c1", kept), ("c2", undone)):
        result = json.dumps({"saved": True, "status": "saved", "id": memory.id})
        store.sessions.add_message(session.id, "tool", result, tool_call_id=call_id)
    store.sessions.add_message(session.id, "assistant", "Noted both.")
    messages = StoreConversations(store).messages(session.id)
    assert [(m.role, m.content) for m in messages] == [
        ("user", "Remember my sister is Ana"),
        ("assistant", "Noted both."),
    ]
    remembered = messages[1].remembered
    assert [m.id for m in remembered] == [kept.id, undone.id]
    assert [m.status for m in remembered] == [MemoryStatus.ACTIVE, MemoryStatus.REJECTED]


def test_a_summary_is_placed_after_the_turns_it_stands_for(store: Store) -> None:
    session = store.sessions.create(title="Long chat")
    said = [
        store.sessions.add_message(session.id, role, text)
        for role, text in (
            ("user", "one"),
            ("assistant", "two"),
            ("user", "three"),
            ("assistant", "four"),
            ("user", "five"),
        )
    ]
    # Compaction runs as the turn for "five" starts: the summary is stored after it.
    summary = store.sessions.add_message(session.id, "summary", "They counted to four.")
    store.sessions.mark_compacted([m.id for m in said[:2]], summary.id)
    store.sessions.add_message(session.id, "assistant", "six")
    messages = StoreConversations(store).messages(session.id)
    assert [(m.role, m.content) for m in messages] == [
        ("user", "one"),
        ("assistant", "two"),
        ("summary", "They counted to four."),
        ("user", "three"),
        ("assistant", "four"),
        ("user", "five"),
        ("assistant", "six"),
    ]
    assert messages[2].compacted == 2


def test_undo_remember_rejects_without_an_engine(store: Store) -> None:
    memory = store.memories.add("Likes tea", source="remember")
    undone = StoreConversations(store).undo_remember(memory.id)
    assert undone.status is MemoryStatus.REJECTED


def test_the_window_lists_and_opens_stored_conversations(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    older, newer = seed(store)
    window = make_window()
    settle(qtbot, window.workers, window.network)
    listed = window.sidebar.model.conversations()
    assert [c.id for c in listed] == [newer, older]
    headings = [row for row in window.sidebar.model.rows if isinstance(row, str)]
    assert headings == ["Today", "Previous 7 days"]
    window.open_conversation(newer)
    settle(qtbot, window.workers, window.network)
    transcript = window.chat.transcript
    assert [m.content for m in transcript.messages] == ["Trains to Porto?", "Hourly from Lisbon."]
    assert transcript.messages[-1].note_label.text() == "This reply was cut short."
    assert window.memory_pane.recall_view.block_view.toPlainText() == (
        "<memory>- [semantic] Lives in Lisbon</memory>"
    )
    # A memory card's conversation link opens the conversation it came from.
    staged = store.memories.stage("Plants tomatoes in May", session_id=older)
    queue = window.memory_pane.queue
    assert queue is not None
    qtbot.waitUntil(lambda: [m.id for m in queue.model.memories] == [staged.id], timeout=5000)
    settle(qtbot, window.workers)
    assert queue.model.titles == {older: "Garden plans"}
    queue.source_clicked.emit(older)
    settle(qtbot, window.workers)
    assert window.chat.conversation_id == older
    assert window.chat.title_label.text() == "Garden plans"


def test_a_search_snippet_reads_as_the_screen_shows_it_without_markdown_marks() -> None:
    reply = (
        "## Plan\n> Take the **night train** from [Lisbon](https://cp.pt) with `my_ticket` "
        "and *book* a couchette_bed early."
    )
    snippet = snippet_of(reply, ["night", "train"])
    assert snippet is not None
    assert "night train from Lisbon with my_ticket and book a couchette_bed" in snippet
    assert not any(mark in snippet for mark in ("**", "`", "](", "##", ">"))
    assert snippet_of("**night** only", ["night", "train"]) is None
