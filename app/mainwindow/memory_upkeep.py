"""The memory's upkeep as the window shows it: re-embedding and daily consolidation (when they
run, and what the status bar and the banner say about them), and the memory counts.

The jobs themselves live in `app.jobs`; this is their wiring into the window.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QWidget

from app.chat.assistant import Assistant
from app.jobs.consolidation_dialog import ConsolidationDialog
from app.jobs.daily_consolidation import DailyConsolidation
from app.jobs.embedding_backfill import EmbeddingBackfill
from app.jobs.workers import Failure, Workers
from app.mainwindow.banner import Banner
from app.mainwindow.server_watch import is_unreachable_message
from app.mainwindow.status_bar import StatusBar, consolidation_text, model_label, report_text
from timothy.assistant import EmbeddingState
from timothy.errors import DamagedStoreError
from timothy.memory.consolidation import ConsolidationReport, last_report, last_run
from timothy.memory.embedding import BackfillResult
from timothy.settings import Settings
from timothy.store import MemoryStatus, Store, backups
from timothy.store.backup_folder import damaged_message, latest_backup
from timothy.store.engine import StoreEngine

log = logging.getLogger(__name__)

# Consolidation waits this long after start-up, so it never competes with the first loads;
# a window left open looks again every hour (a run is due once a day).
CONSOLIDATION_DELAY_MS = 15_000
CONSOLIDATION_CHECK_MS = 3_600_000
TIDY_UP_WAITS_TEXT = "Tidy-up waits for the memory server"
COUNTS_DELAY_MS = 200  # a burst of memory changes recounts once
TIDY_UP = "tidy-up"  # the banner's actions: run the first tidy-up, show what it did
TIDY_DETAILS = "tidy-details"
RESTORE_LATEST = "restore-latest"  # the damage banner's: restore the newest sound backup


class MemoryUpkeep(QObject):
    # The store found its file damaged (on any thread; Qt delivers it on the GUI thread).
    store_damaged = Signal(str)

    def __init__(
        self,
        window: QWidget,
        store: StoreEngine | None,
        assistant: Assistant | None,
        *,
        status: StatusBar,
        banner: Banner,
        workers: Workers,
        jobs: Workers,
        settings: Callable[[], Settings],
        now: Callable[[], datetime],
        show_error: Callable[[str], None],
        show_info: Callable[[str], None],
        consolidation_delay_ms: int | None = CONSOLIDATION_DELAY_MS,
    ) -> None:
        """`consolidation_delay_ms`: when daily consolidation may start after start-up
        (None: not in this window, as in tests that do not exercise it)."""
        super().__init__(window)
        self.window = window
        self.store = store
        self.assistant = assistant
        self.status = status
        self.banner = banner
        self.workers = workers
        self.settings = settings
        self.now = now
        self.show_error = show_error
        self.show_info = show_info
        self.consolidation_delay_ms = consolidation_delay_ms
        self.closing = False  # set by the window: no job starts while it closes
        self.paused = False  # set by the window while a backup is restored: none starts either
        self.backfill = EmbeddingBackfill(jobs, self)
        self.consolidation = DailyConsolidation(jobs, self)
        self.consolidation_dialog: ConsolidationDialog | None = None
        self._consolidation_scheduled = False
        # The first tidy-up of a store waits for the owner's word; once given (or once a run
        # is on record), later runs are daily and only the status bar mentions them.
        self.approved = False
        self.awaiting_approval = False
        self._announce_next = False  # the run the owner asked for: say what it did

        status.consolidation_requested.connect(self.show_consolidation_details)
        status.reembed_requested.connect(self.start_backfill)
        status.backfill_stop_requested.connect(self.backfill.cancel)
        self.backfill.started.connect(lambda model: status.show_backfill(model, 0, 0))
        self.backfill.progressed.connect(
            lambda done, total: status.show_backfill(self.backfill.model or "", done, total)
        )
        self.backfill.finished.connect(self._backfill_finished)
        self.backfill.failed.connect(self._backfill_failed)
        self.consolidation.started.connect(self._consolidation_started)
        self.consolidation.finished.connect(self._consolidation_finished)
        self.consolidation.not_due.connect(self._consolidation_not_due)
        self.consolidation.failed.connect(self._consolidation_failed)
        self.consolidation.approval_needed.connect(self.ask_approval)
        if assistant is not None:
            assistant.embedding_changed.connect(self.embedding_changed)
        self.store_damaged.connect(self._store_damaged)
        if isinstance(store, Store):  # a server looks after its own pages
            store.on_damage(self._heard_damage)

        self._waits_for_server = False  # a tidy-up found the server away (see `server_answers`)
        self._consolidation_timer = QTimer(self)
        self._consolidation_timer.setInterval(CONSOLIDATION_CHECK_MS)
        self._consolidation_timer.timeout.connect(self.consolidate_if_due)
        self._counts_timer = QTimer(self)
        self._counts_timer.setSingleShot(True)
        self._counts_timer.setInterval(COUNTS_DELAY_MS)
        self._counts_timer.timeout.connect(self.refresh_counts)

    # -- counts ------------------------------------------------------------------------

    def memories_changed(self) -> None:
        """Something changed the memory: recount soon."""
        self._counts_timer.start()

    def refresh_counts(self) -> None:
        if self.store is None:
            self.status.show_consolidation("Memory unavailable")
            return
        store = self.store

        def work() -> tuple[int, int, int, datetime | None]:
            return (
                store.memories.count(status=MemoryStatus.ACTIVE),
                store.memories.count(),
                store.memories.count(status=MemoryStatus.STAGED),
                last_run(store),
            )

        def counted(result: tuple[int, int, int, datetime | None]) -> None:
            active, total, staged, when = result
            self.status.show_memory_counts(active, total, staged)
            if (
                not self.consolidation.running
                and self.consolidation.report is None
                and not self.awaiting_approval
            ):
                self.status.show_consolidation(consolidation_text(when, False, self.now()))

        self.workers.run(self.window, work, "counting memories", on_success=counted)
        if self.assistant is not None and not self.backfill.running:
            self.assistant.refresh_embedding()

    # -- embeddings --------------------------------------------------------------------

    def embedding_changed(self, state: EmbeddingState, offer: bool = False) -> None:
        pending = state.configured is not None and state.missing > 0 and state.problem is None
        switching = pending and state.active is not None and state.active != state.configured
        self.status.show_embedding(state, offer_reembed=pending and not self.backfill.running)
        if not pending or self.backfill.running or not offer:
            return
        if switching:
            assert state.configured is not None and state.active is not None
            self.banner.show_message(
                f"Vector search still uses {model_label(state.active)}. Re-embed "
                f"{state.missing:,} memor{'y' if state.missing == 1 else 'ies'} with "
                f"{model_label(state.configured)}? Search moves to it when it is done.",
                kind="info",
                action="reembed",
                action_label="Re-embed",
            )
        else:
            # Catching up: memories the queue missed (saved by the CLI, or while offline),
            # or the first vectors of a newly chosen provider.
            self.start_backfill()

    def start_backfill(self) -> None:
        assistant = self.assistant
        if assistant is None or assistant.embedder is None or self.store is None or self.paused:
            return
        if self.banner.action_name == "reembed":
            self.banner.dismiss()
        self.backfill.start(self.store, assistant.embedder)

    def _backfill_finished(self, result: BackfillResult) -> None:
        name = model_label(result.model)
        if result.active:
            self.status.hide_backfill(f"Vector search: {name}")
        else:
            self.status.hide_backfill(
                f"Embedding stopped: {result.embedded:,} of {result.total:,} done"
            )
        if result.error is not None:
            self.show_error(
                f"Embedding stopped after {result.embedded:,} of {result.total:,} memories: "
                f"{result.error.message}"
            )
        elif result.switched:
            self.show_info(f"Vector search now uses {name}.")
        elif not result.complete:
            self._say_stopped(result)
        if self.assistant is not None:
            self.assistant.refresh_embedding()

    def _say_stopped(self, result: BackfillResult) -> None:
        """The owner stopped it: what was done is kept, what search uses meanwhile, and the
        offer to go on (only the memories still without a vector are embedded)."""
        setup = self.assistant.setup if self.assistant is not None else None
        active = setup.embedding.active if setup is not None else None
        text = (
            f"Embedding stopped after {result.embedded:,} of {result.total:,} memories; "
            "what is done is kept."
        )
        if active is not None and active != result.model:
            text += (
                f" Vector search stays on {model_label(active)} until every memory has a "
                f"{model_label(result.model)} vector."
            )
        self.banner.show_message(text, kind="info", action="reembed", action_label="Resume")

    def _backfill_failed(self, message: str) -> None:
        self.status.hide_backfill("Embedding failed")  # the banner says why
        self.show_error(message)
        if self.assistant is not None:
            self.assistant.refresh_embedding()

    # -- daily consolidation -----------------------------------------------------------

    def schedule_consolidation(self) -> None:
        """Once the assistant is ready: the first check after the delay, then every hour."""
        if self._consolidation_scheduled or self.consolidation_delay_ms is None:
            return
        self._consolidation_scheduled = True
        QTimer.singleShot(self.consolidation_delay_ms, self, self.consolidate_if_due)
        self._consolidation_timer.start()

    # -- damage and backups ------------------------------------------------------------

    def _heard_damage(self, what: str) -> None:
        """Called on whichever thread found the damage: only emits."""
        try:
            self.store_damaged.emit(what)
        except RuntimeError:  # the window is gone (the app is closing)
            log.info("store damage found after the window closed: %s", what)

    def _store_damaged(self, what: str) -> None:
        if not isinstance(self.store, Store):
            return
        log.error("the memory database is damaged: %s", what)
        self.show_damage()

    def show_damage(self) -> None:
        """The damage banner: what is wrong and, with a backup, the offer to restore one."""
        if not isinstance(self.store, Store):
            return
        if latest_backup(self.store.path) is None:  # the sentence says how to save what is left
            self.banner.show_message(
                f"{damaged_message(self.store.path)} Timothy only reads it now.", kind="error"
            )
            return
        self.banner.show_message(
            f"The memory database {self.store.path} is damaged, so nothing was written to it; "
            "Timothy only reads it now. It can put the newest backup that passes its check "
            "in its place (you are asked first).",
            kind="error",
            action=RESTORE_LATEST,
            action_label="Restore latest good backup",
        )

    def backup_if_due(self) -> None:
        """The daily backup, on a worker (a sound store only; the backup is verified)."""
        # A server store's backups are the server's (its admin's pg_dump).
        if not isinstance(self.store, Store) or self.closing or self.paused or self.store.damaged:
            return
        store, now = self.store, self.now()

        def failed(failure: Failure) -> None:
            if not isinstance(failure.error, DamagedStoreError):  # the banner says it already
                self.show_error(f"The daily backup was not made: {failure.message}")

        self.workers.run(
            self.window,
            lambda: backups.backup_if_due(store, now),
            "making the daily backup",
            on_failure=failed,
        )

    def consolidate_if_due(self) -> None:
        """Run daily consolidation on a worker when a day has passed since the last run
        (the daily backup first: a tidy-up that merges makes its own as well)."""
        if self.store is None or self.closing or self.paused:
            return
        self.backup_if_due()
        chat = self.assistant.chat if self.assistant is not None else None
        self.consolidation.run_if_due(
            self.store,
            chat,
            self.settings().consolidation,
            self.now,
            ask_first=not self.approved,
        )

    def ask_approval(self) -> None:
        """The first tidy-up: say what it would do, change nothing until the owner agrees."""
        self.awaiting_approval = True
        settings = self.settings().consolidation
        self.status.show_consolidation(
            "Tidy-up: waiting for your OK", "Click to see what the daily tidy-up does"
        )
        self.banner.show_message(
            "Tidy up your memories? Once a day Timothy can merge near-duplicate memories, "
            f"archive episodes not recalled for {settings.episodic_archive_days} days and lower "
            "its confidence in facts you have not confirmed for "
            f"{settings.semantic_decay_days} days. Nothing has been changed yet; what it does "
            "is listed afterwards.",
            kind="info",
            action=TIDY_UP,
            action_label="Tidy up now",
        )

    def tidy_up_now(self) -> None:
        """The owner agreed: run now (if due), say what it did, and daily from now on."""
        self.approved = True
        self.awaiting_approval = False
        self._announce_next = True
        if self.banner.action_name == TIDY_UP:
            self.banner.dismiss()
        self.consolidate_if_due()

    def _consolidation_started(self) -> None:
        self.status.show_consolidation(consolidation_text(None, True, self.now()))

    def _consolidation_finished(self, report: ConsolidationReport) -> None:
        self.status.show_consolidation(
            report_text(report), f"{report.summary()}\nClick for the details."
        )
        if self._announce_next:
            self._announce_next = False
            self.banner.show_message(
                f"{report.summary()} From now on this runs once a day; the status bar says "
                "when, and what it changed is a click away.",
                kind="info",
                action=TIDY_DETAILS,
                action_label="Details",
            )
        self.memories_changed()

    def _consolidation_not_due(self, when: datetime | None, report: object) -> None:
        if self.consolidation.report is None:  # else this session's summary stays
            self.status.show_consolidation(consolidation_text(when, False, self.now()))

    def _consolidation_failed(self, message: str) -> None:
        if is_unreachable_message(message):
            # Not a failure: the away banner says the server is away and retried, and the
            # tidy-up runs once it answers (`server_answers`), not at the next hourly check.
            self._waits_for_server = True
            self.status.show_consolidation(TIDY_UP_WAITS_TEXT, message)
            return
        self.status.show_consolidation("Consolidation failed", message)
        log.warning("consolidation failed: %s", message)

    def server_answers(self) -> None:
        """The memory server answers again: a tidy-up that waited for it runs now."""
        if self._waits_for_server:
            self._waits_for_server = False
            self.consolidate_if_due()

    def show_consolidation_details(self) -> None:
        """The details of this session's run, or of the last stored one (before the first,
        the question again)."""
        if self.awaiting_approval:
            self.ask_approval()
            return
        if self.consolidation.report is not None:
            self._open_consolidation_dialog(self.consolidation.report)
            return
        store = self.store
        if store is None or self.consolidation.running:
            return

        def shown(report: ConsolidationReport | None) -> None:
            if report is None:
                self.show_info("The daily tidy-up has not run yet.")
            else:
                self._open_consolidation_dialog(report)

        self.workers.run(
            self.window,
            lambda: last_report(store),
            "reading the last consolidation",
            on_success=shown,
        )

    def _open_consolidation_dialog(self, report: ConsolidationReport) -> ConsolidationDialog:
        dialog = ConsolidationDialog(report, self.window)
        dialog.finished.connect(lambda _code: dialog.deleteLater())
        self.consolidation_dialog = dialog
        dialog.open()
        return dialog

    # -- closing -----------------------------------------------------------------------

    def cancel(self) -> None:
        """The window closes: stop both jobs (each keeps what it finished)."""
        self.closing = True
        self.backfill.cancel()
        self.consolidation.cancel()
