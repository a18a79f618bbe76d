"""The conversations pane on the store's real sessions: listing, search, opening with each
turn's recall, rename, delete to the bin and undo, and sending explaining it needs the engine."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pytestqt.qtbot import QtBot

from app.chat_port import ChatUnavailableError
from app.store_conversations import StoreConversations
from tests.app.conftest import WindowFactory, settle
from timothy.providers.base import CancelToken
from timothy.store import Store
from timothy.store.records import MessageStatus, StoredToolCall, utc_now


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
        recall={"tokens": 12, "budget": 1500, "items": []},
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
    assert reply.recall == {
        "tokens": 12,
        "budget": 1500,
        "items": [],
        "block": "<memory>- [semantic] Lives in Lisbon</memory>",
    }


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


def test_sending_without_the_engine_explains(store: Store) -> None:
    conversations = StoreConversations(store)
    with pytest.raises(ChatUnavailableError, match="chat engine"):
        conversations.send(None, "hello", CancelToken())


def test_the_window_lists_and_opens_stored_conversations(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    older, newer = seed(store)
    window = make_window(conversations=StoreConversations(store))
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
