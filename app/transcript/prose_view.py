"""A piece of Markdown prose, rendered by Qt, selectable, exactly as tall as its text."""

from __future__ import annotations

import math

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QTextBlockFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import QFrame, QSizePolicy, QTextBrowser, QWidget

from app.look import theme

LINE_HEIGHT_PERCENT = 135
LINE_HEIGHT_PROPORTIONAL = QTextBlockFormat.LineHeightTypes.ProportionalHeight.value


class ProseView(QTextBrowser):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setOpenExternalLinks(True)
        self.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        theme.see_through(self)
        self.document().setDocumentMargin(0)
        self.document().documentLayout().documentSizeChanged.connect(self._fit)
        self.markdown = ""
        self._fit()

    def set_markdown(self, text: str) -> None:
        if text == self.markdown:
            return
        self.markdown = text
        document = self.document()
        document.setMarkdown(text, QTextDocument.MarkdownFeature.MarkdownDialectGitHub)
        # Qt's Markdown import sets no line height; a little more reads far better.
        spacing = QTextBlockFormat()
        spacing.setLineHeight(LINE_HEIGHT_PERCENT, LINE_HEIGHT_PROPORTIONAL)
        cursor = QTextCursor(document)
        cursor.select(QTextCursor.SelectionType.Document)
        cursor.mergeBlockFormat(spacing)

    def _fit(self) -> None:
        height = math.ceil(self.document().size().height()) + 2 * self.frameWidth()
        if height != self.height():
            self.setFixedHeight(max(height, 1))

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self.height())
