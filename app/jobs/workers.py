"""Blocking work (store queries, network calls, streams) off the GUI thread; results by signal.

A `Task` is a QObject living on the GUI thread; its runnable runs on a pool thread and its
outcome comes back to the GUI thread as the task's signals. Failures become a `Failure`: a
plain sentence for the owner and the traceback for the log.

Outcomes are handed over one per pass of the GUI thread's event loop (`_Outcomes`). Signals
queued from threads are all delivered in one pass, back to back: at start the conversation
list, the confirmation queue and the opened conversation each take 15-40 ms to show, arrive
together, and froze the window for their sum (~110 ms) before it could paint or take a key.
A task that reports as it goes (a streamed reply) keeps its signals queued as they come, in
order.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, QThreadPool, QTimer, Signal

from timothy.errors import TimothyError

log = logging.getLogger(__name__)

Report = Callable[[object], None]


@dataclass(frozen=True, slots=True)
class Failure:
    """A failed task: `message` is for the owner, `detail` for the log."""

    message: str
    detail: str
    error: BaseException


def describe_failure(error: BaseException, what: str) -> str:
    """The sentence shown to the owner: the core's own message, or a plain fallback."""
    if isinstance(error, TimothyError) and str(error):
        return str(error)
    return f"Something went wrong while {what}. The details are in the log file."


def while_alive(owner: QObject, callback: Callable[..., None]) -> Callable[..., None]:
    """`callback`, skipped once `owner`'s C++ object has been deleted."""

    def call(*values: Any) -> None:
        if shiboken6.isValid(owner):
            callback(*values)

    return call


class Task(QObject):
    """One piece of work; connect to its signals, then `Workers.start` it."""

    succeeded = Signal(object)
    failed = Signal(object)  # a Failure
    progressed = Signal(object)  # whatever the work reported along the way
    finished = Signal()  # after succeeded or failed, always

    def __init__(self, work: Callable[..., Any], what: str, *, reports: bool = False) -> None:
        super().__init__()
        self.work = work
        self.what = what
        self.reports = reports
        self.done = False
        # Where the outcome is handed to the GUI thread, one per pass of its event loop
        # (set by `Workers.start` for a task that does not report); None: emitted at once.
        self.outcomes: _Outcomes | None = None

    def run_here(self) -> None:
        """Run the work on the calling thread (a pool thread) and emit the outcome."""
        try:
            result = self.work(self.progressed.emit) if self.reports else self.work()
        except BaseException as exc:  # the owner sees a sentence; the log keeps the rest
            detail = "".join(traceback.format_exception(exc))
            if isinstance(exc, TimothyError):
                log.warning("%s failed: %s", self.what, exc)
                log.debug("%s", detail)
            else:
                log.error("%s failed:\n%s", self.what, detail)
            outcome: tuple[Any, tuple[Any, ...]] = (
                self.failed,
                (Failure(describe_failure(exc, self.what), detail, exc),),
            )
        else:
            outcome = (self.succeeded, (result,))
        outcomes = self.outcomes
        if outcomes is not None and outcomes.put(self, *outcome):
            return
        self._tell(outcome[0], *outcome[1])
        self._tell(self.finished)

    def _tell(self, signal: Any, *values: Any) -> None:
        """Emit, unless the app has quit meanwhile and deleted this task: work that outlives
        the window (a model still loading at quit) has no one left to tell."""
        try:
            if shiboken6.isValid(self):
                signal.emit(*values)
                return
        except RuntimeError:  # deleted between the check and the emit
            pass
        log.debug("%s finished after the app closed; its outcome is dropped", self.what)


class _Outcomes(QObject):
    """Finished tasks' outcomes, handed to the GUI thread one task per pass of its event loop:
    a zero-interval timer fires once a pass, so painting, input and due timers run between
    two tasks' callbacks instead of after all of them. Lives on the GUI thread; `put` is
    called from the workers."""

    _arrived = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._waiting: deque[tuple[Task, Any, tuple[Any, ...]]] = deque()
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._hand_over)
        self._arrived.connect(self._wake)  # queued: emitted from the workers

    def put(self, task: Task, signal: Any, values: tuple[Any, ...]) -> bool:
        """Queue `task`'s outcome (`signal` with `values`, then `finished`, in one pass);
        False when the window has gone (the task then tells as it always did: no one is
        left to hear)."""
        try:
            if not shiboken6.isValid(self):
                return False
            self._waiting.append((task, signal, values))
            self._arrived.emit()
        except RuntimeError:  # deleted between the check and the emit
            return False
        return True

    def _wake(self) -> None:
        if self._waiting and not self._timer.isActive():
            self._timer.start()

    def _hand_over(self) -> None:
        if self._waiting:
            task, signal, values = self._waiting.popleft()
            if shiboken6.isValid(task):
                signal.emit(*values)
                task.finished.emit()
        if not self._waiting:
            self._timer.stop()


class Workers(QObject):
    """A thread pool that keeps each task alive until its outcome has been delivered.

    `detached` pools run each task on a daemon thread of its own instead, which quitting
    does not wait for: for long jobs that are safe to interrupt at any point (consolidation
    commits each step on its own, a re-embedding keeps what it stored), where a pool's
    threads would hold the app open until a slow model call timed out.
    """

    def __init__(
        self, parent: QObject | None = None, *, threads: int = 2, detached: bool = False
    ) -> None:
        super().__init__(parent)
        self.pool = QThreadPool(self)
        self.pool.setMaxThreadCount(threads)
        # Threads never expire: each keeps its own SQLite connection for the app's life
        # instead of leaving a new one behind every time the pool recycles a thread.
        self.pool.setExpiryTimeout(-1)
        self.detached = detached
        self._threads: list[threading.Thread] = []
        self._running: set[Task] = set()
        self._outcomes = _Outcomes(self)

    def start(self, task: Task) -> Task:
        """Run `task`; it is let go once its outcome has been delivered.

        Nothing the task cannot outlive holds it: its `finished` slot is a method of this
        object (a lambda holding the task made a cycle through the task's C++ object, which
        Python's collector cannot see), and the pool runs the bound `run_here`, not a
        `QRunnable` subclass (PySide kept some of those wrappers, and their tasks, after
        the pool had deleted them). Every task used to stay for the app's life: ~4-6 KB
        each, +22 MB per 5,000.
        """
        self._running.add(task)
        task.finished.connect(self._finished)
        if not task.reports:
            task.outcomes = self._outcomes
        if self.detached:
            thread = threading.Thread(target=task.run_here, name="timothy-job", daemon=True)
            self._threads = [t for t in self._threads if t.is_alive()]
            self._threads.append(thread)
            thread.start()
        else:
            self.pool.start(task.run_here)
        return task

    def run(
        self,
        owner: QObject,
        work: Callable[[], Any],
        what: str,
        *,
        on_success: Callable[[Any], None] | None = None,
        on_failure: Callable[[Failure], None] | None = None,
    ) -> Task:
        """Run `work()` on the pool; `what` finishes the sentence "while ...".

        The callbacks run on the GUI thread, and only while `owner` still exists: a pane
        closed before its query returned simply never hears the answer.
        """
        task = Task(work, what)
        if on_success is not None:
            task.succeeded.connect(while_alive(owner, on_success))
        if on_failure is not None:
            task.failed.connect(while_alive(owner, on_failure))
        return self.start(task)

    def _finished(self) -> None:
        task = self.sender()
        if isinstance(task, Task):
            task.done = True
            self._running.discard(task)

    @property
    def busy(self) -> bool:
        return bool(self._running)

    def wait(self, milliseconds: int) -> bool:
        """Wait for running work (at shut-down); False when some was still running."""
        if not self.detached:
            return bool(self.pool.waitForDone(milliseconds))
        deadline = time.monotonic() + milliseconds / 1000
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        return not any(thread.is_alive() for thread in self._threads)
