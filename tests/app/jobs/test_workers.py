"""Workers run blocking work off the GUI thread and report outcomes (plain sentences) by signal."""

from __future__ import annotations

import gc
import logging
import threading
import time
import weakref
from collections.abc import Callable

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


def test_outcomes_that_arrive_together_are_handed_over_in_separate_passes(
    qtbot: QtBot, workers: Workers
) -> None:
    """Three tasks finish while the GUI thread is busy. Each callback queues a zero-timer
    mark; the next callback must find the mark already run: the event loop (painting,
    input, due timers) turned between two callbacks instead of running all three back to
    back, as queued signals would."""
    owner = QObject()
    seen: list[str] = []
    marks: list[int] = []

    def on_success(value: object) -> None:
        seen.append(f"{value} after {len(marks)} marks")
        QTimer.singleShot(0, lambda: marks.append(1))

    def work_for(name: str) -> Callable[[], str]:
        return lambda: name

    for name in ("list", "queue", "transcript"):
        workers.run(owner, work_for(name), "test", on_success=on_success)
    # All three have finished (and queued their outcome) before the loop runs.
    assert workers.pool.waitForDone(5000)
    qtbot.waitUntil(lambda: len(seen) == 3 and not workers.busy, timeout=5000)
    # (the two threads finish in either order)
    assert sorted(entry.split(" after ")[0] for entry in seen) == ["list", "queue", "transcript"]
    assert [entry.split(" after ")[1] for entry in seen] == ["0 marks", "1 marks", "2 marks"]


def test_a_failure_and_finished_come_in_order_and_busy_clears(
    qtbot: QtBot, workers: Workers
) -> None:
    owner = QObject()
    heard: list[str] = []

    def fail() -> None:
        raise ValueError("broken")

    task = workers.run(
        owner,
        fail,
        "reading the thing",
        on_failure=lambda failure: heard.append(f"failed: {failure.message}"),
    )
    task.finished.connect(lambda: heard.append("finished"))
    qtbot.waitUntil(lambda: not workers.busy, timeout=5000)
    assert heard == [
        "failed: Something went wrong while reading the thing. The details are in the log file.",
        "finished",
    ]
    assert task.done


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


def test_a_pool_thread_keeps_one_store_connection_for_all_its_tasks(
    qtbot: QtBot, store: Store, owner: QObject
) -> None:
    """Qt's pool threads start each task with a fresh Python thread state: a connection kept
    per `threading.local` was made anew (and kept open, page cache and all) for every task,
    ~1 MB each, 50 of them after paging Browse through 10k memories."""
    add_many(store, 50)
    pool = Workers(threads=2)
    used: list[object] = []
    for _ in range(40):
        pool.run(
            owner,
            lambda: (store.memories.list(limit=5), store.db.connection())[1],
            "reading memories",
            on_success=used.append,
        )
    settle(qtbot, pool)
    assert len(used) == 40
    assert len({id(conn) for conn in used}) <= 2  # one per pool thread
    pool.wait(5000)


TASKS = 200


def all_let_go(tasks: list[weakref.ref[Task]]) -> None:
    gc.collect()
    assert sum(ref() is not None for ref in tasks) == 0, "tasks still alive"


@pytest.mark.parametrize("detached", [False, True], ids=["pool", "detached"])
def test_a_finished_task_is_let_go(qtbot: QtBot, owner: QObject, detached: bool) -> None:
    """Once its outcome is delivered nothing keeps a task. Every task used to stay for the
    app's life (~4-6 KB each, +22 MB per 5,000): its `finished` slot was a lambda holding
    it, a cycle through its C++ object that the collector cannot see, and PySide kept some
    of the pool's `QRunnable` wrappers, each holding its task."""
    pool = Workers(threads=2, detached=detached)
    heard: list[object] = []
    tasks: list[weakref.ref[Task]] = []
    for _ in range(TASKS):
        task = pool.run(owner, lambda: None, "doing nothing", on_success=heard.append)
        tasks.append(weakref.ref(task))
        reporting = Task(lambda report: report("step"), "reporting", reports=True)
        reporting.progressed.connect(heard.append)
        tasks.append(weakref.ref(pool.start(reporting)))
    del task, reporting
    qtbot.waitUntil(lambda: len(heard) == 2 * TASKS and not pool.busy, timeout=30_000)
    # The pool lets go of its runnable just after the task's last signal: poll, bounded.
    qtbot.waitUntil(lambda: all_let_go(tasks), timeout=5000)
    pool.wait(5000)
