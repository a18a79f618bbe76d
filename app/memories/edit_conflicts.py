"""What the window does with an edit another machine overtook: the dialog with both
versions, then (when asked) the editor with the owner's text, saved on top of theirs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QWidget

from app.jobs.workers import Failure, Workers
from app.memories.actions import MemoryActions
from app.memories.changed_elsewhere_dialog import ChangedElsewhereDialog, EditConflict
from app.memories.memory_editor import MemoryEditor
from timothy.errors import ChangedElsewhereError
from timothy.store import Memory, MemoryStatus

EDITABLE = (MemoryStatus.STAGED, MemoryStatus.ACTIVE)


class EditConflicts(QObject):
    def __init__(
        self,
        actions: MemoryActions,
        workers: Workers,
        *,
        window: QWidget,
        show_error: Callable[[str], None],
        show_info: Callable[[str], None],
    ) -> None:
        super().__init__(window)
        self.actions = actions
        self.workers = workers
        self.window = window
        self.show_error = show_error
        self.show_info = show_info
        self.dialog: ChangedElsewhereDialog | None = None
        self.editor: MemoryEditor | None = None
        actions.edit_conflicted.connect(self.show)

    def show(self, conflict: EditConflict) -> ChangedElsewhereDialog:
        if self.dialog is not None:
            self.dialog.close()
        dialog = ChangedElsewhereDialog(conflict, self.window)
        dialog.edit_again_requested.connect(self.edit_again)
        dialog.finished.connect(lambda _code: dialog.deleteLater())
        self.dialog = dialog
        dialog.open()
        return dialog

    def edit_again(self, conflict: EditConflict) -> None:
        """Find the memory's newest version (on a worker), then open the editor on it with
        the owner's text."""
        store = self.actions.store
        self.dialog = None

        def newest() -> Memory:
            return store.memories.chain(conflict.memory.id)[-1]

        self.workers.run(
            self,
            newest,
            "reading the memory's newest version",
            on_success=lambda found: self._open_editor(conflict, found),
            on_failure=self._failed,
        )

    def _open_editor(self, conflict: EditConflict, newest: Memory) -> None:
        if newest.status not in EDITABLE:
            self.show_error(
                f"The memory was {newest.status.value} on another machine, so it cannot be "
                f"edited. Your text was: “{conflict.change.content}”. Add it as a new memory "
                "(Memory ▸ Add a memory) to keep it."
            )
            return
        change = conflict.change
        shown = replace(newest, content=change.content, type=change.type, entities=change.entities)
        editor = MemoryEditor(
            shown,
            save_label="Save as the newest version",
            unchanged_from=newest,
            parent=self.window,
        )
        editor.accepted.connect(lambda: self._save(newest, editor))
        editor.finished.connect(lambda _code: editor.deleteLater())
        self.editor = editor
        editor.open()

    def _save(self, newest: Memory, editor: MemoryEditor) -> None:
        self.editor = None
        self.actions.edit(
            self,
            newest,
            editor.edit(),
            on_done=lambda _new: self.show_info("Saved: your text is the newest version."),
            on_failure=self._failed,
        )

    def _failed(self, failure: Failure) -> None:
        if isinstance(failure.error, ChangedElsewhereError):
            return  # overtaken again: the dialog is back, with the newer version
        self.show_error(failure.message)
