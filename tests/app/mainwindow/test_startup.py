"""Start-up work stays off the GUI thread: the window takes a message before the chat engine
is built (the turn waits for it), and the local embedding model loads after the engine is in
use, not before."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.mainwindow.main_window import MainWindow
from app.mainwindow.window_state import WindowState
from tests.app.conftest import SETTLE_TIMEOUT_MS, chat_settings, settle, settle_engine
from tests.fakes.openai_server import OpenAIServer
from tests.fakes.script import Step
from timothy.providers.local import LocalEmbedder
from timothy.settings import Settings
from timothy.store import Store


@pytest.fixture
def windows(qtbot: QtBot) -> Iterator[list[MainWindow]]:
    made: list[MainWindow] = []
    yield made
    for window in made:
        if window.assistant is not None:
            for engine in window.assistant.engines():
                engine.wait_idle(10)
        window.close()
        for pool in (window.workers, window.network, window.jobs):
            pool.wait(5000)


def start_window(
    qtbot: QtBot, store: Store, settings: Settings, made: list[MainWindow]
) -> MainWindow:
    window = MainWindow(
        store,
        settings=settings,
        window_state=WindowState(),
        probe_local_servers=lambda: [],
        consolidation_delay_ms=None,
    )
    qtbot.addWidget(window)
    made.append(window)
    window.show()
    return window


def test_a_message_sent_before_the_chat_engine_is_built_is_answered(
    qtbot: QtBot, store: Store, openai_server: OpenAIServer, windows: list[MainWindow]
) -> None:
    # Building the engine asks the embedding server its model's dimension (a model whose
    # dimension Timothy does not know): slowly here.
    openai_server.embedding_models["house-embedder"] = 64
    openai_server.script.push(Step(delay=2.0), on="embeddings")
    openai_server.reply("Hello, early bird.")
    settings = chat_settings(openai_server, embedding_provider="openai")
    settings = settings.replace(
        openai=dataclasses.replace(settings.openai, embedding_model="house-embedder")
    )
    window = start_window(qtbot, store, settings, windows)
    composer = window.chat.composer
    qtbot.waitUntil(composer.input.isEnabled, timeout=SETTLE_TIMEOUT_MS)
    assistant = window.assistant
    assert assistant is not None and assistant.setup is None  # still being built
    composer.input.setFocus()
    composer.set_text("Hi, are you there?")
    qtbot.keyClick(composer.input, Qt.Key.Key_Return)
    assert window.chat.streaming  # taken: the turn waits on its worker, not on the window
    qtbot.waitUntil(lambda: not window.chat.streaming, timeout=30_000)
    settle_engine(qtbot, window)
    assert assistant.setup is not None
    assert len(openai_server.embedding_requests) >= 1  # the slow build did run
    assert len(openai_server.chat_requests) >= 1
    session = store.sessions.list(limit=5)[0]
    said = [(m.role, m.content) for m in store.sessions.branch(session.id)]
    assert ("assistant", "Hello, early bird.") in said
    assert ("user", "Hi, are you there?") in said


def test_the_local_model_loads_after_the_engine_is_in_use(
    qtbot: QtBot, store: Store, openai_server: OpenAIServer, windows: list[MainWindow]
) -> None:
    settings = chat_settings(openai_server, embedding_provider="local")
    window = start_window(qtbot, store, settings, windows)
    assistant = window.assistant
    assert assistant is not None
    with qtbot.waitSignals(
        [assistant.configured, assistant.embedder_loaded], order="strict", timeout=60_000
    ):
        pass
    setup = assistant.setup
    assert setup is not None and isinstance(setup.embedder, LocalEmbedder)
    assert setup.embedder.loaded
    settle(qtbot, window.workers, window.network)


def test_the_chat_engine_is_built_once_the_conversation_list_is_shown(
    qtbot: QtBot, store: Store, openai_server: OpenAIServer, windows: list[MainWindow]
) -> None:
    session = store.sessions.create(title="Yesterday's plans")
    store.sessions.add_message(session.id, "user", "Shall we go to Porto?")
    window = MainWindow(
        store,
        settings=chat_settings(openai_server),
        window_state=WindowState(),
        probe_local_servers=lambda: [],
        consolidation_delay_ms=None,
    )
    qtbot.addWidget(window)
    windows.append(window)
    assistant = window.assistant
    assert assistant is not None
    # When the list is filled, nothing of the engine's build (nor the server's model list,
    # which imports the same SDK) has been asked of the network workers yet.
    busy_when_listed: list[bool] = []
    window.sidebar.model.modelReset.connect(
        lambda: busy_when_listed.append(window.network.busy or assistant.setup is not None)
    )
    window.show()
    with qtbot.waitSignal(assistant.configured, timeout=SETTLE_TIMEOUT_MS):
        pass
    assert busy_when_listed[:1] == [False]
    assert window.sidebar.model.conversations()[0].id == session.id
    settle(qtbot, window.workers, window.network)
