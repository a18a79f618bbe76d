"""Runs one chat turn's event stream on a worker thread and hands each event to the GUI thread.

Stopping sets the turn's CancelToken: the provider closes its connection and the engine
keeps what already arrived, then ends the stream.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from PySide6.QtCore import QObject, Signal

from app.jobs.workers import Failure, Report, Task, Workers, while_alive
from timothy.chat.events import TurnEvent
from timothy.providers.base import CancelToken

EventSource = Callable[[CancelToken], Iterator[TurnEvent]]


class TurnRunner(QObject):
    event_arrived = Signal(object)  # a TurnEvent, on the GUI thread, in order
    turn_failed = Signal(object)  # a Failure: the stream raised
    turn_finished = Signal(bool)  # always last; True when the owner stopped it

    def __init__(self, workers: Workers, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.workers = workers
        self.cancel_token: CancelToken | None = None
        self.task: Task | None = None

    @property
    def running(self) -> bool:
        return self.task is not None

    def start(self, source: EventSource, what: str = "getting the reply") -> None:
        if self.running:
            raise RuntimeError("a turn is already running")
        token = CancelToken()
        self.cancel_token = token

        def work(report: Report) -> None:
            # Read to the end even after a stop: the engine winds the turn down itself
            # (saving what arrived, saying it was cancelled), which takes a moment once the
            # provider has closed its connection.
            for event in source(token):
                report(event)

        task = Task(work, what, reports=True)
        task.progressed.connect(while_alive(self, self._event))
        task.failed.connect(while_alive(self, self._failed))
        task.finished.connect(while_alive(self, self._finished))
        self.task = task
        self.workers.start(task)

    def stop(self) -> None:
        if self.cancel_token is not None:
            self.cancel_token.cancel()

    def _event(self, event: object) -> None:
        # Events already read before a stop are still shown: they are what was received.
        self.event_arrived.emit(event)

    def _failed(self, failure: Failure) -> None:
        # A stream interrupted because the owner stopped it is not a failure.
        if self.cancel_token is not None and not self.cancel_token.cancelled:
            self.turn_failed.emit(failure)

    def _finished(self) -> None:
        stopped = bool(self.cancel_token and self.cancel_token.cancelled)
        self.task = None
        self.cancel_token = None
        self.turn_finished.emit(stopped)
