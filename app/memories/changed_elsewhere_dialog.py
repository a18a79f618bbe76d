"""The plain dialog for an edit that lost the race with another machine: both versions side
by side, and the choices a user expects. Nothing is lost: their version stands on the
server, and yours is here to take again."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QGridLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.look.screen_room import fitted_width
from app.memories.memory_editor import MemoryEdit
from timothy.store import Memory

EXPLANATION = (
    "This memory was changed on another machine (or in another window) while you edited it, "
    "so your edit was not saved. Both versions are below: keep theirs, or edit again on top "
    "of theirs with your text."
)


@dataclass(frozen=True, slots=True)
class EditConflict:
    """An edit the store refused: the version the owner edited, what they wrote, and what
    the memory says now."""

    memory: Memory
    change: MemoryEdit
    theirs: str


class ChangedElsewhereDialog(QDialog):
    edit_again_requested = Signal(object)  # the EditConflict: supersede theirs with ours

    def __init__(self, conflict: EditConflict, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.conflict = conflict
        self.setWindowTitle("Changed on another machine")
        self.setMinimumWidth(fitted_width(self, 640))
        layout = QVBoxLayout(self)
        explanation = QLabel(EXPLANATION, self)
        explanation.setWordWrap(True)
        layout.addWidget(explanation)

        grid = QGridLayout()
        grid.setHorizontalSpacing(12)
        self.theirs_view = self._version(conflict.theirs)
        self.ours_view = self._version(conflict.change.content)
        for column, (title, view) in enumerate(
            (("Now on the server", self.theirs_view), ("Your edit (not saved)", self.ours_view))
        ):
            heading = QLabel(f"<b>{title}</b>", self)
            grid.addWidget(heading, 0, column)
            grid.addWidget(view, 1, column)
        layout.addLayout(grid, 1)

        self.buttons = QDialogButtonBox(self)
        self.keep_theirs = QPushButton("Keep theirs", self)
        self.keep_theirs.setToolTip("Leave the memory as the other machine saved it")
        self.edit_again = QPushButton("Edit again on top of theirs…", self)
        self.edit_again.setToolTip(
            "Open the editor with your text, to save it as the newest version"
        )
        self.edit_again.setDefault(True)
        self.buttons.addButton(self.keep_theirs, QDialogButtonBox.ButtonRole.RejectRole)
        self.buttons.addButton(self.edit_again, QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.rejected.connect(self.reject)
        self.buttons.accepted.connect(self._edit_again)
        layout.addWidget(self.buttons)
        self.edit_again.setFocus(Qt.FocusReason.OtherFocusReason)

    def _version(self, text: str) -> QPlainTextEdit:
        view = QPlainTextEdit(text, self)
        view.setReadOnly(True)  # selectable: the owner can copy from either
        view.setFrameShape(QFrame.Shape.StyledPanel)
        view.setMinimumHeight(90)
        view.setMaximumHeight(180)
        view.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        return view

    def _edit_again(self) -> None:
        self.accept()
        self.edit_again_requested.emit(self.conflict)
