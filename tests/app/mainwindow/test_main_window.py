"""The real window with the real chat engine, driven end to end against the fake OpenAI server
(the real `openai` client over HTTP on 127.0.0.1): first run, a streamed turn, stop,
remember + undo, extracted facts into the queue, edit-then-confirm into a chain, "what the
model saw", failures, a provider that cannot be built, compaction, state restored, shortcuts,
deletes, and the GUI thread's latency while a slow model streams.
"""

from __future__ import annotations

import json
import time
from datetime import timedelta

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QAccessible
from PySide6.QtWidgets import QAbstractButton, QApplication, QLineEdit
from pytestqt.qtbot import QtBot

from app.chat.local_servers import find_local_servers
from app.mainwindow.main_window import MainWindow
from app.transcript.notice import Notice
from tests.app.conftest import (
    WindowFactory,
    chat_settings,
    quiet_gui_thread,
    settle,
    settle_engine,
)
from tests.app.model_server import model_server
from tests.fakes.openai_server import OpenAIServer
from tests.fakes.script import call
from timothy.chat.engine import MAX_REPLY_CHARS, TOO_LONG_REPLY
from timothy.chat.events import ReplyDelta, ToolStarted
from timothy.chat.settings import ChatSettings
from timothy.memory.consolidation import consolidate
from timothy.settings import OpenAISettings, Settings, load_settings
from timothy.store import MemoryStatus, Store
from timothy.store.records import MessageRole, MessageStatus, utc_now

MARKDOWN_REPLY = (
    "Sure. Here is a function:\n\n"
    "```python\n"
    "def greet(name: str) -> str:\n"
    "    return f'Hello, {name}!'\n"
    "```\n\n"
    "Call it with **any** name."
)
NO_FACTS = json.dumps({"facts": []})


def facts(*contents: str) -> str:
    return json.dumps(
        {
            "facts": [
                {"content": content, "type": "preference", "entities": [], "confidence": 0.9}
                for content in contents
            ]
        }
    )


def settle_window(qtbot: QtBot, window: MainWindow) -> None:
    qtbot.waitUntil(lambda: not window.chat.streaming, timeout=10_000)
    settle(qtbot, window.workers, window.network)


def send(qtbot: QtBot, window: MainWindow, text: str) -> None:
    window.chat.composer.input.setFocus()
    window.chat.composer.set_text(text)
    qtbot.keyClick(window.chat.composer.input, Qt.Key.Key_Return)


def turn(
    qtbot: QtBot,
    window: MainWindow,
    server: OpenAIServer,
    text: str,
    reply: str,
    *,
    title: str | None = None,
    extracted: str = NO_FACTS,
) -> None:
    """One whole turn: the reply, the title (first turn), extraction; all answered and shown."""
    server.reply(reply)
    if title is not None:
        server.reply(title)
    server.reply(extracted)
    send(qtbot, window, text)
    settle_window(qtbot, window)
    settle_engine(qtbot, window)


def stream_requests(server: OpenAIServer) -> list[dict[str, object]]:
    return [r for r in server.chat_requests if r.get("stream")]


# -- first run -------------------------------------------------------------------------


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
        assistant = window.assistant
        assert assistant is not None and assistant.chat is None
        with qtbot.waitSignal(assistant.configured, timeout=5000):
            welcome.local_button.click()
    saved = load_settings()
    assert saved.chat_provider == "openai"
    assert saved.openai.base_url == base_url and saved.openai.chat_model == "llama3.2"
    # A provider now exists: the chat area is ready.
    assert assistant.chat is not None and assistant.chat.model == "llama3.2"
    assert window.chat.stack.currentWidget() is window.chat.blank
    assert not window.chat.composer.isHidden()
    assert window.status.chat_label.text().endswith("· llama3.2")


def test_the_welcome_is_built_only_when_there_is_no_chat_model(
    qtbot: QtBot, make_window: WindowFactory, openai_server: OpenAIServer
) -> None:
    window = make_window(settings=chat_settings(openai_server))
    settle_window(qtbot, window)
    assert window.chat.stack.currentWidget() is window.chat.blank
    assert not window.chat.welcome_built()  # the window's start did not pay for it
    window.apply_settings(Settings())  # the chat model is taken away
    assert window.chat.welcome_built()
    assert window.chat.stack.currentWidget() is window.chat.welcome
    assert window.chat.composer.isHidden()
    assert not window.chat.welcome.settings_button.isHidden()


def test_the_keyboard_focus_goes_where_the_owner_acts_next(
    qtbot: QtBot, make_window: WindowFactory, openai_server: OpenAIServer
) -> None:
    """The bug: on the first window the focus fell on the memory pane's Hide button (the
    composer it was on was hidden), so Space hid the pane."""
    window = make_window(settings=Settings())
    settle_window(qtbot, window)
    welcome = window.chat.welcome
    qtbot.waitUntil(lambda: QApplication.focusWidget() is welcome.settings_button, timeout=5000)
    assistant = window.assistant
    assert assistant is not None
    with qtbot.waitSignal(assistant.configured, timeout=5000):
        window.apply_settings(chat_settings(openai_server))  # a chat model is set up
    composer = window.chat.composer.input
    qtbot.waitUntil(lambda: QApplication.focusWidget() is composer, timeout=5000)
    assert not window.chat.composer.hint.isHidden()  # "Enter to send", now that it can
    window.apply_settings(Settings())  # and taken away again
    qtbot.waitUntil(lambda: QApplication.focusWidget() is welcome.settings_button, timeout=5000)


def test_first_run_lets_the_owner_pick_the_local_servers_model(
    qtbot: QtBot, make_window: WindowFactory
) -> None:
    with model_server(["llama3.2", "qwen2.5:7b", "mistral"]) as base_url:
        port = int(base_url.split(":")[2].split("/")[0])
        window = make_window(
            settings=Settings(), probe=lambda: find_local_servers((("LM Studio", port),))
        )
        settle_window(qtbot, window)
        welcome = window.chat.welcome
        models = welcome.local_models
        assert not models.isHidden()
        assert [models.itemText(i) for i in range(models.count())] == [
            "llama3.2",
            "qwen2.5:7b",
            "mistral",
        ]
        models.setCurrentIndex(1)
        assert welcome.local_button.text() == "Use qwen2.5:7b"
        assistant = window.assistant
        assert assistant is not None
        with qtbot.waitSignal(assistant.configured, timeout=5000):
            welcome.local_button.click()
    saved = load_settings()
    assert saved.openai.base_url == base_url and saved.openai.chat_model == "qwen2.5:7b"
    assert assistant.chat is not None and assistant.chat.model == "qwen2.5:7b"


def test_the_header_model_picker_offers_the_servers_models_and_switches(
    qtbot: QtBot, make_window: WindowFactory, openai_server: OpenAIServer
) -> None:
    openai_server.models = ["llama3.2", "qwen2.5:7b", "nomic-embed-text"]
    window = make_window(
        settings=chat_settings(openai_server).replace(
            openai=openai_server.settings(chat_model="llama3.2")
        )
    )
    picker = window.chat.model_picker
    qtbot.waitUntil(lambda: picker.models() == ["llama3.2", "qwen2.5:7b"], timeout=5000)
    assert picker.isVisible() and picker.currentText() == "llama3.2"
    assistant = window.assistant
    assert assistant is not None
    picker.setFocus()
    with qtbot.waitSignal(assistant.configured, timeout=5000):
        qtbot.keyClick(picker, Qt.Key.Key_Down)  # the owner picks the next model
    assert load_settings().openai.chat_model == "qwen2.5:7b"
    assert window.status.chat_label.text().endswith("· qwen2.5:7b")
    turn(qtbot, window, openai_server, "Hello", "Hi!", title="Greeting")
    assert stream_requests(openai_server)[-1]["model"] == "qwen2.5:7b"
    qtbot.waitUntil(lambda: picker.currentText() == "qwen2.5:7b", timeout=5000)


def test_first_run_settings_button_opens_settings(qtbot: QtBot, make_window: WindowFactory) -> None:
    window = make_window(settings=Settings())
    window.chat.welcome.settings_button.click()
    assert window.settings_dialog is not None and window.settings_dialog.isVisible()
    window.settings_dialog.reject()


def test_a_provider_that_cannot_be_built_says_so_and_memory_keeps_working(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    fact = store.memories.stage("Works from home on Fridays")
    # OpenAI itself, with no key anywhere: the provider cannot be made.
    window = make_window(settings=Settings(chat_provider="openai", openai=OpenAISettings()))
    settle_window(qtbot, window)
    assert window.banner.isVisible()
    assert window.banner.text_label.text().startswith("The chat model cannot be used: No OpenAI")
    assert "Traceback" not in window.banner.text_label.text()
    assert window.banner.action_button.text() == "Settings"
    assert window.status.chat_label.text() == "OpenAI · gpt-4o-mini · not set up"
    assert window.chat.stack.currentWidget() is window.chat.welcome
    # The memory side works without any chat model.
    queue = window.memory_pane.queue
    assert queue is not None
    assert [m.id for m in queue.model.memories] == [fact.id]
    queue.select_ids([fact.id])
    queue.buttons["confirm"].click()
    settle_window(qtbot, window)
    assert store.memories.get(fact.id).status is MemoryStatus.ACTIVE
    qtbot.waitUntil(
        lambda: window.status.memory_label.text() == "1 active · 1 in all", timeout=5000
    )
    window.banner.action_button.click()
    assert window.settings_dialog is not None and window.settings_dialog.isVisible()
    window.settings_dialog.reject()


def test_settings_rebuild_the_engine_and_the_key_lands_only_in_the_keyring(
    qtbot: QtBot, make_window: WindowFactory, openai_server: OpenAIServer, isolated_env: object
) -> None:
    secret = "sk-test-window-7a6b5c4d-DO-NOT-LEAK"
    openai_server.api_key = secret
    window = make_window(settings=Settings())
    assert window.chat.stack.currentWidget() is window.chat.welcome
    dialog = window.open_settings()
    dialog.provider_combo.setCurrentIndex(dialog.provider_combo.findData("openai"))
    dialog.base_url_edit.setText(openai_server.base_url)
    dialog.openai_model.setCurrentText("gpt-4o-mini")
    dialog.key_edit.setText(secret)
    # Test connection tries the typed key before it is saved.
    dialog.test_button.click()
    qtbot.waitUntil(lambda: dialog.test_result.text() != "Testing…", timeout=10_000)
    assert dialog.test_result.text().startswith("✓ Connected: gpt-4o-mini answered in ")
    assistant = window.assistant
    assert assistant is not None
    with qtbot.waitSignal(assistant.configured, timeout=10_000):
        dialog.buttons.button(dialog.buttons.StandardButton.Save).click()
    assert load_settings().openai.base_url == openai_server.base_url
    assert window.chat.stack.currentWidget() is window.chat.blank
    # The rebuilt engine answers with the key from the keyring.
    turn(qtbot, window, openai_server, "Hello there", "Hi!", title="Greeting")
    assert window.chat.transcript.messages[-1].content == "Hi!"
    assert openai_server.requests[-1].headers["authorization"] == f"Bearer {secret}"
    home = isolated_env
    assert secret in (home / "keyring.json").read_text(encoding="utf-8")  # type: ignore[operator]
    for folder in ("config", "data", "cache", "logs"):
        for path in (home / folder).rglob("*"):  # type: ignore[operator]
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), f"the key leaked into {path}"


# -- a turn ----------------------------------------------------------------------------


def test_a_streamed_markdown_reply_is_rendered_with_what_the_model_saw(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    store.memories.add("Sister is called Ana", entities=["Ana"])
    window = make_window(server=openai_server)
    deltas: list[str] = []
    window.chat.runner.event_arrived.connect(
        lambda event: deltas.append(event.text) if isinstance(event, ReplyDelta) else None
    )
    openai_server.reply(MARKDOWN_REPLY, interval=0.005)
    openai_server.reply("Greeting function for Ana")  # the title
    openai_server.reply(NO_FACTS)  # extraction
    send(qtbot, window, "Write a greeting function for my sister Ana")
    assert window.chat.streaming
    assert window.chat.composer.button.toolTip() == "Stop the reply (Esc)"
    settle_window(qtbot, window)
    transcript = window.chat.transcript
    user, reply = transcript.messages
    assert user.role == "user" and user.content == "Write a greeting function for my sister Ana"
    assert reply.role == "assistant" and reply.content == MARKDOWN_REPLY
    assert len(deltas) > 10 and "".join(deltas) == MARKDOWN_REPLY  # it streamed, piece by piece
    code = reply.markdown.code_blocks()
    assert len(code) == 1 and code[0].code.startswith("def greet")
    assert reply.note_label.isHidden()
    assert window.chat.composer.button.toolTip() == "Send (Enter)"
    # Stored under the widgets' ids, as the engine saved them.
    session_id = window.chat.conversation_id
    assert session_id is not None
    stored = [m for m in store.sessions.messages(session_id) if m.role is not MessageRole.TOOL]
    assert [m.id for m in stored] == [user.message_id, reply.message_id]
    # The new conversation is listed, selected, and gets the model's title.
    settle_engine(qtbot, window)
    qtbot.waitUntil(
        lambda: window.chat.title_label.text() == "Greeting function for Ana", timeout=5000
    )
    qtbot.waitUntil(
        lambda: (
            [c.title for c in window.sidebar.model.conversations()] == ["Greeting function for Ana"]
        ),
        timeout=5000,
    )
    assert window.sidebar.model.conversations()[0].id == session_id
    # Last recall shows the block the provider received.
    system = stream_requests(openai_server)[0]["messages"][0]["content"]  # type: ignore[index]
    block = stored[1].memory_block
    assert block and "Sister is called Ana" in block and system.endswith(block)
    view = window.memory_pane.recall_view
    assert view.block_view.toPlainText() == block
    assert reply.recall_button.text() == "1 memory used"


def test_shift_enter_adds_a_line_and_enter_sends(
    qtbot: QtBot, make_window: WindowFactory, openai_server: OpenAIServer
) -> None:
    window = make_window(server=openai_server)
    box = window.chat.composer.input
    box.setFocus()
    qtbot.keyClicks(box, "first")
    qtbot.keyClick(box, Qt.Key.Key_Return, Qt.KeyboardModifier.ShiftModifier)
    qtbot.keyClicks(box, "second")
    assert box.toPlainText() == "first\nsecond"
    assert openai_server.chat_requests == []
    openai_server.reply("Two lines received.")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    settle_window(qtbot, window)
    settle_engine(qtbot, window)
    [request] = stream_requests(openai_server)
    assert request["messages"][-1] == {"role": "user", "content": "first\nsecond"}  # type: ignore[index]
    assert box.toPlainText() == ""


def test_stop_mid_stream_keeps_what_arrived(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    text = "word " * 400
    openai_server.stall(text, after=30)  # 30 words, then silence until the client hangs up
    window = make_window(server=openai_server)
    send(qtbot, window, "Talk for a long time")
    reply = window.chat.transcript.messages[-1]
    qtbot.waitUntil(lambda: len(reply.content) >= len("word " * 30), timeout=5000)
    # While it streams the box stays editable but Enter does not send.
    window.chat.composer.set_text("next question")
    qtbot.keyClick(window.chat.composer.input, Qt.Key.Key_Return)
    assert len(stream_requests(openai_server)) == 1
    qtbot.keyClick(window, Qt.Key.Key_Escape)
    settle_window(qtbot, window)
    assert openai_server.wait_for_disconnect(5)  # the stream's connection was closed
    assert reply.content == "word " * 30
    assert "Stopped" in reply.note_label.text()
    assert window.chat.composer.text() == "next question"
    assert not window.chat.streaming
    saved = store.sessions.messages(window.chat.conversation_id or "")[-1]
    assert saved.status is MessageStatus.CANCELLED and saved.content == reply.content
    assert saved.id == reply.message_id


def test_opening_another_conversation_mid_turn_stops_it_and_leaves_the_other_be(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    other = add_conversation(store, "Recipes", [("user", "Pasta?"), ("assistant", "Yes.")])
    openai_server.stall("word " * 200, after=20)
    window = make_window(server=openai_server)
    window.chat.send("Talk for a long time")
    # Before any of the turn's events arrive (its conversation does not exist yet here).
    window.open_conversation(other)
    settle_window(qtbot, window)
    # The turn's late events went nowhere: the opened conversation is the one on screen.
    assert window.chat.conversation_id == other
    assert window.chat.title_label.text() == "Recipes"
    assert [m.content for m in window.chat.transcript.messages] == ["Pasta?", "Yes."]
    assert window.chat.composer.button.toolTip() == "Send (Enter)"
    # The stopped turn was saved in its own new conversation, as cancelled.
    [started] = [s for s in store.sessions.list() if s.id != other]
    kinds = [(m.role, m.status) for m in store.sessions.messages(started.id)]
    assert kinds[0] == (MessageRole.USER, MessageStatus.COMPLETE)
    assert kinds[-1] == (MessageRole.ASSISTANT, MessageStatus.CANCELLED)
    qtbot.waitUntil(lambda: len(window.sidebar.model.conversations()) == 2, timeout=5000)


def test_remember_shows_saving_then_a_notice_and_undo_rejects_the_fact(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    window = make_window(server=openai_server)
    activity: list[str] = []
    reply_widget: list[object] = []

    def seen(event: object) -> None:
        # Connected after the panel's own slot: this sees what the panel just showed.
        if isinstance(event, ToolStarted):
            widget = window.chat.transcript.reply
            reply_widget.append(widget)
            if widget is not None:
                activity.append(widget.activity_label.text())

    window.chat.runner.event_arrived.connect(seen)
    arguments = {"content": "The owner's sister is called Ana", "entities": ["Ana"]}
    openai_server.reply(tool_calls=[call("remember", arguments)])
    openai_server.reply("I'll remember that.")
    openai_server.reply("Sister's name")
    openai_server.reply(NO_FACTS)
    send(qtbot, window, "Remember that my sister is called Ana")
    settle_window(qtbot, window)
    assert activity == ["Saving to memory…"]
    [memory] = store.memories.list(text="sister Ana")
    assert memory.status is MemoryStatus.ACTIVE and memory.source.value == "remember"
    # The model got the tool result in the next round.
    second = stream_requests(openai_server)[1]["messages"]
    assert any(m["role"] == "tool" and memory.id in m["content"] for m in second)  # type: ignore[union-attr, index]
    notice = window.chat.transcript.notices[memory.id]
    assert "Remembered:" in notice.text_label.text()
    assert window.chat.transcript.messages[-1].content == "I'll remember that."
    notice.action_button.click()
    settle_window(qtbot, window)
    assert store.memories.get(memory.id).status is MemoryStatus.REJECTED
    assert "Rejected:" in notice.text_label.text()
    assert notice.action_button.isHidden()
    # Reopened later, the conversation still shows what was remembered, and that it was undone.
    settle_engine(qtbot, window)
    conversation = window.chat.conversation_id
    assert conversation is not None
    window.new_chat()
    window.open_conversation(conversation)
    settle_window(qtbot, window)
    again = window.chat.transcript.notices[memory.id]
    assert "Rejected:" in again.text_label.text()


def test_regenerate_replaces_the_reply_and_its_notices(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    window = make_window(server=openai_server)
    openai_server.reply(tool_calls=[call("remember", {"content": "Has a cat called Miso"})])
    openai_server.reply("Noted: Miso.")
    openai_server.reply("Miso")
    openai_server.reply(NO_FACTS)
    send(qtbot, window, "Remember my cat is called Miso")
    settle_window(qtbot, window)
    settle_engine(qtbot, window)
    transcript = window.chat.transcript
    [memory] = store.memories.list(text="Miso")
    assert memory.id in transcript.notices
    openai_server.reply("Miso is a lovely name.")
    openai_server.reply(NO_FACTS)
    transcript.messages[-1].regenerate_button.click()
    settle_window(qtbot, window)
    settle_engine(qtbot, window)
    assert [m.content for m in transcript.messages] == [
        "Remember my cat is called Miso",
        "Miso is a lovely name.",
    ]
    assert transcript.notices == {}
    quiet_gui_thread()  # the removed widgets are deleted
    assert transcript.column.findChildren(Notice) == []
    assert store.memories.get(memory.id).status is MemoryStatus.ACTIVE  # still remembered
    shown = window.conversations.messages(window.chat.conversation_id or "")
    assert [(m.role, m.content) for m in shown][-1] == ("assistant", "Miso is a lovely name.")


def test_ask_before_saving_stages_the_remembered_fact(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    from timothy.settings import MemoryPolicySettings

    settings = chat_settings(openai_server, memory=MemoryPolicySettings(ask_before_saving=True))
    window = make_window(settings=settings)
    openai_server.reply(tool_calls=[call("remember", {"content": "Allergic to peanuts"})])
    openai_server.reply("Noted, once you confirm it.")
    send(qtbot, window, "Remember I'm allergic to peanuts")
    settle_window(qtbot, window)
    [memory] = store.memories.list(text="peanuts")
    assert memory.status is MemoryStatus.STAGED
    notice = window.chat.transcript.notices[memory.id]
    assert "Saved for your review:" in notice.text_label.text()
    queue = window.memory_pane.queue
    assert queue is not None
    qtbot.waitUntil(lambda: [m.id for m in queue.model.memories] == [memory.id], timeout=5000)


def test_extracted_facts_reach_the_queue_and_confirming_activates_them(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    window = make_window(server=openai_server)
    turn(
        qtbot,
        window,
        openai_server,
        "I'm going to a jazz concert tonight, I love jazz",
        "Lovely, enjoy the concert!",
        title="Jazz concert",
        extracted=facts("The owner loves jazz"),
    )
    queue = window.memory_pane.queue
    assert queue is not None
    qtbot.waitUntil(
        lambda: [m.content for m in queue.model.memories] == ["The owner loves jazz"],
        timeout=5000,
    )
    assert window.memory_pane.tabs.tabText(0) == "To confirm · 1"
    staged = queue.model.memories[0]
    assert staged.status is MemoryStatus.STAGED
    assert staged.session_id == window.chat.conversation_id
    qtbot.waitUntil(lambda: "1 to confirm" in window.status.memory_label.text(), timeout=5000)
    [badge] = [
        n
        for n in window.chat.transcript.column.findChildren(Notice)
        if "to confirm" in n.text_label.text()
    ]
    assert badge.text_label.text() == "1 new fact to confirm"
    badge.action_button.click()
    assert window.memory_pane.tabs.currentWidget() is queue
    queue.select_ids([staged.id])
    with qtbot.waitSignal(queue.memory_actions.memory_confirmed, timeout=5000):
        qtbot.keyClick(queue.view, Qt.Key.Key_C)
    assert store.memories.get(staged.id).status is MemoryStatus.ACTIVE
    qtbot.waitUntil(lambda: queue.model.memories == [], timeout=5000)


def staged_badge(window: MainWindow) -> Notice:
    [badge] = [
        notice
        for notice in window.chat.transcript.column.findChildren(Notice)
        if "new fact" in notice.text_label.text()
    ]
    return badge


def test_the_facts_to_confirm_notice_counts_down_as_they_are_reviewed(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    window = make_window(server=openai_server)
    turn(
        qtbot,
        window,
        openai_server,
        "I drink green tea every morning in Porto, and I cycle to work",
        "Noted.",
        title="Mornings",
        extracted=facts("Drinks green tea", "Lives in Porto", "Cycles to work"),
    )
    queue = window.memory_pane.queue
    assert queue is not None
    qtbot.waitUntil(lambda: len(queue.model.memories) == 3, timeout=5000)
    badge = staged_badge(window)
    assert badge.text_label.text() == "3 new facts to confirm"
    by_content = {memory.content: memory for memory in queue.model.memories}
    window.show_queue()

    queue.select_ids([by_content["Drinks green tea"].id])
    qtbot.keyClick(queue.view, Qt.Key.Key_C)
    qtbot.waitUntil(
        lambda: badge.text_label.text() == "2 of 3 new facts still to confirm", timeout=5000
    )
    assert not badge.action_button.isHidden()

    qtbot.waitUntil(lambda: len(queue.model.memories) == 2, timeout=5000)
    queue.select_ids([by_content["Lives in Porto"].id])
    queue.open_editor()
    editor = queue.editor
    assert editor is not None
    editor.content_edit.setPlainText("Lives in Porto, Portugal")
    editor.buttons.button(editor.buttons.StandardButton.Save).click()
    qtbot.waitUntil(
        lambda: badge.text_label.text() == "1 of 3 new facts still to confirm", timeout=5000
    )

    qtbot.waitUntil(lambda: len(queue.model.memories) == 1, timeout=5000)
    queue.select_ids([by_content["Cycles to work"].id])
    queue.buttons["reject"].click()
    qtbot.waitUntil(lambda: badge.text_label.text() == "3 new facts reviewed", timeout=5000)
    assert badge.action_button.isHidden()  # no Review of an empty queue
    statuses = {m.content: m.status for m in store.memories.list(limit=10)}
    assert statuses["Drinks green tea"] is MemoryStatus.ACTIVE
    assert statuses["Lives in Porto, Portugal"] is MemoryStatus.ACTIVE
    assert statuses["Cycles to work"] is MemoryStatus.REJECTED


def test_edit_then_confirm_creates_a_chain_visible_in_browse(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    window = make_window(server=openai_server)
    turn(
        qtbot,
        window,
        openai_server,
        "I usually book aisle seats",
        "Noted.",
        title="Seats",
        extracted=facts("The owner prefers aisle seats"),
    )
    queue = window.memory_pane.queue
    assert queue is not None
    qtbot.waitUntil(lambda: len(queue.model.memories) == 1, timeout=5000)
    proposal = queue.model.memories[0]
    window.show_queue()
    queue.select_ids([proposal.id])
    qtbot.keyClick(queue.view, Qt.Key.Key_E)
    editor = queue.editor
    assert editor is not None and editor.isVisible()
    editor.content_edit.setPlainText("The owner prefers aisle seats on long flights")
    with qtbot.waitSignal(queue.memory_actions.memory_superseded, timeout=5000) as superseded:
        editor.buttons.button(editor.buttons.StandardButton.Save).click()
    new = superseded.args[0]
    assert new.status is MemoryStatus.ACTIVE and new.supersedes == proposal.id
    browser = window.memory_pane.browser
    assert browser is not None
    with qtbot.waitSignal(browser.detail.chain_shown, timeout=5000) as shown:
        window.memory_pane.show_memory(new.id)
    assert window.memory_pane.tabs.currentWidget() is browser
    assert [m.id for m in shown.args[0]] == [proposal.id, new.id]
    text = browser.detail.chain_view.toPlainText()
    assert text.index("The owner prefers aisle seats\n") < text.index(
        "The owner prefers aisle seats on long flights\n"
    )
    assert "superseded" in text and "version 2 of 2 · current" in text


def test_last_recall_shows_the_block_of_the_selected_turn(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    store.memories.add("Ana lives in Lyon", entities=["Ana"])
    store.memories.add("Bruno is a baker", entities=["Bruno"])
    window = make_window(server=openai_server)
    turn(qtbot, window, openai_server, "Where does Ana live?", "In Lyon.", title="Ana")
    turn(qtbot, window, openai_server, "And what does Bruno do?", "He bakes.")
    first, second = [w for w in window.chat.transcript.messages if w.role == "assistant"]
    view = window.memory_pane.recall_view
    assert "Bruno is a baker" in view.block_view.toPlainText()  # the latest turn's
    window.set_memory_pane_visible(False)
    first.recall_button.click()
    assert window.memory_pane.isVisible()
    assert window.memory_pane.tabs.currentWidget() is view
    block = view.block_view.toPlainText()
    assert "Ana lives in Lyon" in block and "Bruno" not in block
    stored = store.sessions.message(first.message_id or "")
    assert block == stored.memory_block
    assert stored.recall is not None
    tokens, budget = stored.recall.tokens, window.settings.recall.token_budget
    assert view.meter_label.text().startswith(f"{tokens} of {budget:,} tokens")
    assert view.caption.text().startswith("The reply of ")
    second.recall_button.click()
    assert "Bruno is a baker" in view.block_view.toPlainText()


def test_a_reply_failing_midway_says_why_keeps_the_message_and_can_be_retried(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    window = make_window(server=openai_server)
    openai_server.fail_midstream("server_error", text="Half a rep", message="Overloaded.")
    send(qtbot, window, "Hello?")
    settle_window(qtbot, window)
    transcript = window.chat.transcript
    user, reply = transcript.messages
    assert user.content == "Hello?"
    assert reply.content == "Half a rep"
    assert reply.note_label.text() and "Traceback" not in reply.note_label.text()
    assert not reply.regenerate_button.isHidden()
    session = window.chat.conversation_id or ""
    assert store.sessions.messages(session)[0].content == "Hello?"
    openai_server.reply("A full reply.")
    reply.regenerate_button.click()
    settle_window(qtbot, window)
    settle_engine(qtbot, window)
    assert [m.content for m in transcript.messages] == ["Hello?", "A full reply."]
    shown = [(m.role, m.content) for m in window.conversations.messages(session)]
    assert shown == [("user", "Hello?"), ("assistant", "A full reply.")]


def test_a_refused_key_is_a_sentence_not_a_traceback(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    window = make_window(server=openai_server)
    openai_server.fail(401)
    send(qtbot, window, "Hi")
    settle_window(qtbot, window)
    reply = window.chat.transcript.messages[-1]
    assert "key" in reply.note_label.text().lower()
    assert "Traceback" not in reply.note_label.text()
    [saved] = store.sessions.messages(window.chat.conversation_id or "")
    assert saved.content == "Hi"  # the owner's message is kept


def test_compaction_shows_a_divider_that_opens_to_the_summary(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    chat = ChatSettings(context_window_tokens=600, compact_at_share=0.5, keep_recent_messages=2)
    window = make_window(settings=chat_settings(openai_server, chat=chat))
    long_reply = "Here is a long answer. " * 30  # ~180 tokens each
    turn(qtbot, window, openai_server, "Tell me about Porto", long_reply, title="Porto")
    turn(qtbot, window, openai_server, "And about Lisbon?", long_reply)
    # The third turn passes the threshold: extraction over the older turns, the summary,
    # then the reply, then this turn's own extraction.
    openai_server.reply(NO_FACTS)
    openai_server.reply("The owner asked about Porto and Lisbon.")
    turn(qtbot, window, openai_server, "Which is cheaper?", "Porto, usually.")
    transcript = window.chat.transcript
    qtbot.waitUntil(lambda: len(transcript.dividers) == 1, timeout=5000)
    [divider] = transcript.dividers
    assert "summarised for the model" in divider.label.text()
    assert not divider.expanded
    divider.toggle.click()
    assert divider.expanded
    assert divider.summary_label.text() == "The owner asked about Porto and Lisbon."
    # Every message is still shown; the divider sits right after the summarised turns (the
    # first exchange: the newest turns stay verbatim), not between a question and its reply.
    conversation = window.chat.conversation_id or ""
    compacted = [m.id for m in store.sessions.messages(conversation) if m.compacted_by]
    assert len(compacted) == 2
    assert [m.role for m in transcript.messages] == ["user", "assistant"] * 3
    assert [m.message_id for m in transcript.messages[:2]] == compacted
    layout = transcript.column_layout
    assert layout.indexOf(divider) == layout.indexOf(transcript.messages[1]) + 1
    label = divider.label.text()
    assert label == "2 earlier messages summarised for the model"
    # Reopened, the divider is in the same place.
    window.new_chat()
    window.open_conversation(conversation)
    settle_window(qtbot, window)
    reopened = window.chat.transcript
    [again] = reopened.dividers
    layout = reopened.column_layout
    assert layout.indexOf(again) == layout.indexOf(reopened.messages[1]) + 1
    assert again.label.text() == label


# -- conversations and the window ------------------------------------------------------


def add_conversation(store: Store, title: str, messages: list[tuple[str, str]]) -> str:
    session = store.sessions.create(title=title)
    for role, text in messages:
        store.sessions.add_message(session.id, role, text)
    return session.id


def test_status_bar_tells_when_consolidation_last_ran(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    window = make_window()
    assert window.status.consolidation_label.text() == "Tidy-up: not run yet"
    consolidate(store, None, now=utc_now() - timedelta(hours=3))
    window.upkeep.refresh_counts()
    settle_window(qtbot, window)
    assert window.status.consolidation_label.text() == "Tidied 3 h ago"


def test_window_state_is_restored(qtbot: QtBot, make_window: WindowFactory, store: Store) -> None:
    first_id = add_conversation(store, "Recipes", [("user", "Pasta?"), ("assistant", "Yes.")])
    add_conversation(store, "Travel", [("user", "Lisbon?"), ("assistant", "Lovely.")])
    window = make_window()
    # Narrower than the three panes' minimums allow: the minimum follows the visible panes.
    window.set_memory_pane_visible(False)
    qtbot.waitUntil(lambda: window.minimumWidth() < 790, timeout=2000)
    window.resize(790, 700)
    window.splitter.setSizes([320, 470, 0])
    sizes = window.splitter.sizes()
    assert sizes[0] == 320
    window.open_conversation(first_id)
    settle_window(qtbot, window)
    window.close()

    again = make_window()
    settle_window(qtbot, again)
    assert (again.width(), again.height()) == (790, 700)
    assert again.memory_pane.isHidden() and not again.menus.memory_action.isChecked()
    assert again.chat.conversation_id == first_id
    assert [m.content for m in again.chat.transcript.messages] == ["Pasta?", "Yes."]
    restored = again.splitter.sizes()
    assert restored[0] == sizes[0] and abs(restored[1] - sizes[1]) <= 2  # splitter handles


def test_shortcuts(qtbot: QtBot, make_window: WindowFactory, store: Store) -> None:
    conversation = add_conversation(store, "Notes", [("user", "a"), ("assistant", "b")])
    window = make_window()
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


def test_view_menu_and_its_shortcuts_toggle_the_panes(
    qtbot: QtBot, make_window: WindowFactory
) -> None:
    window = make_window()
    window.activateWindow()
    menus = window.menus
    panes = (
        (menus.conversations_action, window.sidebar, Qt.KeyboardModifier.ControlModifier),
        (
            menus.memory_action,
            window.memory_pane,
            Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.AltModifier,
        ),
    )
    for action, pane, modifiers in panes:
        assert pane.isVisible() and action.isChecked()
        action.trigger()  # as a click on the View menu's item does
        assert pane.isHidden() and not action.isChecked()
        action.trigger()
        assert pane.isVisible() and action.isChecked()
        qtbot.keyClick(window, Qt.Key.Key_B, modifiers)
        assert pane.isHidden() and not action.isChecked()
        qtbot.keyClick(window, Qt.Key.Key_B, modifiers)
        assert pane.isVisible() and action.isChecked()
    # The header's buttons and the ticks agree.
    window.chat.memory_toggle.click()
    assert window.memory_pane.isHidden() and not menus.memory_action.isChecked()
    menus.memory_action.trigger()
    assert window.memory_pane.isVisible() and menus.memory_action.isChecked()


def test_the_window_title_follows_a_rename(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    chosen = add_conversation(store, "Untitled", [("user", "x"), ("assistant", "y")])
    window = make_window()
    window.open_conversation(chosen)
    settle_window(qtbot, window)
    assert window.windowTitle() == "Untitled — Timothy"
    window.sidebar.conversation_renamed.emit(chosen, "Pasta night")
    settle_window(qtbot, window)
    assert window.windowTitle() == "Pasta night — Timothy"
    window.new_chat()
    assert window.windowTitle() == "Timothy"


def test_a_rename_to_nothing_visible_is_refused_and_the_list_shows_the_title_kept(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    """F2's editor writes through the list's model: a title of zero-width or control
    characters would be a blank row; a long or multi-line one shows as the store keeps it."""
    chosen = add_conversation(store, "Porto trip", [("user", "x"), ("assistant", "y")])
    window = make_window()
    settle_window(qtbot, window)
    model = window.sidebar.model
    row = next(i for i, c in enumerate(model.rows) if not isinstance(c, str) and c.id == chosen)
    for title in ("\u200b", "\u2060 \u200b", "\x1b"):
        assert not model.setData(model.index(row, 0), title)
    settle_window(qtbot, window)
    assert store.sessions.get(chosen).title == "Porto trip"
    assert [c.title for c in model.conversations()] == ["Porto trip"]
    assert model.setData(model.index(row, 0), "Porto\ntrip " + "x" * 300)
    settle_window(qtbot, window)
    kept = store.sessions.get(chosen).title
    assert kept.startswith("Porto trip x") and [c.title for c in model.conversations()] == [kept]


def test_a_turn_that_recalled_nothing_says_so(
    qtbot: QtBot, make_window: WindowFactory, openai_server: OpenAIServer
) -> None:
    window = make_window(server=openai_server)
    turn(qtbot, window, openai_server, "Hello there", "Hi!", title="Greeting")
    [reply] = [w for w in window.chat.transcript.messages if w.role == "assistant"]
    assert reply.recall is not None and reply.recall.items == ()
    assert reply.recall_button.text() == "No memories used"


def test_delete_moves_to_the_bin_and_undo_restores(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    keep = add_conversation(store, "Keep me", [("user", "x"), ("assistant", "y")])
    window = make_window()
    window.open_conversation(keep)
    settle_window(qtbot, window)
    window.sidebar.delete(keep)
    settle_window(qtbot, window)
    assert window.sidebar.model.conversations() == []
    assert store.sessions.get(keep).deleted_at is not None
    assert window.chat.conversation_id is None, "the open conversation was closed"
    assert window.banner.isVisible() and window.banner.action_button.text() == "Undo"
    window.banner.action_button.click()
    settle_window(qtbot, window)
    assert [c.id for c in window.sidebar.model.conversations()] == [keep]
    assert store.sessions.get(keep).deleted_at is None


def test_renaming_in_the_list_renames_the_open_conversation(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    chosen = add_conversation(store, "Untitled", [("user", "x"), ("assistant", "y")])
    window = make_window()
    window.open_conversation(chosen)
    settle_window(qtbot, window)
    window.sidebar.conversation_renamed.emit(chosen, "Pasta night")
    settle_window(qtbot, window)
    assert store.sessions.get(chosen).title == "Pasta night"
    assert window.chat.title_label.text() == "Pasta night"
    assert [c.title for c in window.sidebar.model.conversations()] == ["Pasta night"]


def test_conversation_search_filters_the_list(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    add_conversation(store, "Garden plans", [("user", "tomatoes"), ("assistant", "water them")])
    add_conversation(store, "Trip", [("user", "trains to Porto"), ("assistant", "yes")])
    window = make_window()
    settle_window(qtbot, window)
    assert len(window.sidebar.model.conversations()) == 2
    window.sidebar.search.setText("porto")
    qtbot.waitUntil(lambda: len(window.sidebar.model.conversations()) == 1, timeout=5000)
    [found] = window.sidebar.model.conversations()
    assert found.title == "Trip" and found.snippet == "trains to Porto"


def test_the_chats_search_takes_down_and_escape_as_the_memory_search_does(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    add_conversation(store, "Garden plans", [("user", "tomatoes"), ("assistant", "water them")])
    add_conversation(store, "Trip", [("user", "trains to Porto"), ("assistant", "yes")])
    window = make_window()
    settle_window(qtbot, window)
    sidebar = window.sidebar
    window.focus_conversation_search()
    qtbot.keyClicks(sidebar.search, "zebra")
    qtbot.waitUntil(lambda: sidebar.stack.currentWidget() is sidebar.empty, timeout=5000)
    qtbot.keyClick(sidebar.search, Qt.Key.Key_Escape)  # the search goes, every chat is back
    assert sidebar.search.text() == ""
    qtbot.waitUntil(lambda: len(sidebar.model.conversations()) == 2, timeout=5000)
    qtbot.keyClicks(sidebar.search, "porto")
    qtbot.waitUntil(lambda: len(sidebar.model.conversations()) == 1, timeout=5000)
    qtbot.keyClick(sidebar.search, Qt.Key.Key_Down)  # into the results, onto the first
    assert QApplication.focusWidget() is sidebar.view
    qtbot.waitUntil(lambda: window.chat.title == "Trip", timeout=5000)


def test_escape_empties_the_memory_search_in_the_window(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    """In the window, Escape is also "stop the reply": a search with text keeps it."""
    store.memories.add("Likes green tea")
    window = make_window()
    settle_window(qtbot, window)
    browser = window.memory_pane.browser
    assert browser is not None
    window.focus_memory_search()
    qtbot.keyClicks(browser.search, "zebra")
    qtbot.keyClick(browser.search, Qt.Key.Key_Escape)
    assert browser.search.text() == ""
    assert QApplication.focusWidget() is browser.search


def test_every_button_has_a_name_a_screen_reader_can_say(
    qtbot: QtBot, make_window: WindowFactory, openai_server: OpenAIServer
) -> None:
    """Icon buttons (send, copy, regenerate, the pane toggles) were read as just "button":
    Qt names a button by its text, and they have none."""
    window = make_window(server=openai_server)
    turn(qtbot, window, openai_server, "Hello", "Hi there.", title="Greeting")
    unnamed = []
    for button in window.findChildren(QAbstractButton):
        if not button.isVisible() or isinstance(button.parentWidget(), QLineEdit):
            continue  # hidden, or a search box's own clear button
        face = QAccessible.queryAccessibleInterface(button)
        if face is None or not face.text(QAccessible.Text.Name).strip():
            unnamed.append(button.toolTip() or button.objectName())
    assert unnamed == []
    send = window.chat.composer.button
    assert QAccessible.queryAccessibleInterface(send).text(QAccessible.Text.Name) == "Send"
    toggle = window.chat.conversations_toggle
    face = QAccessible.queryAccessibleInterface(toggle)
    assert face.text(QAccessible.Text.Name) == "Show or hide conversations"
    assert "Ctrl+B" in toggle.toolTip()  # the tooltip still names the keys
    window.banner.show_message("Something to read.", kind="info")
    close = [b for b in window.banner.findChildren(QAbstractButton) if b.toolTip() == "Dismiss"]
    assert [QAccessible.queryAccessibleInterface(b).text(QAccessible.Text.Name) for b in close] == [
        "Dismiss"
    ]


def test_the_window_stays_responsive_while_a_slow_provider_streams(
    qtbot: QtBot, make_window: WindowFactory, openai_server: OpenAIServer
) -> None:
    paragraph = (
        "Here is some **bold** text and `code`, then a list:\n\n- one\n- two\n\n"
        "```python\nfor i in range(10):\n    print(i)\n```\n\n"
    )
    text = paragraph * 40  # ~4 KB of Markdown, re-rendered as it grows
    pieces = [text[i : i + 8] for i in range(0, len(text), 8)]
    window = make_window(server=openai_server)
    openai_server.reply(text, chunks=pieces, interval=0.003)  # a slow model: ~1.5 s
    # Between two 10 ms ticks, the wall clock also counts time the scheduler gave to other
    # processes (on a loaded machine, 100 ms and more); the GUI thread's own CPU time counts
    # only the work the window did: our slots, layout and painting.
    gaps: list[float] = []  # wall-clock ms between ticks (a figure; the scheduler's share too)
    work: list[float] = []  # the GUI thread's CPU ms between ticks (what the window did)
    last = [0.0, 0.0]
    ticker = QTimer()
    ticker.setInterval(10)

    def tick() -> None:
        wall, cpu = time.perf_counter(), time.thread_time()
        gaps.append((wall - last[0]) * 1000)
        work.append((cpu - last[1]) * 1000)
        last[:] = [wall, cpu]

    ticker.timeout.connect(tick)
    quiet_gui_thread()
    last[:] = [time.perf_counter(), time.thread_time()]
    ticker.start()
    send(qtbot, window, "Stream a lot")
    settle_window(qtbot, window)
    ticker.stop()
    reply = window.chat.transcript.messages[-1]
    assert reply.content == text
    assert window.chat.transcript.flushes > 5, "the reply was painted as it arrived"
    assert len(gaps) > 50, "the stream was too short to measure, or the GUI thread was blocked"
    worst = max(work[1:])
    print(
        f"longest GUI-thread work between 10 ms ticks while streaming: {worst:.1f} ms; "
        f"longest wall-clock gap: {max(gaps[1:]):.1f} ms ({len(gaps)} ticks)"
    )
    assert worst < 100, f"the GUI thread worked {worst:.1f} ms without a break while streaming"


def test_a_reply_of_megabytes_is_cut_off_and_never_holds_the_window(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    # A server that ignores max_tokens: 2 MB of Markdown paragraphs, in deltas of 2,000.
    text = "Some words of a long reply, with **bold** and `code`.\n\n" * 40_000
    window = make_window(server=openai_server)
    openai_server.reply(text, chunks=[text[i : i + 2_000] for i in range(0, len(text), 2_000)])
    work: list[float] = []  # the GUI thread's CPU ms between 10 ms ticks
    last = [0.0]
    ticker = QTimer()
    ticker.setInterval(10)

    def tick() -> None:
        cpu = time.thread_time()
        work.append((cpu - last[0]) * 1000)
        last[0] = cpu

    ticker.timeout.connect(tick)
    quiet_gui_thread()
    last[0] = time.thread_time()
    ticker.start()
    send(qtbot, window, "Say a lot")
    settle_window(qtbot, window)
    ticker.stop()
    reply = window.chat.transcript.messages[-1]
    assert len(reply.content) == MAX_REPLY_CHARS
    assert reply.note_label.text() == TOO_LONG_REPLY
    worst = max(work[1:])
    print(f"longest GUI-thread work between 10 ms ticks: {worst:.1f} ms ({len(work)} ticks)")
    assert worst < 100, f"the GUI thread worked {worst:.1f} ms without a break"
    saved = store.sessions.messages(window.chat.conversation_id or "")[-1]
    assert saved.status is MessageStatus.FAILED and saved.content == reply.content
    openai_server.reply("Shorter now.")
    send(qtbot, window, "Please be brief")
    settle_window(qtbot, window)
    assert window.chat.transcript.messages[-1].content == "Shorter now."


def test_closing_during_a_stream_stops_it_cleanly(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    openai_server.stall("never finished, " * 20, after=2)
    window = make_window(server=openai_server)
    send(qtbot, window, "Wait forever")
    assert window.chat.streaming
    qtbot.waitUntil(lambda: window.chat.transcript.messages[-1].content != "", timeout=5000)
    # The turn has started (its first words are on screen), so the new conversation is open.
    conversation = window.chat.conversation_id
    assert conversation is not None
    window.close()
    # Closing cancelled the stream: its worker finished and the connection was closed.
    assert window.network.wait(5000)
    assert openai_server.wait_for_disconnect(5)
    [session] = store.sessions.list()
    assert conversation == session.id
    last = store.sessions.messages(session.id)[-1]
    assert last.role is MessageRole.ASSISTANT and last.status is MessageStatus.CANCELLED
    assert last.content == "never finished, "
