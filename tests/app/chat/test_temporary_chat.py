"""Through the real window: a temporary chat recalls nothing, offers no `remember`, is never
listed, and once closed the database file (and its log) holds nothing of it; instructions
for one conversation reach the model after the stable prefix."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.qtbot import QtBot

from app.mainwindow.main_window import MainWindow
from tests.app.conftest import WindowFactory, settle, settle_engine
from tests.fakes.openai_server import OpenAIServer
from timothy.chat.prompt import INSTRUCTIONS_INTRO, STABLE_PREFIX
from timothy.store import Store

NO_FACTS = json.dumps({"facts": []})
SECRET = "zanzibar-quokka-7731"  # words that must not reach the disk


def settle_window(qtbot: QtBot, window: MainWindow) -> None:
    qtbot.waitUntil(lambda: not window.chat.streaming, timeout=10_000)
    settle(qtbot, window.workers, window.network)
    settle_engine(qtbot, window)


def send(qtbot: QtBot, window: MainWindow, text: str) -> None:
    window.chat.composer.input.setFocus()
    window.chat.composer.set_text(text)
    qtbot.keyClick(window.chat.composer.input, Qt.Key.Key_Return)
    settle_window(qtbot, window)


def on_disk(store: Store) -> bytes:
    """The database file and its write-ahead log, as bytes."""
    data = b""
    for suffix in ("", "-wal", "-journal"):
        path = store.path.with_name(store.path.name + suffix)
        if path.exists():
            data += path.read_bytes()
    return data


def test_a_temporary_chat_leaves_nothing_in_the_store(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    store.memories.add("My cat is called Miso", type="semantic")
    window = make_window(server=openai_server)
    chat = window.chat
    window.menus.temporary_action.trigger()
    assert chat.temporary and window.sidebar.temporary_button.isChecked()
    assert window.menus.temporary_action.isChecked()
    assert chat.temporary_banner.isVisible()
    assert chat.property("temporary") is True
    assert chat.title == "Temporary chat"

    openai_server.reply(f"Nothing recalled, {SECRET}.")
    send(qtbot, window, f"What is my cat called? {SECRET}")
    openai_server.reply(f"Still nothing kept, {SECRET}.")
    send(qtbot, window, f"Remember that my password is {SECRET}")
    assert [m.content for m in chat.transcript.messages][-1] == f"Still nothing kept, {SECRET}."
    requests = openai_server.chat_requests
    assert len(requests) == 2 and all(r.get("stream") for r in requests)  # no title, no facts
    assert all("tools" not in r for r in requests)
    assert "Miso" not in json.dumps(requests)
    assert window.sidebar.model.conversations() == []
    assert SECRET.encode() not in on_disk(store)

    # closing it (turning temporary chat off) erases it; the window keeps no trace of it
    qtbot.mouseClick(chat.temporary_banner.leave_button, Qt.MouseButton.LeftButton)
    settle(qtbot, window.workers)
    assert not chat.temporary and not chat.temporary_banner.isVisible()
    assert not window.menus.temporary_action.isChecked()
    assert chat.title == "New chat" and chat.transcript.is_empty()
    window.close()
    store.db.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert SECRET.encode() not in on_disk(store)
    assert store.sessions.list(include_deleted=True) == []
    assert [m.content for m in store.memories.list()] == ["My cat is called Miso"]


def test_opening_a_saved_conversation_closes_the_temporary_chat(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    saved = store.sessions.create(title="Saved one")
    store.sessions.add_message(saved.id, "user", "an old question")
    window = make_window(server=openai_server)
    qtbot.mouseClick(window.sidebar.temporary_button, Qt.MouseButton.LeftButton)
    assert window.chat.temporary
    openai_server.reply("A temporary answer.")
    send(qtbot, window, "A temporary question")
    temporary_id = window.chat.temporary_id
    assert temporary_id is not None
    window.open_conversation(saved.id)
    qtbot.waitUntil(lambda: len(window.chat.transcript.messages) == 1, timeout=10_000)
    settle(qtbot, window.workers)
    assert not window.chat.temporary and not window.menus.temporary_action.isChecked()
    assert not window.sidebar.temporary_button.isChecked()
    assert window.chat.temporary_id is None
    assert not window.conversations.messages(temporary_id)  # erased, in memory as well


def test_instructions_for_a_conversation_follow_the_stable_prefix(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    window = make_window(server=openai_server)
    qtbot.mouseClick(window.chat.instructions_button, Qt.MouseButton.LeftButton)
    dialog = window.chat.instructions_dialog
    assert dialog is not None
    dialog.editor.setPlainText("Answer in French.")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    openai_server.reply("Bonjour !")
    openai_server.reply("Salut")
    openai_server.reply(NO_FACTS)
    send(qtbot, window, "Hello")
    system = openai_server.chat_requests[0]["messages"][0]["content"]
    assert system.startswith(STABLE_PREFIX + "\n\n" + INSTRUCTIONS_INTRO + "\nAnswer in French.")
    conversation_id = window.chat.conversation_id or ""
    assert store.sessions.get(conversation_id).instructions == "Answer in French."
    assert window.chat.instructions_button.isChecked()  # the header says there are some
    window.new_chat()
    assert not window.chat.instructions_button.isChecked()
    window.open_conversation(conversation_id)
    qtbot.waitUntil(window.chat.instructions_button.isChecked, timeout=5000)
    assert "Answer in French." in window.chat.instructions_button.toolTip()

    # changed later from the header: the next turn follows the new note
    qtbot.mouseClick(window.chat.instructions_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.chat.instructions_dialog is not None, timeout=5000)
    dialog = window.chat.instructions_dialog
    assert dialog is not None and dialog.instructions() == "Answer in French."
    dialog.editor.setPlainText("Answer in German.")
    dialog.buttons.button(QDialogButtonBox.StandardButton.Save).click()
    settle(qtbot, window.workers)
    assert store.sessions.get(conversation_id).instructions == "Answer in German."
    openai_server.reply("Hallo!")
    openai_server.reply(NO_FACTS)
    send(qtbot, window, "Hello again")
    streamed = [r for r in openai_server.chat_requests if r.get("stream")]
    assert "Answer in German." in streamed[-1]["messages"][0]["content"]
