"""Copying the whole store to another engine (Settings ▸ Storage), on a worker, with
progress and a stop: the same job as `timothy store copy`. The source is only read; a copy
that was stopped (or lost its connection) is finished by running it again."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from app.jobs.workers import Failure, Report, Task, Workers, while_alive
from timothy.store.copy import CopyReport, copy_store
from timothy.store.engine import StoreEngine

PROGRESS_EVERY_SECONDS = 0.1


class StoreCopy(QObject):
    progressed = Signal(str, int, int)  # (what: memories, vectors, conversations; done; total)
    finished = Signal(object)  # the CopyReport (`stopped` when asked to stop)
    failed = Signal(str, bool)  # (why; whether some of it was copied before it failed)

    def __init__(self, workers: Workers, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.workers = workers
        self._stop: threading.Event | None = None
        # Whether the running copy has written a batch (set on its worker, read once the
        # worker is done): a copy that failed before any had nothing to finish.
        self._moved = threading.Event()

    @property
    def running(self) -> bool:
        return self._stop is not None

    def start(self, source: StoreEngine, open_target: Callable[[], StoreEngine]) -> bool:
        """Copy `source` into the store `open_target` opens (on the worker, closed after).
        False when a copy is running already."""
        if self.running:
            return False
        stop = threading.Event()
        self._stop = stop
        moved = self._moved = threading.Event()

        def work(report: Report) -> CopyReport:
            last = [0.0]

            def progress(what: str, done: int, total: int) -> None:
                if done:
                    moved.set()
                now = time.monotonic()
                if done in (0, total) or now - last[0] >= PROGRESS_EVERY_SECONDS:
                    last[0] = now
                    report((what, done, total))

            target = open_target()
            try:
                return copy_store(source, target, progress=progress, stop=stop.is_set)
            finally:
                target.close()

        task = Task(work, "copying your memory", reports=True)
        task.progressed.connect(while_alive(self, self._progressed))
        task.succeeded.connect(while_alive(self, self._succeeded))
        task.failed.connect(while_alive(self, self._failed))
        self.workers.start(task)
        return True

    def cancel(self) -> None:
        if self._stop is not None:
            self._stop.set()

    def _progressed(self, value: tuple[str, int, int]) -> None:
        self.progressed.emit(*value)

    def _succeeded(self, report: CopyReport) -> None:
        self._stop = None
        self.finished.emit(report)

    def _failed(self, failure: Failure) -> None:
        self._stop = None
        self.failed.emit(failure.message, self._moved.is_set())
