"""Through the real window: edit and resend keeps the earlier branch, regenerate keeps the
earlier reply, both with a ‹ 1/2 › switcher; the usage line under a reply."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.mainwindow.main_window import RESTORING, MainWindow
from app.transcript.message_widget import MessageWidget
from tests.app.conftest import WindowFactory, settle, settle_engine
from tests.fakes.openai_server import OpenAIServer
from timothy.settings import Settings
from timothy.store import Store

NO_FACTS = json.dumps({"facts": []})


def settle_window(qtbot: QtBot, window: MainWindow) -> None:
    qtbot.waitUntil(lambda: not window.chat.streaming, timeout=10_000)
    settle(qtbot, window.workers, window.network)
    settle_engine(qtbot, window)


def send(qtbot: QtBot, window: MainWindow, text: str) -> None:
    window.chat.composer.input.setFocus()
    window.chat.composer.set_text(text)
    qtbot.keyClick(window.chat.composer.input, Qt.Key.Key_Return)
    settle_window(qtbot, window)


def shown(window: MainWindow) -> list[str]:
    return [m.content for m in window.chat.transcript.messages]


def widget_saying(window: MainWindow, text: str) -> MessageWidget:
    return next(m for m in window.chat.transcript.messages if m.content == text)


def test_edit_and_resend_keeps_the_earlier_branch_a_switch_away(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    window = make_window(server=openai_server)
    openai_server.reply("Paris is lovely in May.")
    openai_server.reply("Paris in May")  # the title
    openai_server.reply(NO_FACTS)
    send(qtbot, window, "Plan a weekend in Paris")
    openai_server.reply("Take the train from London.")
    openai_server.reply(NO_FACTS)
    send(qtbot, window, "How do I get there from London?")

    question = widget_saying(window, "How do I get there from London?")
    assert question.edit_button.isEnabled()
    qtbot.mouseClick(question.edit_button, Qt.MouseButton.LeftButton)
    editor = question.editor
    assert editor is not None and editor.text() == "How do I get there from London?"
    editor.input.setPlainText("How do I get there from Edinburgh?")
    openai_server.reply("Fly from Edinburgh.")
    openai_server.reply(NO_FACTS)
    qtbot.mouseClick(editor.send_button, Qt.MouseButton.LeftButton)
    settle_window(qtbot, window)
    qtbot.waitUntil(lambda: shown(window)[-1:] == ["Fly from Edinburgh."], timeout=10_000)
    assert shown(window) == [
        "Plan a weekend in Paris",
        "Paris is lovely in May.",
        "How do I get there from Edinburgh?",
        "Fly from Edinburgh.",
    ]
    # the model was sent the new branch only
    last = [r for r in openai_server.chat_requests if r.get("stream")][-1]
    sent = [m["content"] for m in last["messages"] if m["role"] != "system"]
    assert "How do I get there from London?" not in sent
    assert "Take the train from London." not in sent

    edited = widget_saying(window, "How do I get there from Edinburgh?")
    switcher = edited.switcher
    assert switcher.isVisible() and switcher.label.text() == "2/2"
    assert not widget_saying(window, "Plan a weekend in Paris").switcher.isVisible()
    qtbot.mouseClick(switcher.previous_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: shown(window)[-1:] == ["Take the train from London."], timeout=10_000)
    settle(qtbot, window.workers)
    assert shown(window) == [
        "Plan a weekend in Paris",
        "Paris is lovely in May.",
        "How do I get there from London?",
        "Take the train from London.",
    ]
    assert widget_saying(window, "How do I get there from London?").switcher.label.text() == "1/2"
    # the store keeps both branches; the active one is what the window shows again on opening
    conversation_id = window.chat.conversation_id or ""
    assert len(store.sessions.messages(conversation_id)) == 6
    assert [m.content for m in window.conversations.messages(conversation_id)] == shown(window)


def test_regenerate_keeps_the_earlier_reply_as_a_version(
    qtbot: QtBot, make_window: WindowFactory, openai_server: OpenAIServer
) -> None:
    window = make_window(server=openai_server)
    openai_server.reply("Blue.")
    openai_server.reply("Colours")
    openai_server.reply(NO_FACTS)
    send(qtbot, window, "Name a colour")
    openai_server.reply("Green.")
    openai_server.reply(NO_FACTS)
    qtbot.mouseClick(
        window.chat.transcript.messages[-1].regenerate_button, Qt.MouseButton.LeftButton
    )
    settle_window(qtbot, window)
    qtbot.waitUntil(
        lambda: any(m.switcher.isVisible() for m in window.chat.transcript.messages), timeout=10_000
    )
    reply = window.chat.transcript.messages[-1]
    assert shown(window) == ["Name a colour", "Green."]
    assert reply.switcher.label.text() == "2/2"
    assert not reply.switcher.next_button.isEnabled()
    qtbot.mouseClick(reply.switcher.previous_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: shown(window) == ["Name a colour", "Blue."], timeout=10_000)
    settle(qtbot, window.workers)
    reply = window.chat.transcript.messages[-1]
    assert reply.switcher.label.text() == "1/2"
    qtbot.mouseClick(reply.switcher.next_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: shown(window) == ["Name a colour", "Green."], timeout=10_000)


def test_the_usage_line_shows_the_servers_figures_and_the_model(
    qtbot: QtBot, make_window: WindowFactory, openai_server: OpenAIServer
) -> None:
    window = make_window(server=openai_server)
    openai_server.reply("one two three four five six", usage=(1234, 56, 0), interval=0.05)
    openai_server.reply("Counting")
    openai_server.reply(NO_FACTS)
    send(qtbot, window, "Count to six")
    reply = window.chat.transcript.messages[-1]
    model = openai_server.settings().chat_model
    line = reply.usage_label
    assert line.isVisible()
    assert line.text().startswith(f"{model} · 1,234 in · 56 out · ")
    assert line.text().endswith(" tokens/s")
    assert "56 came back" in line.toolTip()
    text = line.text()
    # read back from the store, the same line
    conversation_id = window.chat.conversation_id or ""
    window.new_chat()
    window.open_conversation(conversation_id)
    qtbot.waitUntil(lambda: len(window.chat.transcript.messages) == 2, timeout=10_000)
    assert window.chat.transcript.messages[-1].usage_label.text() == text


def test_with_no_chat_model_a_past_conversation_offers_no_edit_or_regenerate(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    """The bug: with no chat model (the composer says to set one up), the pencil and
    Regenerate still worked: the reply gave way to an error, an edited message was lost."""
    session = store.sessions.create(title="Porto")
    store.sessions.add_message(session.id, "user", "I like Porto")
    store.sessions.add_message(session.id, "assistant", "Porto is lovely.")
    window = make_window(settings=Settings())
    window.open_conversation(session.id)
    qtbot.waitUntil(lambda: len(window.chat.transcript.messages) == 2, timeout=10_000)
    settle(qtbot, window.workers)
    assert not window.chat.composer.input.isEnabled()
    assert window.chat.composer.hint.isHidden()  # no "Enter to send" under a box that cannot
    question, reply = window.chat.transcript.messages
    assert not question.edit_button.isEnabled() and question.edit_button.isHidden()
    assert question.start_editing() is None
    assert reply.regenerate_button.isHidden()


def test_while_a_restore_runs_no_edit_or_regenerate_starts_a_turn(
    qtbot: QtBot, make_window: WindowFactory, openai_server: OpenAIServer
) -> None:
    """The bug: Send and Regenerate waited for a restore, an edited message was sent."""
    window = make_window(server=openai_server)
    openai_server.reply("Blue.")
    openai_server.reply("Colours")
    openai_server.reply(NO_FACTS)
    send(qtbot, window, "Name a colour")
    question, reply = window.chat.transcript.messages
    assert question.edit_button.isEnabled() and not reply.regenerate_button.isHidden()
    requests = len(openai_server.chat_requests)

    window.chat.set_paused(RESTORING)
    assert not question.edit_button.isEnabled() and reply.regenerate_button.isHidden()
    assert question.edit_button.isHidden()
    assert question.message_id is not None
    window.chat.edit_message(question.message_id, "Name a fruit")
    settle_window(qtbot, window)
    assert shown(window) == ["Name a colour", "Blue."]
    assert len(openai_server.chat_requests) == requests

    window.chat.set_paused(None)
    assert question.edit_button.isEnabled() and not reply.regenerate_button.isHidden()
    assert not question.edit_button.isHidden()
