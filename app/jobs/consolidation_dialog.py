"""The details of a consolidation run: every merge (with the chain it made), every archived
episode, every lowered confidence, and the groups left alone with why."""

from __future__ import annotations

from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
    QWidget,
)

from app.look import theme
from app.look.screen_room import fitted
from app.look.time_text import exact_time
from timothy.memory.consolidation import ConsolidationReport


class ConsolidationDialog(QDialog):
    def __init__(self, report: ConsolidationReport, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Memory consolidation")
        self.resize(fitted(self, 720, 440))
        layout = QVBoxLayout(self)
        lines = report.details()
        self.summary_label = QLabel(lines[0], self)
        self.summary_label.setWordWrap(True)
        self.summary_label.setProperty("heading", True)
        layout.addWidget(self.summary_label)
        took = f"{report.duration_seconds:.1f} s"
        models = ", ".join(
            f"{role} {name}"
            for role, name in (("chat", report.chat_model), ("vectors", report.embedding_model))
            if name
        )
        meta = f"Ran {exact_time(report.ran_at)} · took {took}"
        if report.compared or report.not_compared:
            meta += f" · compared {report.compared:,} memories"
            if report.not_compared:
                meta += f" ({report.not_compared:,} without vectors yet)"
        if models:
            meta += f" · {models}"
        self.meta_label = QLabel(meta, self)
        self.meta_label.setProperty("muted", True)
        self.meta_label.setWordWrap(True)
        layout.addWidget(self.meta_label)
        self.details_view = QPlainTextEdit(self)
        self.details_view.setReadOnly(True)
        self.details_view.setFont(theme.monospace_font())
        self.details_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        changes = lines[1:]
        self.details_view.setPlainText(
            "\n\n".join(changes) if changes else "Nothing needed tidying: no memory was changed."
        )
        layout.addWidget(self.details_view, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
