"""Start-up's later loads, one at a time, once the window is usable.

What start-up loads besides the window (the chat model's SDK and set-up, the local embedding
model, the server's model list, Pygments' lexers) is Python and C extensions on worker
threads. Each holds the GIL while it runs (some for one long native call), and several at
once left the GUI thread waiting its turn among them: the window froze for a few hundred
milliseconds at a time while it started. So they run in a line: the next one starts only
once the last one's outcome has reached the GUI thread (it is queued from there, so the pool
is never seen idle between two loads). A load asked for again while it waits replaces the
waiting one (the newest settings' model list, say): each runs once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from app.jobs.workers import Failure, Workers


class StartLoads(QObject):
    finished = Signal()  # every load has run (or failed)

    def __init__(self, workers: Workers, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.workers = workers
        self._waiting: list[tuple[str, Callable[[], Any], Callable[[Any], None] | None]] = []
        self.started = False
        self._running = False
        self.done = False

    def add(
        self, what: str, work: Callable[[], Any], on_success: Callable[[Any], None] | None = None
    ) -> None:
        """Queue `work` (`what` finishes "while ..."), in place of a waiting one of that name."""
        self._waiting = [entry for entry in self._waiting if entry[0] != what]
        self._waiting.append((what, work, on_success))
        self.done = False
        if self.started and not self._running:
            self._next()

    def start(self) -> None:
        """Begin the line (once; later calls do nothing)."""
        if self.started:
            return
        self.started = True
        self._next()

    def _next(self) -> None:
        if not self._waiting:
            self._running = False
            if not self.done:
                self.done = True
                self.finished.emit()
            return
        self._running = True
        what, work, on_success = self._waiting.pop(0)

        def succeeded(result: Any) -> None:
            try:
                if on_success is not None:
                    on_success(result)
            finally:
                self._next()

        def failed(_failure: Failure) -> None:
            self._next()  # logged by the worker; the next load still runs

        self.workers.run(self, work, what, on_success=succeeded, on_failure=failed)
