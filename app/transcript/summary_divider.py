"""Where a long conversation was compacted: a divider in the transcript ("Earlier messages
summarised for the model"), which opens to show the summary the model now reads instead.

The owner's transcript keeps every message; only the model's view of the turns above the
divider is the summary.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from app.look import icons


def _rule(parent: QWidget) -> QFrame:
    line = QFrame(parent)
    line.setFrameShape(QFrame.Shape.HLine)
    line.setFrameShadow(QFrame.Shadow.Plain)
    line.setProperty("muted", True)
    return line


class SummaryDivider(QWidget):
    def __init__(
        self,
        summary: str,
        compacted: int = 0,
        *,
        message_id: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.message_id = message_id
        self.summary = summary
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 8, 0, 8)
        layout.setSpacing(6)
        row = QHBoxLayout()
        row.setSpacing(10)
        row.addWidget(_rule(self), 1)
        what = f"{compacted} earlier messages" if compacted > 1 else "Earlier messages"
        self.label = QLabel(f"{what} summarised for the model", self)
        self.label.setProperty("muted", True)
        # In a narrow chat pane the words wrap: one line would widen the whole column and
        # push every message's right edge out of sight.
        self.label.setWordWrap(True)
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.label.setToolTip(
            "The conversation grew long, so the model now reads a summary of the turns above "
            "instead of every word. Everything said there is still here, and facts from it "
            "were offered to your memory first."
        )
        row.addWidget(self.label)
        self.toggle = QToolButton(self)
        self.toggle.setProperty("flat", True)
        self.toggle.setCheckable(True)
        self.toggle.setText("Show summary")
        self.toggle.setIcon(icons.icon("eye", "muted", 14))
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.toggled.connect(self.set_expanded)
        row.addWidget(self.toggle)
        row.addWidget(_rule(self), 1)
        layout.addLayout(row)
        self.summary_label = QLabel(summary, self)
        self.summary_label.setObjectName("Notice")
        self.summary_label.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.summary_label.setTextFormat(Qt.TextFormat.PlainText)
        self.summary_label.setWordWrap(True)
        self.summary_label.setContentsMargins(12, 8, 12, 8)
        self.summary_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.summary_label.hide()
        layout.addWidget(self.summary_label)

    @property
    def expanded(self) -> bool:
        return not self.summary_label.isHidden()

    def set_expanded(self, expanded: bool) -> None:
        self.summary_label.setVisible(expanded)
        self.toggle.setText("Hide summary" if expanded else "Show summary")
        if self.toggle.isChecked() != expanded:
            self.toggle.setChecked(expanded)
