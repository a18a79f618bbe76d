"""Restoring a backup while the window runs: ask first, then close the store, swap the file
and open it again (`timothy.store.backups.restore_open`) on a worker of its own.

It starts only when nothing else is using the store for long (a reply being written, a
re-embedding, a tidy-up: `busy` says which, and the owner is told to wait). While it runs
the window refuses new turns and memory changes (`started`); the store itself tells any
thread that asks meanwhile that a restore is under way. Then `restored` (every view reads
the store again) or `failed` (the core's sentence; the store is the one it had).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

from app.jobs.workers import Failure, Workers
from app.settings.backups_page import made_text
from app.settings.restore_confirmation import RestoreConfirmation
from timothy.store import Store
from timothy.store.backups import Backup, RestoreResult, aside_path, restore_open

log = logging.getLogger(__name__)

# Reads already under way on the store's workers (the window's first reads, a tab's first
# page) finish before the file is swapped: a connection in use makes the swap refuse. They
# are checked for this often, for at most this long.
READS_CHECK_MS = 10
READS_WAIT_MS = 3000


class StoreRestore(QObject):
    started = Signal(object)  # the Backup: the store closes now; refuse turns and writes
    restored = Signal(object)  # RestoreResult: the store reads the restored file
    failed = Signal(str)  # nothing was restored; the store is as it was
    refused = Signal(str)  # it could not start now, and why

    def __init__(
        self,
        store: Store,
        *,
        now: Callable[[], datetime],
        busy: Callable[[], str | None],
        reads: Workers | None = None,
        parent: QObject | None = None,
    ) -> None:
        """`busy`: why a restore cannot start now, or None. `reads`: the workers reading
        the store, whose reads under way the restore lets finish first."""
        super().__init__(parent)
        self.store = store
        self.now = now
        self.busy = busy
        self.reads = reads
        self.pool = Workers(self, threads=1)
        self.running = False
        self.confirmation: RestoreConfirmation | None = None

    def ask(self, backup: Backup, kind: str, parent: QWidget) -> RestoreConfirmation | None:
        """Show the question (window-modal over `parent`); restores on the owner's yes."""
        reason = self._cannot_start()
        if reason is not None:
            self.refused.emit(reason)
            return None
        when = self.now()
        if self.confirmation is not None:
            self.confirmation.deleteLater()
        dialog = RestoreConfirmation(
            backup, made_text(backup), kind, aside_path(self.store.path, when), parent
        )
        dialog.confirmed.connect(lambda: self.start(backup, when))
        dialog.finished.connect(lambda _code: self._closed(dialog))
        self.confirmation = dialog
        dialog.open()
        return dialog

    def _closed(self, dialog: RestoreConfirmation) -> None:
        if self.confirmation is dialog:
            self.confirmation = None
        dialog.deleteLater()

    def _cannot_start(self) -> str | None:
        if self.running:
            return "A restore is already under way."
        return self.busy()

    def start(self, backup: Backup, when: datetime) -> None:
        """Restore `backup` now (the owner said yes); `when` names the kept-aside file."""
        reason = self._cannot_start()  # something may have started while the question was up
        if reason is not None:
            self.refused.emit(reason)
            return
        self.running = True
        self.started.emit(backup)
        self._swap_when_read(Path(backup.path), when, 0)

    def _swap_when_read(self, path: Path, when: datetime, waited_ms: int) -> None:
        if self.reads is not None and self.reads.busy and waited_ms < READS_WAIT_MS:
            QTimer.singleShot(
                READS_CHECK_MS,
                self,
                lambda: self._swap_when_read(path, when, waited_ms + READS_CHECK_MS),
            )
            return
        store = self.store
        self.pool.run(
            self,
            lambda: restore_open(store, path, now=when),
            "restoring the backup",
            on_success=self._restored,
            on_failure=self._failed,
        )

    def _restored(self, result: RestoreResult) -> None:
        self.running = False
        self.restored.emit(result)

    def _failed(self, failure: Failure) -> None:
        self.running = False
        self.failed.emit(failure.message)

    def wait(self, milliseconds: int) -> bool:
        return self.pool.wait(milliseconds)
