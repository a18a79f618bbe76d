"""The real window, driven end to end: first run, a streamed turn, stop, remember + undo,
extracted facts into the queue, "what the model saw", state restored, shortcuts, deletes.

Turns come from the scripted stand-in for the chat engine (tests/fakes/scripted_chat.py)
until `timothy/chat/` lands; everything else (store, settings, keyring) is real.
"""

from __future__ import annotations

import threading
from datetime import timedelta

from PySide6.QtCore import QElapsedTimer, Qt, QTimer
from pytestqt.qtbot import QtBot

from app.chat_port import NoConversations
from app.local_servers import find_local_servers
from app.main_window import MainWindow
from app.notice import Notice
from tests.app.conftest import WindowFactory, quiet_gui_thread, settle
from tests.app.model_server import model_server
from tests.fakes.scripted_chat import Fail, Hold, Remember, Reply, ScriptedConversations, Stage
from timothy.errors import ProviderError
from timothy.settings import Settings, load_settings
from timothy.store import MemoryStatus, Store
from timothy.store.records import format_time, utc_now

MARKDOWN_REPLY = (
    "Sure. Here is a function:\n\n"
    "```python\n"
    "def greet(name: str) -> str:\n"
    "    return f'Hello, {name}!'\n"
    "```\n\n"
    "Call it with **any** name."
)

RECALL = {
    "block": '<memory source="timothy-memory" trust="data">\n- [semantic] Sister is Ana\n</memory>',
    "tokens": 21,
    "budget": 1500,
    "items": [
        {
            "memory": {"id": "m1", "type": "semantic", "content": "Sister is Ana"},
            "explanation": {"legs": {"entity": 1}, "score": 0.016},
        }
    ],
    "legs": {"vector": None, "text": {"count": 0}, "entity": {"count": 1}},
    "elapsed_ms": 3.0,
}


def settle_window(qtbot: QtBot, window: MainWindow) -> None:
    qtbot.waitUntil(lambda: not window.chat.streaming, timeout=10_000)
    settle(qtbot, window.workers, window.network)


def send(qtbot: QtBot, window: MainWindow, text: str) -> None:
    window.chat.composer.input.setFocus()
    window.chat.composer.set_text(text)
    qtbot.keyClick(window.chat.composer.input, Qt.Key.Key_Return)


def test_first_run_explains_setup_and_offers_a_local_server(
    qtbot: QtBot, make_window: WindowFactory
) -> None:
    with model_server(["llama3.2", "mistral"]) as base_url:
        port = int(base_url.split(":")[2].split("/")[0])
        window = make_window(
            settings=Settings(),
            probe=lambda: find_local_servers((("Ollama", port), ("LM Studio", 1))),
        )
        settle_window(qtbot, window)
    welcome = window.chat.welcome
    assert window.chat.stack.currentWidget() is welcome
    assert window.chat.composer.isHidden()
    assert window.status.chat_label.text() == "No chat model"
    assert window.status.embedding_label.text() == "Vector search off: no embedding provider"
    assert not welcome.local_box.isHidden()
    assert "Ollama" in welcome.local_label.text() and "2 models" in welcome.local_label.text()
    assert welcome.local_button.text() == "Use llama3.2"
    with qtbot.waitSignal(window.settings_applied, timeout=5000):
        welcome.local_button.click()
    saved = load_settings()
    assert saved.chat_provider == "openai"
    assert saved.openai.base_url == base_url and saved.openai.chat_model == "llama3.2"
    assert window.chat.stack.currentWidget() is window.chat.blank
    assert not window.chat.composer.isHidden()
    assert window.status.chat_label.text().endswith("· llama3.2")


def test_first_run_settings_button_opens_settings(qtbot: QtBot, make_window: WindowFactory) -> None:
    window = make_window(settings=Settings())
    window.chat.welcome.settings_button.click()
    assert window.settings_dialog is not None and window.settings_dialog.isVisible()
    window.settings_dialog.reject()


def test_status_bar_tells_when_consolidation_last_ran(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    window = make_window()
    assert window.status.consolidation_label.text() == "Consolidation: never run"
    store.db.set_meta("consolidation.last_run", format_time(utc_now() - timedelta(hours=3)))
    window.refresh_counts()
    settle_window(qtbot, window)
    assert window.status.consolidation_label.text() == "Consolidated 3 h ago"


def test_memory_works_with_no_provider(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    fact = store.memories.stage("Works from home on Fridays")
    window = make_window(settings=Settings())
    settle_window(qtbot, window)
    queue = window.memory_pane.queue
    assert queue is not None
    assert [m.id for m in queue.model.memories] == [fact.id]
    queue.select_ids([fact.id])
    queue.buttons["confirm"].click()
    settle_window(qtbot, window)
    assert store.memories.get(fact.id).status is MemoryStatus.ACTIVE
    qtbot.waitUntil(lambda: window.status.memory_label.text() == "1 memory", timeout=5000)


def test_a_streamed_markdown_reply_is_shown_and_the_conversation_listed(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    chat = ScriptedConversations(store, [Reply(MARKDOWN_REPLY, chunk=5, recall=RECALL)])
    window = make_window(conversations=chat)
    send(qtbot, window, "Write a greeting function")
    assert window.chat.streaming
    assert window.chat.composer.button.toolTip() == "Stop the reply (Esc)"
    settle_window(qtbot, window)
    transcript = window.chat.transcript
    user, reply = transcript.messages
    assert user.role == "user" and user.content == "Write a greeting function"
    assert reply.role == "assistant" and reply.content == MARKDOWN_REPLY
    code = reply.markdown.code_blocks()
    assert len(code) == 1 and code[0].code.startswith("def greet")
    assert reply.note_label.isHidden()
    assert window.chat.composer.button.toolTip() == "Send (Enter)"
    # The new conversation is listed, selected and titled.
    qtbot.waitUntil(lambda: len(window.sidebar.model.conversations()) == 1, timeout=5000)
    assert window.chat.title_label.text() == "Write a greeting function"
    assert window.sidebar.model.conversations()[0].id == window.chat.conversation_id
    # Last recall shows what the model saw for this turn.
    view = window.memory_pane.recall_view
    assert view.block_view.toPlainText() == RECALL["block"]
    assert reply.recall_button.text() == "1 memory used"


def test_shift_enter_adds_a_line_and_enter_sends(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    chat = ScriptedConversations(store, [Reply("Two lines received.")])
    window = make_window(conversations=chat)
    box = window.chat.composer.input
    box.setFocus()
    qtbot.keyClicks(box, "first")
    qtbot.keyClick(box, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(box, "second")
    assert box.toPlainText() == "first\nsecond"
    assert chat.sent == []
    qtbot.keyClick(box, Qt.Key.Key_Return)
    settle_window(qtbot, window)
    assert chat.sent == [(None, "first\nsecond")]
    assert box.toPlainText() == ""


def test_stop_mid_stream_keeps_what_arrived(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    text = "word " * 4000
    chat = ScriptedConversations(store, [Reply(text, chunk=5, delay=0.002)])
    window = make_window(conversations=chat)
    send(qtbot, window, "Talk for a long time")
    reply = window.chat.transcript.messages[-1]
    qtbot.waitUntil(lambda: len(reply.content) > 50, timeout=5000)
    # While it streams the box stays editable but Enter does not send.
    window.chat.composer.set_text("next question")
    qtbot.keyClick(window.chat.composer.input, Qt.Key.Key_Return)
    assert len(chat.sent) == 1
    qtbot.keyClick(window, Qt.Key.Key_Escape)
    settle_window(qtbot, window)
    assert 0 < len(reply.content) < len(text)
    assert text.startswith(reply.content)
    assert "Stopped" in reply.note_label.text()
    assert window.chat.composer.text() == "next question"
    assert not window.chat.streaming
    saved = chat.conversations[window.chat.conversation_id].messages[-1]  # type: ignore[index]
    assert saved.stopped and saved.content.startswith(reply.content[:50])


def test_remember_shows_a_notice_and_undo_rejects_the_fact(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    chat = ScriptedConversations(
        store, [Reply("I'll remember that.", steps=(Remember("My sister is called Ana"),))]
    )
    window = make_window(conversations=chat)
    send(qtbot, window, "Remember that my sister is called Ana")
    settle_window(qtbot, window)
    [memory] = store.memories.list(text="sister Ana")
    assert memory.status is MemoryStatus.ACTIVE and memory.source.value == "remember"
    notice = window.chat.transcript.notices[memory.id]
    assert "Remembered:" in notice.text_label.text()
    notice.action_button.click()
    settle_window(qtbot, window)
    assert store.memories.get(memory.id).status is MemoryStatus.REJECTED
    assert "Forgotten:" in notice.text_label.text()
    assert notice.action_button.isHidden()


def test_extracted_facts_reach_the_queue_and_confirming_activates_them(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    chat = ScriptedConversations(
        store, [Reply("Lovely, enjoy the concert!", steps=(Stage(("Likes jazz",)),))]
    )
    window = make_window(conversations=chat)
    send(qtbot, window, "I'm going to a jazz concert tonight")
    settle_window(qtbot, window)
    queue = window.memory_pane.queue
    assert queue is not None
    qtbot.waitUntil(
        lambda: [m.content for m in queue.model.memories] == ["Likes jazz"], timeout=5000
    )
    assert window.memory_pane.tabs.tabText(0) == "To confirm · 1"
    staged = queue.model.memories[0]
    assert staged.session_id == window.chat.conversation_id
    [badge] = window.chat.transcript.column.findChildren(Notice)
    assert badge.text_label.text() == "1 new fact to confirm"
    badge.action_button.click()
    assert window.memory_pane.tabs.currentWidget() is queue
    queue.select_ids([staged.id])
    with qtbot.waitSignal(queue.memory_confirmed, timeout=5000):
        qtbot.keyClick(queue.view, Qt.Key.Key_C)
    assert store.memories.get(staged.id).status is MemoryStatus.ACTIVE
    # The card's link leads back to the conversation it came from.
    assert staged.session_id is not None


def test_memories_used_shows_the_selected_turns_block(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    chat = ScriptedConversations(store)
    older = dict(RECALL, block="<memory>the older turn's block</memory>", tokens=9)
    conversation = chat.add_conversation(
        "Family", [("user", "Who is my sister?"), ("assistant", "Ana.")], recall=older
    )
    window = make_window(conversations=chat)
    window.open_conversation(conversation)
    settle_window(qtbot, window)
    reply = window.chat.transcript.messages[-1]
    window.set_memory_pane_visible(False)
    reply.recall_button.click()
    assert window.memory_pane.isVisible()
    assert window.memory_pane.tabs.currentWidget() is window.memory_pane.recall_view
    view = window.memory_pane.recall_view
    assert view.block_view.toPlainText() == "<memory>the older turn's block</memory>"
    assert view.meter_label.text().startswith("9 of 1,500 tokens")
    assert view.caption.text().startswith("The reply of ")


def test_a_failed_reply_says_why_keeps_the_message_and_can_be_retried(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    chat = ScriptedConversations(
        store,
        [
            Reply("Half a rep", steps=(Fail("The chat model stopped answering."),)),
            Reply("A full reply."),
        ],
    )
    window = make_window(conversations=chat)
    send(qtbot, window, "Hello?")
    settle_window(qtbot, window)
    transcript = window.chat.transcript
    user, reply = transcript.messages
    assert user.content == "Hello?"
    assert reply.note_label.text() == "The chat model stopped answering."
    assert not reply.regenerate_button.isHidden()
    reply.regenerate_button.click()
    settle_window(qtbot, window)
    assert [m.content for m in transcript.messages] == ["Hello?", "A full reply."]


def test_a_provider_error_is_a_sentence_not_a_traceback(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    error = ProviderError("OpenAI refused the API key. Check it in Settings.")
    chat = ScriptedConversations(store, [Reply(raise_error=error)])
    window = make_window(conversations=chat)
    send(qtbot, window, "Hi")
    settle_window(qtbot, window)
    reply = window.chat.transcript.messages[-1]
    assert reply.note_label.text() == "OpenAI refused the API key. Check it in Settings."
    assert "Traceback" not in reply.note_label.text()


def test_without_the_chat_engine_sending_explains(qtbot: QtBot, make_window: WindowFactory) -> None:
    window = make_window(conversations=NoConversations())  # type: ignore[arg-type]
    send(qtbot, window, "Hello")
    settle_window(qtbot, window)
    reply = window.chat.transcript.messages[-1]
    assert "chat engine" in reply.note_label.text()


def test_window_state_is_restored(qtbot: QtBot, make_window: WindowFactory, store: Store) -> None:
    chat = ScriptedConversations(store)
    first_id = chat.add_conversation("Recipes", [("user", "Pasta?"), ("assistant", "Yes.")])
    chat.add_conversation("Travel", [("user", "Lisbon?"), ("assistant", "Lovely.")])
    window = make_window(conversations=chat)
    window.resize(790, 700)
    window.set_memory_pane_visible(False)
    window.splitter.setSizes([320, 470, 0])
    sizes = window.splitter.sizes()
    assert sizes[0] == 320
    window.open_conversation(first_id)
    settle_window(qtbot, window)
    window.close()

    again = make_window(conversations=chat)
    settle_window(qtbot, again)
    assert (again.width(), again.height()) == (790, 700)
    assert again.memory_pane.isHidden() and not again.memory_action.isChecked()
    assert again.chat.conversation_id == first_id
    assert [m.content for m in again.chat.transcript.messages] == ["Pasta?", "Yes."]
    restored = again.splitter.sizes()
    assert restored[0] == sizes[0] and abs(restored[1] - sizes[1]) <= 2  # splitter handles


def test_shortcuts(qtbot: QtBot, make_window: WindowFactory, store: Store) -> None:
    chat = ScriptedConversations(store)
    conversation = chat.add_conversation("Notes", [("user", "a"), ("assistant", "b")])
    window = make_window(conversations=chat)
    window.activateWindow()
    qtbot.keyClick(
        window,
        Qt.Key.Key_M,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    browser = window.memory_pane.browser
    assert browser is not None
    assert window.memory_pane.tabs.currentWidget() is browser
    qtbot.waitUntil(browser.search.hasFocus, timeout=2000)
    qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(window.sidebar.search.hasFocus, timeout=2000)
    window.open_conversation(conversation)
    settle_window(qtbot, window)
    qtbot.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
    assert window.chat.conversation_id is None and window.chat.title_label.text() == "New chat"
    qtbot.keyClick(window, Qt.Key.Key_Comma, Qt.KeyboardModifier.ControlModifier)
    assert window.settings_dialog is not None and window.settings_dialog.isVisible()
    window.settings_dialog.reject()


def test_delete_moves_to_the_bin_and_undo_restores(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    chat = ScriptedConversations(store)
    keep = chat.add_conversation("Keep me", [("user", "x"), ("assistant", "y")])
    window = make_window(conversations=chat)
    window.open_conversation(keep)
    settle_window(qtbot, window)
    window.sidebar.delete(keep)
    settle_window(qtbot, window)
    assert window.sidebar.model.conversations() == []
    assert chat.deleted == [keep]
    assert window.chat.conversation_id is None, "the open conversation was closed"
    assert window.banner.isVisible() and window.banner.action_button.text() == "Undo"
    window.banner.action_button.click()
    settle_window(qtbot, window)
    assert [c.id for c in window.sidebar.model.conversations()] == [keep]
    assert chat.deleted == []


def test_conversation_search_filters_the_list(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    chat = ScriptedConversations(store)
    chat.add_conversation("Garden plans", [("user", "tomatoes"), ("assistant", "water them")])
    chat.add_conversation("Trip", [("user", "trains to Porto"), ("assistant", "yes")])
    window = make_window(conversations=chat)
    settle_window(qtbot, window)
    assert len(window.sidebar.model.conversations()) == 2
    window.sidebar.search.setText("porto")
    qtbot.waitUntil(lambda: len(window.sidebar.model.conversations()) == 1, timeout=5000)
    [found] = window.sidebar.model.conversations()
    assert found.title == "Trip" and found.snippet == "trains to Porto"


def test_the_window_stays_responsive_while_a_slow_provider_streams(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    paragraph = (
        "Here is some **bold** text and `code`, then a list:\n\n- one\n- two\n\n"
        "```python\nfor i in range(10):\n    print(i)\n```\n\n"
    )
    text = paragraph * 40  # ~4 KB of Markdown, re-rendered as it grows
    chat = ScriptedConversations(store, [Reply(text, chunk=3, delay=0.0008)])
    window = make_window(conversations=chat)
    gaps: list[int] = []
    clock = QElapsedTimer()
    ticker = QTimer()
    ticker.setInterval(10)
    last = [0]

    def tick() -> None:
        gaps.append(clock.elapsed() - last[0])
        last[0] = clock.elapsed()

    ticker.timeout.connect(tick)
    quiet_gui_thread()
    clock.start()
    ticker.start()
    send(qtbot, window, "Stream a lot")
    settle_window(qtbot, window)
    ticker.stop()
    reply = window.chat.transcript.messages[-1]
    assert reply.content == text
    assert len(gaps) > 20, "the stream was too short to measure"
    worst = max(gaps[1:])
    assert worst < 100, f"the GUI thread stalled for {worst} ms while streaming"


def test_closing_during_a_stream_stops_it_cleanly(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    gate = threading.Event()
    chat = ScriptedConversations(store, [Reply("never finished", steps=(Hold(gate),))])
    window = make_window(conversations=chat)
    send(qtbot, window, "Wait forever")
    assert window.chat.streaming
    window.close()
    # Closing cancelled the stream, so its worker finished without the gate opening.
    assert window.network.wait(5000)
    assert not gate.is_set()
    [conversation] = chat.conversations.values()
    assert conversation.messages[-1].role == "assistant" and conversation.messages[-1].stopped
