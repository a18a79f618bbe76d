"""The chat header's title: the conversation's whole name when there is room, shortened with
an ellipsis (whole in the tooltip) when the pane is narrow, never cut off mid-letter."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QLabel, QWidget

MIN_WIDTH = 48  # px: room for a letter or two and the ellipsis


class TitleLabel(QLabel):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.full_text = ""

    def setText(self, text: str) -> None:
        self.full_text = text
        self.setToolTip(text)
        self._elide()
        self.updateGeometry()

    def text(self) -> str:
        """The whole title (what is painted may be shortened)."""
        return self.full_text

    def shown_text(self) -> str:
        return super().text()

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        width = self.fontMetrics().horizontalAdvance(self.full_text) + 8
        return QSize(width, hint.height())

    def minimumSizeHint(self) -> QSize:
        return QSize(MIN_WIDTH, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        metrics = self.fontMetrics()
        super().setText(
            metrics.elidedText(self.full_text, Qt.TextElideMode.ElideRight, self.width())
        )
