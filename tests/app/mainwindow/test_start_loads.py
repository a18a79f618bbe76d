"""Start-up's later loads run one at a time, each once, in the order asked; a failing one
does not stop the others. In the window they wait for the chat engine and its local model:
the server's model list is asked for only after the local model has loaded."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import keyring
import pytest
from pytestqt.qtbot import QtBot

from app.jobs.workers import Workers
from app.mainwindow.main_window import MainWindow
from app.mainwindow.start_loads import StartLoads
from app.mainwindow.window_state import WindowState
from app.transcript.code_block import LEX_LATER_CHARS, CodeBlock, _lexing
from tests.app.conftest import SETTLE_TIMEOUT_MS, chat_settings, settle
from tests.fakes.keyring_backend import LockableKeyring
from tests.fakes.openai_server import OpenAIServer
from timothy.secrets import OPENAI_API_KEY, set_secret
from timothy.settings import Settings
from timothy.store import Store


class Line:
    """Loads that note when they run, and how many ran at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.running = 0
        self.most_at_once = 0
        self.ran: list[str] = []
        self.release = threading.Event()

    def load(self, name: str, *, fail: bool = False, hold: bool = False) -> object:
        def work() -> str:
            with self.lock:
                self.running += 1
                self.most_at_once = max(self.most_at_once, self.running)
                self.ran.append(name)
            try:
                if hold:
                    self.release.wait(10)
                if fail:
                    raise RuntimeError(f"{name} failed")
                return name
            finally:
                with self.lock:
                    self.running -= 1

        return work


@pytest.fixture
def pool(qtbot: QtBot) -> Iterator[Workers]:
    workers = Workers(threads=3)
    yield workers
    workers.wait(5000)


def test_loads_run_one_at_a_time_in_order_each_once_past_a_failure(
    qtbot: QtBot, pool: Workers
) -> None:
    line = Line()
    loads = StartLoads(pool)
    arrived: list[str] = []
    loads.add("first", line.load("first", hold=True))  # type: ignore[arg-type]
    loads.add("second", line.load("second", fail=True))  # type: ignore[arg-type]
    loads.add("third", line.load("third"), arrived.append)  # type: ignore[arg-type]
    assert line.ran == []  # nothing before the line starts
    with qtbot.waitSignal(loads.finished, timeout=SETTLE_TIMEOUT_MS):
        loads.start()
        loads.start()  # a second start changes nothing
        qtbot.waitUntil(lambda: line.ran == ["first"], timeout=SETTLE_TIMEOUT_MS)
        # Asked again while it waits: the newest replaces it, run once, in its place.
        loads.add("third", line.load("third again"), arrived.append)  # type: ignore[arg-type]
        line.release.set()
    assert line.ran == ["first", "second", "third again"]
    assert line.most_at_once == 1
    assert arrived == ["third again"]
    assert loads.done
    # One added after the line has run starts at once, alone.
    with qtbot.waitSignal(loads.finished, timeout=SETTLE_TIMEOUT_MS):
        loads.add("late", line.load("late"))  # type: ignore[arg-type]
    assert line.ran[-1] == "late" and line.most_at_once == 1


def test_the_model_list_is_asked_for_after_the_local_model_has_loaded(
    qtbot: QtBot, store: Store, openai_server: OpenAIServer
) -> None:
    openai_server.models = ["gpt-4o-mini", "house-model"]
    window = MainWindow(
        store,
        settings=chat_settings(openai_server, embedding_provider="local"),
        window_state=WindowState(),
        probe_local_servers=lambda: [],
        consolidation_delay_ms=None,
        warm_up_code=True,
    )
    qtbot.addWidget(window)
    assistant = window.assistant
    assert assistant is not None
    asked_when_loaded: list[int] = []
    assistant.embedder_loaded.connect(
        lambda: asked_when_loaded.append(
            sum(1 for r in openai_server.requests if r.operation == "models")
        )
    )
    window.show()
    with qtbot.waitSignal(window.start_loads.finished, timeout=60_000):
        pass
    assert asked_when_loaded == [0]
    assert "house-model" in window.chat.model_picker.models()
    assert sum(1 for r in openai_server.requests if r.operation == "models") == 1
    settle(qtbot, window.workers, window.network)
    window.close()


@pytest.mark.parametrize("embeddings", [None, "openai"])
def test_the_start_reads_the_servers_key_once(
    qtbot: QtBot,
    store: Store,
    openai_server: OpenAIServer,
    isolated_env: Path,
    embeddings: str | None,
) -> None:
    """The chat model, the embeddings and the model list all use the server's one key: the
    start reads it from the keyring once (each read of a locked keyring may prompt)."""
    key = "sk-house-server-key"
    set_secret(OPENAI_API_KEY, key)
    openai_server.api_key = key  # a request without it is refused, so the list used it
    openai_server.models = ["gpt-4o-mini", "house-model"]
    counting = LockableKeyring(locked=False)
    keyring.set_keyring(counting)  # isolated_env puts the file keyring back
    window = MainWindow(
        store,
        settings=chat_settings(openai_server, embedding_provider=embeddings),
        window_state=WindowState(),
        probe_local_servers=lambda: [],
        consolidation_delay_ms=None,
    )
    qtbot.addWidget(window)
    window.show()
    with qtbot.waitSignal(window.start_loads.finished, timeout=60_000):
        pass
    settle(qtbot, window.workers, window.network)
    assert "house-model" in window.chat.model_picker.models()
    assert sum(1 for r in openai_server.requests if r.operation == "models") == 1
    assert counting.reads == 1
    window.close()


def test_a_message_sent_as_the_window_opens_is_answered_and_the_loads_still_follow(
    qtbot: QtBot, store: Store, openai_server: OpenAIServer
) -> None:
    session = store.sessions.create(title="Earlier")
    store.sessions.add_message(session.id, "user", "Shall we go to Porto?")
    openai_server.reply("Right away.")
    window = MainWindow(
        store,
        settings=chat_settings(openai_server, embedding_provider="local"),
        window_state=WindowState(),
        probe_local_servers=lambda: [],
        consolidation_delay_ms=None,
    )
    qtbot.addWidget(window)
    assistant = window.assistant
    assert assistant is not None
    window.show()
    composer = window.chat.composer
    assert composer.input.isEnabled()  # usable before anything is built or loaded
    composer.set_text("Are you there already?")
    composer.submit()
    assert assistant.setup is None  # the turn waits for the engine on its worker
    qtbot.waitUntil(lambda: not window.chat.streaming, timeout=60_000)
    said = [(m.role, m.content) for m in store.sessions.branch(store.sessions.list()[0].id)]
    assert ("assistant", "Right away.") in said
    # The local model and the model list still load afterwards, one after the other.
    qtbot.waitUntil(lambda: window.start_loads.done, timeout=60_000)
    setup = assistant.setup
    assert setup is not None and setup.embedder is not None
    assert getattr(setup.embedder, "loaded", False)
    assert sum(1 for r in openai_server.requests if r.operation == "models") == 1
    settle(qtbot, window.workers, window.network)
    for engine in assistant.engines():
        engine.wait_idle(10)
    window.close()


def test_the_opened_conversations_code_is_coloured_once_the_first_reads_are_drawn(
    qtbot: QtBot, store: Store, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    """Pygments' first use (its lexers imported, their expressions compiled) shares the GIL
    with the window's first work, which it stretched into the start's longest stalls: the
    window holds the lexing line, and colours the code in the line of start-up's later
    loads."""
    code = "\n".join(f"def step_{n}(x):\n    return x * {n}  # line {n}" for n in range(80))
    assert len(code) >= LEX_LATER_CHARS  # coloured by the worker, not on the spot
    session = store.sessions.create(title="Code")
    store.sessions.add_message(session.id, "user", "Show me the steps.")
    store.sessions.add_message(session.id, "assistant", f"Here:\n\n```python\n{code}\n```\n")
    state = WindowState(tmp_path / "window.ini")
    state.set_text("window/last_conversation", session.id)
    window = MainWindow(
        store,
        settings=chat_settings(openai_server),
        window_state=state,
        probe_local_servers=lambda: [],
        consolidation_delay_ms=None,
    )
    qtbot.addWidget(window)
    assert _lexing.held  # from the start
    window.show()
    qtbot.waitUntil(lambda: bool(window.chat.transcript.findChildren(CodeBlock)), timeout=10_000)
    (block,) = window.chat.transcript.findChildren(CodeBlock)
    if _lexing.held:  # drawn plain while the window's first reads are still arriving
        assert block.highlighter.lexed_chars == 0
        assert not block.body.document().firstBlock().layout().formats()
    qtbot.waitUntil(lambda: window.start_loads.started, timeout=3 * SETTLE_TIMEOUT_MS)
    qtbot.waitUntil(lambda: window.start_loads.done, timeout=3 * SETTLE_TIMEOUT_MS)
    assert not _lexing.held
    qtbot.waitUntil(
        lambda: bool(block.body.document().firstBlock().layout().formats()), timeout=10_000
    )
    settle(qtbot, window.workers, window.network)
    window.close()


def test_a_window_closed_before_its_loads_begin_lets_the_lexing_line_go(
    qtbot: QtBot, store: Store
) -> None:
    window = MainWindow(
        store,
        settings=Settings(),
        window_state=WindowState(),
        probe_local_servers=lambda: [],
        consolidation_delay_ms=None,
    )
    qtbot.addWidget(window)
    assert _lexing.held
    window.close()
    assert not _lexing.held
    settle(qtbot, window.workers, window.network)
