"""Re-embedding memories with the configured model, on a worker, with progress and a stop.

The same job as `timothy embed`: every active memory lacking a vector for the
model gets one, and vector search moves to the model only once none is missing. Stopping
keeps what was embedded; the next backfill carries on from there.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, Signal

from app.jobs.workers import Failure, Report, Task, Workers, while_alive
from timothy.memory.embedding import BackfillResult, backfill
from timothy.providers.base import CancelToken, EmbeddingProvider
from timothy.store.engine import StoreEngine

PROGRESS_EVERY_SECONDS = 0.1  # at most ten progress reports a second reach the GUI thread


class EmbeddingBackfill(QObject):
    started = Signal(str)  # the model's id
    progressed = Signal(int, int)  # (memories done, memories to do)
    finished = Signal(object)  # BackfillResult
    failed = Signal(str)

    def __init__(self, workers: Workers, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.workers = workers
        self.cancel_token: CancelToken | None = None
        self.model: str | None = None

    @property
    def running(self) -> bool:
        return self.cancel_token is not None

    def start(self, store: StoreEngine, embedder: EmbeddingProvider) -> bool:
        """Start unless one is running; False when it was already running."""
        if self.running:
            return False
        token = CancelToken()
        self.cancel_token = token
        self.model = embedder.model_id

        def work(report: Report) -> BackfillResult:
            last = [0.0]

            def progress(done: int, total: int) -> None:
                now = time.monotonic()
                if done in (0, total) or now - last[0] >= PROGRESS_EVERY_SECONDS:
                    last[0] = now
                    report((done, total))

            return backfill(store, embedder, progress=progress, cancel=token)

        task = Task(work, "embedding your memories", reports=True)
        task.progressed.connect(while_alive(self, self._progressed))
        task.succeeded.connect(while_alive(self, self._succeeded))
        task.failed.connect(while_alive(self, self._failed))
        self.started.emit(self.model)
        self.workers.start(task)
        return True

    def cancel(self) -> None:
        if self.cancel_token is not None:
            self.cancel_token.cancel()

    def _progressed(self, value: tuple[int, int]) -> None:
        done, total = value
        self.progressed.emit(done, total)

    def _succeeded(self, result: BackfillResult) -> None:
        self.cancel_token = None
        self.finished.emit(result)

    def _failed(self, failure: Failure) -> None:
        self.cancel_token = None
        self.failed.emit(failure.message)
