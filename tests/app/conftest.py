"""Fixtures for the app's tests: the theme, worker pools, a settled event loop, the window."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from app import theme
from app.local_servers import LocalServer
from app.main_window import MainWindow
from app.window_state import WindowState
from app.workers import Workers
from tests.fakes.scripted_chat import ScriptedConversations
from timothy.settings import Settings
from timothy.store import Store

SETTLE_TIMEOUT_MS = 10_000


@pytest.fixture(autouse=True)
def app_theme(qapp: QApplication) -> None:
    theme.apply(qapp, scheme=Qt.ColorScheme.Light)


@pytest.fixture
def workers(qapp: QApplication) -> Iterator[Workers]:
    pool = Workers(threads=2)
    yield pool
    pool.wait(5000)


def settle(qtbot: QtBot, *pools: Workers) -> None:
    """Wait (with a deadline) until no work is running in the pools and its results are in."""
    qtbot.waitUntil(lambda: not any(pool.busy for pool in pools), timeout=SETTLE_TIMEOUT_MS)
    QApplication.processEvents()


def quiet_gui_thread() -> None:
    """Before measuring GUI latency: finish what earlier tests left queued (widgets waiting
    for deleteLater, garbage), so only the work under test is measured."""
    for _ in range(3):
        QApplication.sendPostedEvents(None, 0)  # includes DeferredDelete
        QApplication.processEvents()
    gc.collect()


WindowFactory = Callable[..., MainWindow]


@pytest.fixture
def make_window(qtbot: QtBot, store: Store, isolated_env: Path) -> Iterator[WindowFactory]:
    made: list[MainWindow] = []

    def make(
        *,
        conversations: ScriptedConversations | None = None,
        settings: Settings | None = None,
        servers: list[LocalServer] | None = None,
        probe: Callable[[], list[LocalServer]] | None = None,
        use_store: bool = True,
        show: bool = True,
    ) -> MainWindow:
        window = MainWindow(
            store if use_store else None,
            conversations=conversations
            if conversations is not None
            else ScriptedConversations(store),
            settings=settings if settings is not None else Settings(chat_provider="openai"),
            window_state=WindowState(),
            probe_local_servers=probe or (lambda: list(servers or [])),
        )
        qtbot.addWidget(window)
        made.append(window)
        with qtbot.waitSignal(window.started, timeout=SETTLE_TIMEOUT_MS):
            if show:
                window.show()
                qtbot.waitExposed(window)
        settle(qtbot, window.workers, window.network)
        return window

    yield make
    for window in made:
        if window.isVisible():
            window.close()
        window.workers.wait(5000)
        window.network.wait(5000)
