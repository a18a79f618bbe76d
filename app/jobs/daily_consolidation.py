"""Daily consolidation in the app: after start-up, when a day has passed since the last run,
`consolidate` runs on a worker (merging near-duplicates, archiving stale episodes, decaying
stale facts). Quitting cancels it; each step commits on its own, so the next start finishes.

The very first run waits for the owner's word (`ask_first`): a store that has never been
tidied says so (`approval_needed`) instead of changing anything.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import QObject, Signal

from app.jobs.workers import Failure, Report, Task, Workers, while_alive
from timothy.memory.consolidation import (
    DAILY_LOCK,
    ConsolidationReport,
    consolidate,
    due,
    last_report,
    last_run,
)
from timothy.memory.settings import ConsolidationSettings
from timothy.providers.base import CancelToken, ChatProvider
from timothy.store.engine import StoreEngine

RUNNING = "running"


@dataclass(frozen=True, slots=True)
class NotDue:
    last_run: datetime | None
    report: ConsolidationReport | None


@dataclass(frozen=True, slots=True)
class NeverRun:
    """Due, but never run on this store: nothing was changed, the owner is asked first."""


class DailyConsolidation(QObject):
    started = Signal()  # it was due and is running now
    finished = Signal(object)  # the ConsolidationReport of this run
    not_due = Signal(object, object)  # (last run time, its report or None)
    approval_needed = Signal()  # due, never run here, and asked to ask first
    failed = Signal(str)

    def __init__(self, workers: Workers, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.workers = workers
        self.cancel_token: CancelToken | None = None
        self.report: ConsolidationReport | None = None  # this session's run

    @property
    def running(self) -> bool:
        return self.cancel_token is not None

    def run_if_due(
        self,
        store: StoreEngine,
        chat: ChatProvider | None,
        settings: ConsolidationSettings,
        now: Callable[[], datetime],
        *,
        ask_first: bool = False,
    ) -> bool:
        """Check on a worker whether a run is due, and run it there; False if one runs.
        With `ask_first`, a store never tidied before is left as it is (`approval_needed`)."""
        if self.running:
            return False
        token = CancelToken()
        self.cancel_token = token

        def work(report: Report) -> ConsolidationReport | NotDue | NeverRun:
            moment = now()
            # Once across every machine that shares the store: the run holds its lock.
            with store.exclusive(DAILY_LOCK) as mine:
                if not mine or not due(store, moment, settings):
                    return NotDue(last_run(store), last_report(store))
                if ask_first and last_report(store) is None:
                    return NeverRun()
                report(RUNNING)
                return consolidate(store, chat, settings, now=moment, cancel=token)

        task = Task(work, "tidying your memories", reports=True)
        task.progressed.connect(while_alive(self, lambda _value: self.started.emit()))
        task.succeeded.connect(while_alive(self, self._succeeded))
        task.failed.connect(while_alive(self, self._failed))
        self.workers.start(task)
        return True

    def cancel(self) -> None:
        if self.cancel_token is not None:
            self.cancel_token.cancel()

    def _succeeded(self, result: ConsolidationReport | NotDue | NeverRun) -> None:
        self.cancel_token = None
        if isinstance(result, ConsolidationReport):
            self.report = result
            self.finished.emit(result)
        elif isinstance(result, NeverRun):
            self.approval_needed.emit()
        else:
            self.not_due.emit(result.last_run, result.report)

    def _failed(self, failure: Failure) -> None:
        self.cancel_token = None
        self.failed.emit(failure.message)
