"""A piece of Markdown prose, rendered by Qt, selectable, exactly as tall as its text.

Qt's Markdown import gives block quotes an indent and nothing else, and inline code the
system's fixed font at its own (often smaller) size with no background. The view adds what
readers expect: a bar beside each quote (painted over the margin it sets), and inline code
in the body's size on a tinted background.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import (
    QPainter,
    QPaintEvent,
    QTextBlock,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextFormat,
)
from PySide6.QtWidgets import QFrame, QSizePolicy, QTextBrowser, QWidget

from app.look import theme

LINE_HEIGHT_PERCENT = 135
LINE_HEIGHT_PROPORTIONAL = QTextBlockFormat.LineHeightTypes.ProportionalHeight.value
QUOTE_INDENT = 16  # px per quote level; the bar sits at the start of it
QUOTE_BAR_WIDTH = 3


def quote_level(block: QTextBlock) -> int:
    return block.blockFormat().intProperty(QTextFormat.Property.BlockQuoteLevel)


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
        self._style_quotes_and_code()

    def _style_quotes_and_code(self) -> None:
        colours = theme.colours()
        document = self.document()
        quoted = QTextCharFormat()
        quoted.setForeground(colours.muted)
        code = QTextCharFormat()
        code.setFontFamilies(theme.MONOSPACE_FAMILIES)
        code.setFontFixedPitch(True)
        code.setFontPointSize(self.font().pointSizeF())  # not the fixed font's own size
        code.setBackground(colours.code_header)
        quotes: list[tuple[int, int]] = []
        spans: list[tuple[int, int]] = []
        block = document.begin()
        while block.isValid():
            level = quote_level(block)
            if level:
                quotes.append((block.position(), level))
            fragments = block.begin()
            while not fragments.atEnd():
                fragment = fragments.fragment()
                if fragment.isValid() and fragment.charFormat().fontFixedPitch():
                    spans.append((fragment.position(), fragment.length()))
                fragments += 1
            block = block.next()
        cursor = QTextCursor(document)
        for position, level in quotes:  # formats change only after the walk
            cursor.setPosition(position)
            indent = QTextBlockFormat()
            indent.setLeftMargin(QUOTE_INDENT * level)
            indent.setRightMargin(0)
            cursor.mergeBlockFormat(indent)
            cursor.movePosition(
                QTextCursor.MoveOperation.EndOfBlock, QTextCursor.MoveMode.KeepAnchor
            )
            cursor.mergeCharFormat(quoted)
        for position, length in spans:
            cursor.setPosition(position)
            cursor.setPosition(position + length, QTextCursor.MoveMode.KeepAnchor)
            cursor.mergeCharFormat(code)

    def quote_bars(self) -> list[QRect]:
        """Where the bars beside block quotes go, in the viewport: one per quoted block and
        level, reaching down to the next quoted block so a quote's bar is unbroken."""
        layout = self.document().documentLayout()
        bars: list[QRect] = []
        block = self.document().begin()
        while block.isValid():
            level = quote_level(block)
            following = block.next()
            if level:
                area = layout.blockBoundingRect(block)
                bottom = area.bottom()
                if following.isValid() and quote_level(following):
                    bottom = layout.blockBoundingRect(following).top()
                top = math.floor(area.top())
                height = max(math.ceil(bottom) - top, 1)
                for depth in range(level):
                    bars.append(QRect(depth * QUOTE_INDENT + 2, top, QUOTE_BAR_WIDTH, height))
            block = following
        return bars

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        bars = self.quote_bars()
        if bars:
            painter = QPainter(self.viewport())
            colour = theme.blend(theme.colours().text, theme.colours().base, 0.28)
            for bar in bars:
                painter.fillRect(bar, colour)
            painter.end()

    def _fit(self) -> None:
        height = math.ceil(self.document().size().height()) + 2 * self.frameWidth()
        if height != self.height():
            self.setFixedHeight(max(height, 1))

    def sizeHint(self) -> QSize:
        return QSize(super().sizeHint().width(), self.height())
