"""Editing a memory: new text, type and entities. Saving (`MemoryActions.edit`) supersedes; the
old version is kept. Without a memory it writes a new one (`MemoryActions.add`).

Invisible characters in the text are named above the box, with a button to remove them,
because an edit is where the owner decides what Timothy will believe.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from app.look import invisible, theme
from app.look.screen_room import fitted_width
from timothy.errors import InvalidInputError
from timothy.store import Memory, MemoryStatus, MemoryType
from timothy.store.memories import validate_content


@dataclass(frozen=True, slots=True)
class MemoryEdit:
    content: str
    type: MemoryType
    entities: tuple[str, ...]


def parse_entities(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


class _Same:
    """The default of `unchanged_from`: the memory being edited."""


_SAME = _Same()


class MemoryEditor(QDialog):
    def __init__(
        self,
        memory: Memory | None,
        *,
        save_label: str = "Save new version",
        unchanged_from: Memory | _Same | None = _SAME,
        parent: QWidget | None = None,
    ) -> None:
        """`unchanged_from`: the active memory a Save would only copy when nothing differs
        from it (Save waits for a change); by default `memory` itself when it is active."""
        super().__init__(parent)
        self.memory = memory
        baseline = memory if isinstance(unchanged_from, _Same) else unchanged_from
        self.baseline = (
            baseline if baseline is not None and baseline.status is MemoryStatus.ACTIVE else None
        )
        self.setWindowTitle("Edit memory" if memory is not None else "Add a memory")
        self.setMinimumWidth(fitted_width(self, 520))
        layout = QVBoxLayout(self)
        explanation = QLabel(
            "Saving keeps the current text in this memory's history and makes the new text "
            "the active version."
            if memory is not None
            else "Write one fact about you, as you want Timothy to know it. It is saved as "
            "confirmed: Timothy can recall it from your next message.",
            self,
        )
        explanation.setWordWrap(True)
        explanation.setProperty("muted", True)
        layout.addWidget(explanation)

        self.invisible_row = QWidget(self)
        row = QHBoxLayout(self.invisible_row)
        row.setContentsMargins(0, 0, 0, 0)
        self.invisible_label = QLabel(self.invisible_row)
        self.invisible_label.setWordWrap(True)
        self.invisible_label.setStyleSheet(f"color: {theme.colours().invisible_marker.name()};")
        row.addWidget(self.invisible_label, 1)
        self.strip_button = QPushButton("Remove them", self.invisible_row)
        self.strip_button.clicked.connect(self.remove_invisible)
        row.addWidget(self.strip_button)
        layout.addWidget(self.invisible_row)

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.ExpandingFieldsGrow)
        self.content_edit = QPlainTextEdit(memory.content if memory else "", self)
        self.content_edit.setMinimumHeight(110)
        # Tab goes on to Type, as in every other field: a fact is one line of prose, and a
        # tab typed into it would be saved (the owner walking the form by keyboard wrote
        # "\t\t\t" into the memory instead).
        self.content_edit.setTabChangesFocus(True)
        self.content_edit.textChanged.connect(self._refresh)
        form.addRow("Fact", self.content_edit)
        self.type_combo = QComboBox(self)
        for kind in MemoryType:
            self.type_combo.addItem(kind.value.capitalize(), kind.value)
        kind = memory.type if memory else MemoryType.SEMANTIC
        self.type_combo.setCurrentIndex(list(MemoryType).index(kind))
        self.type_combo.currentIndexChanged.connect(self._refresh)
        form.addRow("Type", self.type_combo)
        self.entities_edit = QLineEdit(", ".join(memory.entities) if memory else "", self)
        self.entities_edit.textChanged.connect(self._refresh)
        self.entities_edit.setPlaceholderText(
            "People, places, things it is about, separated by commas"
        )
        form.addRow("About", self.entities_edit)
        layout.addLayout(form)

        self.problem_label = QLabel(self)
        self.problem_label.setStyleSheet(f"color: {theme.colours().danger.name()};")
        self.problem_label.hide()
        layout.addWidget(self.problem_label)

        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        save = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        save.setText(save_label)
        save.setDefault(True)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout.addWidget(self.buttons)
        self._refresh()
        self.content_edit.setFocus(Qt.FocusReason.OtherFocusReason)

    def remove_invisible(self) -> None:
        self.content_edit.setPlainText(invisible.strip(self.content_edit.toPlainText()))
        self.entities_edit.setText(invisible.strip(self.entities_edit.text()))

    def _refresh(self) -> None:
        text = self.content_edit.toPlainText()
        hidden = invisible.invisible_characters(text + self.entities_edit.text())
        self.invisible_row.setVisible(bool(hidden))
        if hidden:
            names = "; ".join(invisible.describe(char) for char in hidden[:4])
            self.invisible_label.setText(f"This text contains invisible characters: {names}.")
        problem = ""
        try:
            validate_content(text)  # the store's own rule, so Save is never offered in vain
        except InvalidInputError as exc:
            problem = str(exc)
        self.problem_label.setText(problem)
        self.problem_label.setVisible(bool(problem))
        save = self.buttons.button(QDialogButtonBox.StandardButton.Save)
        # Nothing changed: a Save would only add a copy of the version to its history.
        save.setEnabled(not problem and not self.unchanged())

    def unchanged(self) -> bool:
        """Whether the fields say exactly what the active memory (`baseline`) says."""
        base = self.baseline
        if base is None:
            return False
        edit = self.edit()
        return (edit.content, edit.type, edit.entities) == (
            base.content,
            base.type,
            tuple(base.entities),
        )

    def edit(self) -> MemoryEdit:
        kind = self.type_combo.currentData()
        return MemoryEdit(
            content=self.content_edit.toPlainText().strip(),
            type=MemoryType(kind) if kind else MemoryType.SEMANTIC,
            entities=parse_entities(self.entities_edit.text()),
        )
