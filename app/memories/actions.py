"""What the owner does to a memory (confirm, reject, still true, archive, restore, edit, add
by hand, forget for good, export and import), in one place that every view of the memory pane
and the window's Memory menu use: it changes the store on a worker and says what happened,
whichever view it happened in.

Forgetting for good goes through `timothy.memory.forget.forget`, never the store's bare
`MemoryRepository.forget`: only the former redacts the text from past turns' memory blocks,
`remember` tool messages and stored reports. Restoring is the store's `restore` (rejected ->
staged, archived -> active). The views offer both where they offer the others
(`BROWSE_ACTIONS` in `memory_browser.py`).

The lists refresh from the store's own change events (`StoreEvents`), which also hear what
the chat engine's extraction stages; these signals say what the owner did.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from PySide6.QtCore import QObject, Signal, SignalInstance

from app.jobs.workers import Failure, Workers
from app.memories.changed_elsewhere_dialog import EditConflict
from app.memories.memory_editor import MemoryEdit
from timothy.errors import ChangedElsewhereError, TimothyError
from timothy.memory.forget import backups_holding, forget, purge_backups
from timothy.store import Memory
from timothy.store.engine import StoreEngine
from timothy.store.forget import ForgetReport
from timothy.store.records import MemorySource, utc_now
from timothy.store.transfer import export_to_file, import_from_file

Changed = Callable[[list[Memory], list[str]], None]  # (the memories as they are now, problems)


class MemoryActions(QObject):
    memory_confirmed = Signal(object)  # the Memory, now active
    memory_rejected = Signal(object)
    memory_reconfirmed = Signal(object)
    memory_archived = Signal(object)
    memory_restored = Signal(object)  # rejected -> staged, archived -> active
    memories_forgotten = Signal(object)  # the ForgetReport of one forget for good
    purging_backups = Signal(int)  # then, when asked: how many backups it is removed from
    backups_purged = Signal(object)  # the PurgeReport (or a Failure: nothing was purged)
    memory_superseded = Signal(object)  # the new, active version an edit made
    memory_added = Signal(object)  # a memory the owner wrote by hand (active)
    memories_imported = Signal(int)  # how many; the store says nothing of each, so reload
    edit_conflicted = Signal(object)  # an EditConflict: changed on another machine meanwhile

    def __init__(
        self,
        store: StoreEngine,
        workers: Workers,
        *,
        now: Callable[[], datetime] = utc_now,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.store = store
        self.workers = workers
        self.now = now

    def _apply(self, action: str, memory: Memory) -> Memory:
        """Do `action` to one memory in the store (blocking: on a worker)."""
        memories = self.store.memories
        if action == "confirm":
            return memories.promote(memory.id, now=self.now())
        if action == "reject":
            return memories.reject(memory.id, now=self.now())
        if action == "reconfirm":
            return memories.reconfirm(memory.id, now=self.now())
        if action == "archive":
            return memories.archive(memory.id, now=self.now())
        if action == "restore":
            return memories.restore(memory.id, now=self.now())
        raise ValueError(action)

    def change(
        self,
        owner: QObject,
        action: str,
        memories: Sequence[Memory],
        what: str,
        *,
        on_done: Changed,
        on_failure: Callable[[Failure], None],
        tolerant: bool = True,
    ) -> None:
        """Do `action` to each of `memories` on a worker; `what` finishes "while ...".

        Tolerant, a memory the store refuses (changed meanwhile elsewhere) becomes a problem
        and the others still change; otherwise the refusal is the failure. After a signal
        for each change, `on_done(changed, problems)` runs on the GUI thread.
        """
        chosen = list(memories)

        def work() -> tuple[list[Memory], list[str]]:
            done: list[Memory] = []
            problems: list[str] = []
            for memory in chosen:
                try:
                    done.append(self._apply(action, memory))
                except TimothyError as exc:
                    if not tolerant:
                        raise
                    problems.append(str(exc))
            return done, problems

        def finished(result: tuple[list[Memory], list[str]]) -> None:
            done, problems = result
            for memory in done:
                self.signal_for(action).emit(memory)
            on_done(done, problems)

        self.workers.run(owner, work, what, on_success=finished, on_failure=on_failure)

    def edit(
        self,
        owner: QObject,
        memory: Memory,
        change: MemoryEdit,
        *,
        on_done: Callable[[Memory], None],
        on_failure: Callable[[Failure], None],
    ) -> None:
        """Save an edit as a new active version that supersedes `memory` (the old one stays
        in its history), on a worker; then `memory_superseded` and `on_done(new)`. An edit
        another machine overtook gives `edit_conflicted` (and `on_failure`)."""

        def work() -> Memory:
            return self.store.memories.supersede(
                memory.id,
                change.content,
                entities=change.entities,
                type=change.type,
                now=self.now(),
            )

        def finished(new: Memory) -> None:
            self.memory_superseded.emit(new)
            on_done(new)

        def failed(failure: Failure) -> None:
            if isinstance(failure.error, ChangedElsewhereError):
                # Not an error to read in a banner: the window shows both versions.
                self.edit_conflicted.emit(EditConflict(memory, change, failure.error.theirs))
            on_failure(failure)

        self.workers.run(
            owner, work, "saving the edited memory", on_success=finished, on_failure=failed
        )

    def signal_for(self, action: str) -> SignalInstance:
        signals: dict[str, SignalInstance] = {
            "confirm": self.memory_confirmed,
            "reject": self.memory_rejected,
            "reconfirm": self.memory_reconfirmed,
            "archive": self.memory_archived,
            "restore": self.memory_restored,
        }
        return signals[action]

    def chains(
        self,
        owner: QObject,
        memories: Sequence[Memory],
        *,
        on_done: Callable[[dict[str, list[Memory]]], None],
        on_failure: Callable[[Failure], None],
    ) -> None:
        """Each memory's whole version chain (oldest first), read on a worker: what
        forgetting "all versions" would remove."""
        ids = [memory.id for memory in memories]

        def work() -> dict[str, list[Memory]]:
            return {memory_id: self.store.memories.chain(memory_id) for memory_id in ids}

        self.workers.run(
            owner, work, "reading the memory's history", on_success=on_done, on_failure=on_failure
        )

    def backups_holding(
        self,
        owner: QObject,
        memory_ids: Sequence[str],
        *,
        on_done: Callable[[list[Path]], None],
        on_failure: Callable[[Failure], None],
    ) -> None:
        """The backups that hold any of these memories, read on a worker."""
        ids = list(memory_ids)
        self.workers.run(
            owner,
            lambda: backups_holding(self.store, ids),
            "reading the backups",
            on_success=on_done,
            on_failure=on_failure,
        )

    def forget(
        self,
        owner: QObject,
        memories: Sequence[Memory],
        *,
        chain: bool,
        on_done: Callable[[ForgetReport], None],
        on_failure: Callable[[Failure], None],
        purge: int = 0,
    ) -> None:
        """Forget `memories` for good (with `chain`, every version of each), and every copy
        of their text in the store, on a worker; then `memories_forgotten` and
        `on_done(report)`. It cannot be undone. With `purge` (the number of backups that
        hold them), they are then removed from the backups too, on a worker of their own
        (`purging_backups`, then `backups_purged`)."""
        ids = [memory.id for memory in memories]

        def finished(report: ForgetReport) -> None:
            self.memories_forgotten.emit(report)
            on_done(report)
            if purge:
                self._purge(report, chain, purge)

        self.workers.run(
            owner,
            lambda: forget(self.store, ids, chain=chain),
            "forgetting for good",
            on_success=finished,
            on_failure=on_failure,
        )

    def _purge(self, report: ForgetReport, chain: bool, count: int) -> None:
        self.purging_backups.emit(count)
        store, ids = self.store, list(report.forgotten)
        self.workers.run(
            self,
            lambda: purge_backups(store, ids, chain=chain),
            "removing it from the backups",
            on_success=self.backups_purged.emit,
            on_failure=self.backups_purged.emit,
        )

    def add(
        self,
        owner: QObject,
        change: MemoryEdit,
        *,
        on_done: Callable[[Memory], None],
        on_failure: Callable[[Failure], None],
    ) -> None:
        """Save a memory the owner wrote: active at once (they said it), source "manual"."""

        def work() -> Memory:
            return self.store.memories.add(
                change.content,
                type=change.type,
                entities=change.entities,
                source=MemorySource.MANUAL,
                now=self.now(),
            )

        def finished(memory: Memory) -> None:
            self.memory_added.emit(memory)
            on_done(memory)

        self.workers.run(
            owner, work, "saving the new memory", on_success=finished, on_failure=on_failure
        )

    def export_to(
        self,
        owner: QObject,
        path: Path,
        *,
        on_done: Callable[[int], None],
        on_failure: Callable[[Failure], None],
    ) -> None:
        """Write every memory to `path` as JSON Lines (as `timothy memories export`)."""
        self.workers.run(
            owner,
            lambda: export_to_file(self.store, path),
            "exporting your memories",
            on_success=on_done,
            on_failure=on_failure,
        )

    def import_from(
        self,
        owner: QObject,
        path: Path,
        *,
        on_done: Callable[[int], None],
        on_failure: Callable[[Failure], None],
    ) -> None:
        """Read memories from a JSON Lines file (as `timothy memories import`): all or none."""

        def finished(count: int) -> None:
            self.memories_imported.emit(count)
            on_done(count)

        self.workers.run(
            owner,
            lambda: import_from_file(self.store, path, now=self.now()),
            "importing memories",
            on_success=finished,
            on_failure=on_failure,
        )
