"""Workers run blocking work off the GUI thread and report outcomes (plain sentences) by signal."""

from __future__ import annotations

import logging
import threading
import time

import pytest
from PySide6.QtCore import QObject, QTimer
from pytestqt.qtbot import QtBot

from app.jobs.workers import Failure, Task, Workers
from tests.app.conftest import quiet_gui_thread, run_queue_wait, settle
from tests.app.many_memories import add_many
from timothy.errors import StoreError
from timothy.store import Store


@pytest.fixture
def owner() -> QObject:
    return QObject()


def test_callbacks_are_skipped_once_their_owner_is_gone(qtbot: QtBot, workers: Workers) -> None:
    import shiboken6

    gone = QObject()
    heard: list[object] = []
    gate = threading.Event()
    task = workers.run(gone, lambda: gate.wait(5), "waiting", on_success=heard.append)
    shiboken6.delete(gone)
    gate.set()
    qtbot.waitUntil(lambda: task.done, timeout=5000)
    assert heard == []


def test_result_arrives_on_the_gui_thread(qtbot: QtBot, workers: Workers, owner: QObject) -> None:
    seen: list[tuple[object, str]] = []
    workers.run(
        owner,
        lambda: threading.current_thread().name,
        "naming the thread",
        on_success=lambda name: seen.append((name, threading.current_thread().name)),
    )
    settle(qtbot, workers)
    assert len(seen) == 1
    worker_thread, receiving_thread = seen[0]
    assert worker_thread != threading.main_thread().name
    assert receiving_thread == threading.main_thread().name


def test_core_errors_keep_their_sentence(qtbot: QtBot, workers: Workers, owner: QObject) -> None:
    failures: list[Failure] = []

    def fail() -> None:
        raise StoreError("The disk holding the database is full; nothing was saved.")

    workers.run(owner, fail, "saving", on_failure=failures.append)
    settle(qtbot, workers)
    assert failures[0].message == "The disk holding the database is full; nothing was saved."


def test_unexpected_errors_become_a_plain_sentence_and_a_logged_traceback(
    qtbot: QtBot, workers: Workers, owner: QObject, caplog: pytest.LogCaptureFixture
) -> None:
    failures: list[Failure] = []

    def crash() -> None:
        {}["missing"]

    with caplog.at_level(logging.ERROR, logger="app.jobs.workers"):
        workers.run(owner, crash, "loading memories", on_failure=failures.append)
        settle(qtbot, workers)
    assert failures[0].message == (
        "Something went wrong while loading memories. The details are in the log file."
    )
    assert "Traceback" not in failures[0].message
    assert "KeyError" in caplog.text and "Traceback" in caplog.text


def test_progress_reports_arrive_in_order(qtbot: QtBot, workers: Workers) -> None:
    seen: list[object] = []

    def work(report: object) -> str:
        for number in range(50):
            report(number)  # type: ignore[operator]
        return "done"

    task = Task(work, "counting", reports=True)
    task.progressed.connect(seen.append)
    with qtbot.waitSignal(task.succeeded, timeout=5000) as blocker:
        workers.start(task)
    assert blocker.args == ["done"]
    qtbot.waitUntil(lambda: len(seen) == 50)
    assert seen == list(range(50))


def test_event_loop_stays_responsive_while_the_store_is_busy(
    qtbot: QtBot, workers: Workers, owner: QObject, store: Store
) -> None:
    """A heavy store job on a worker must not delay the GUI's timers."""
    add_many(store, 3000)
    finished = threading.Event()

    def heavy() -> int:
        total = 0
        for _ in range(6):
            total += len(store.memories.list())
        finished.set()
        return total

    # Between two 10 ms ticks: the wall clock, less the time the GUI thread sat ready to run
    # while the scheduler served other processes (on a loaded machine, 100 ms and more). What
    # remains is ours: the GUI thread working, or waiting on the worker (the GIL, a lock).
    gaps: list[float] = []
    last = [0.0, 0.0]
    ticker = QTimer()
    ticker.setInterval(10)

    def tick() -> None:
        wall, waited = time.perf_counter(), run_queue_wait()
        gaps.append((wall - last[0] - (waited - last[1])) * 1000)
        last[:] = [wall, waited]

    ticker.timeout.connect(tick)
    quiet_gui_thread()
    last[:] = [time.perf_counter(), run_queue_wait()]
    ticker.start()
    started = time.perf_counter()
    workers.run(owner, heavy, "listing memories")
    qtbot.waitUntil(finished.is_set, timeout=30_000)
    ticker.stop()
    assert time.perf_counter() - started > 0.05, "the job was too small to prove anything"
    assert len(gaps) > 3
    worst = max(gaps[1:])
    assert worst < 100, f"the GUI thread was held up for {worst:.0f} ms"
