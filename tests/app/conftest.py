"""Fixtures for the app's tests: the theme, worker pools, a settled event loop, the window.

The window is the real one with the real chat engine; a test that chats points it at the
fake OpenAI server (`make_window(server=openai_server)`), so the real `openai` client talks
HTTP to 127.0.0.1.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app.chat.local_servers import LocalServer
from app.jobs.workers import Workers
from app.look import theme
from app.mainwindow.main_window import MainWindow
from app.mainwindow.window_state import WindowState
from app.transcript.code_highlighter import make_lexers
from app.transcript.code_highlighter import warm_up as warm_up_highlighting
from app.transcript.transcript_view import TranscriptView
from tests.fakes.openai_server import OpenAIServer
from timothy.chat.settings import ChatSettings
from timothy.settings import Settings
from timothy.store import Store

SETTLE_TIMEOUT_MS = 10_000


# Labels the window tests' code blocks use: their lexers are made once for the run, as the
# app's start-up does for the common ones, so a block is coloured as soon as it is made
# (tests/app/transcript/test_code_highlighting.py covers a lexer that is not made yet).
MADE_LEXERS = ("", "python", "py", "sh", "bash", "c++", "TS", "sql", "klingon", "json")


@pytest.fixture(scope="session", autouse=True)
def made_lexers() -> None:
    warm_up_highlighting()
    for label in MADE_LEXERS:
        make_lexers(label)


@pytest.fixture(autouse=True)
def app_theme(qapp: QApplication) -> None:
    theme.apply(qapp, scheme=Qt.ColorScheme.Light)


@pytest.fixture
def workers(qapp: QApplication) -> Iterator[Workers]:
    pool = Workers(threads=2)
    yield pool
    pool.wait(5000)


def transcripts_building() -> bool:
    """Some transcript is still building an opened conversation's older messages."""
    return any(
        isinstance(widget, TranscriptView) and widget.building
        for widget in QApplication.allWidgets()
    )


def settle(qtbot: QtBot, *pools: Workers) -> None:
    """Wait (with a deadline) until no work is running in the pools and its results are in,
    and every opened conversation is built to its first message."""

    def settled() -> bool:
        return not any(pool.busy for pool in pools) and not transcripts_building()

    qtbot.waitUntil(settled, timeout=SETTLE_TIMEOUT_MS)
    QApplication.processEvents()


def quiet_gui_thread() -> None:
    """Before measuring GUI latency: finish what earlier tests left queued (widgets waiting
    for deleteLater, garbage), so only the work under test is measured."""
    for _ in range(3):
        QApplication.sendPostedEvents(None, 0)  # includes DeferredDelete
        QApplication.processEvents()
    gc.collect()


def run_queue_wait() -> float:
    """Seconds the calling thread has spent ready to run but waiting for a CPU (Linux's
    schedstat; 0 where the system does not say). On a loaded machine that is the scheduler's
    share of a wall-clock gap, not the app's."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as stats:
            return int(stats.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


WindowFactory = Callable[..., MainWindow]


def chat_settings(server: OpenAIServer, **changes: object) -> Settings:
    """Settings that chat with the fake OpenAI server (short timeouts, as in the chat tests)."""
    settings = Settings(chat_provider="openai", openai=server.settings())
    chat = changes.pop("chat", None)
    if isinstance(chat, ChatSettings):
        settings = settings.replace(chat=chat)
    return settings.replace(**changes) if changes else settings


def settle_engine(qtbot: QtBot, window: MainWindow) -> None:
    """Wait until the engine's background work (titles, extraction) is done and reported."""
    assistant = window.assistant
    if assistant is not None:
        engines = assistant.engines()
        qtbot.waitUntil(
            lambda: all(engine.wait_idle(0) for engine in engines), timeout=SETTLE_TIMEOUT_MS
        )
    settle(qtbot, window.workers, window.network)


@pytest.fixture
def make_window(qtbot: QtBot, store: Store, isolated_env: Path) -> Iterator[WindowFactory]:
    made: list[MainWindow] = []

    def make(
        *,
        settings: Settings | None = None,
        server: OpenAIServer | None = None,
        servers: list[LocalServer] | None = None,
        probe: Callable[[], list[LocalServer]] | None = None,
        use_store: bool = True,
        show: bool = True,
        consolidation_delay_ms: int | None = None,
    ) -> MainWindow:
        if settings is None:
            settings = chat_settings(server) if server is not None else Settings()
        window = MainWindow(
            store if use_store else None,
            settings=settings,
            window_state=WindowState(),
            probe_local_servers=probe or (lambda: list(servers or [])),
            consolidation_delay_ms=consolidation_delay_ms,
        )
        qtbot.addWidget(window)
        made.append(window)
        with qtbot.waitSignal(window.started, timeout=SETTLE_TIMEOUT_MS):
            if show:
                window.show()
                qtbot.waitExposed(window)
        settle(qtbot, window.workers, window.network)
        if window.assistant is not None:
            # Started: the engine built (once the first reads are drawn; the first build
            # of a run imports the SDK), then the start-up's later loads (the model list).
            loads = window.start_loads
            qtbot.waitUntil(lambda: loads.done, timeout=3 * SETTLE_TIMEOUT_MS)
            assert window.assistant.setup is not None
            settle(qtbot, window.workers, window.network)
        return window

    yield make
    for window in made:
        if window.assistant is not None:
            for engine in window.assistant.engines():
                engine.wait_idle(10)
        if window.isVisible():
            window.close()
        for pool in (window.workers, window.network, window.jobs):
            pool.wait(5000)
