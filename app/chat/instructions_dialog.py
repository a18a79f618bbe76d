"""The owner's instructions for one conversation: a short note the model reads on every turn
of it (sent after the stable prefix, so other conversations' prompts stay cache-identical)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.look.screen_room import fitted_width
from timothy.store.sessions import MAX_INSTRUCTIONS_CHARS


class InstructionsDialog(QDialog):
    def __init__(self, instructions: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Instructions for this conversation")
        self.setMinimumWidth(fitted_width(self, 440))
        layout = QVBoxLayout(self)
        intro = QLabel(
            "Timothy follows these in this conversation only, on every turn: a tone, a "
            "language, a role, what to leave out.",
            self,
        )
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.editor = QPlainTextEdit(self)
        self.editor.setPlaceholderText("For example: Answer in French. Keep replies short.")
        self.editor.setPlainText(instructions)
        self.editor.setTabChangesFocus(True)
        self.editor.textChanged.connect(self._changed)
        layout.addWidget(self.editor)
        self.count = QLabel(self)
        self.count.setProperty("muted", True)
        self.count.setAlignment(Qt.AlignmentFlag.AlignRight)
        layout.addWidget(self.count)
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self._changed()

    def instructions(self) -> str:
        return self.editor.toPlainText().strip()

    def _changed(self) -> None:
        length = len(self.instructions())
        self.count.setText(f"{length:,} / {MAX_INSTRUCTIONS_CHARS:,}")
        save = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        save.setEnabled(length <= MAX_INSTRUCTIONS_CHARS)
