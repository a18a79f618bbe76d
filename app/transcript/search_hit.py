"""A conversation search's words marked in the message that matched, and where the first
one is, so the transcript can scroll to it.

The reply's parts (prose, code) are marked with extra selections, which leave the rendered
document alone; the owner's plain-text bubble is shown as rich text with the words marked.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence

from PySide6.QtCore import QPoint
from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor, QTextDocument
from PySide6.QtWidgets import QPlainTextEdit, QTextEdit, QWidget

from app.look import theme
from app.look.breakable import breakable
from app.transcript.code_block import CodeBlock
from app.transcript.message_widget import MessageWidget

TextView = QTextEdit | QPlainTextEdit


def match_colours() -> tuple[QColor, QColor]:
    """(background, text) of a marked word: a find-in-page amber that reads on both themes."""
    if theme.colours().dark:
        return QColor("#8a6d00"), QColor("#fff8e1")
    return QColor("#ffd54f"), QColor("#1f1f1f")


def spans(text: str, terms: Sequence[str]) -> list[tuple[int, int]]:
    """Where any of `terms` occurs in `text` (case-insensitive), as sorted, non-overlapping
    (start, end) pairs."""
    found: list[tuple[int, int]] = []
    for term in {t for t in terms if t}:
        found += [(m.start(), m.end()) for m in re.finditer(re.escape(term), text, re.IGNORECASE)]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(found):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def marked_html(text: str, terms: Sequence[str]) -> str:
    """Plain `text` as rich text (line breaks and spaces kept) with `terms` marked, long
    words given places to break (`breakable`) as the bubble shows them unmarked."""
    background, foreground = match_colours()
    out: list[str] = []
    last = 0
    for start, end in spans(text, terms):
        out.append(html.escape(breakable(text[last:start])))
        out.append(
            f'<span style="background-color:{background.name()}; color:{foreground.name()};">'
            f"{html.escape(breakable(text[start:end]))}</span>"
        )
        last = end
    out.append(html.escape(breakable(text[last:])))
    return f'<p style="white-space: pre-wrap; margin: 0;">{"".join(out)}</p>'


class SearchHighlight:
    """The search's words marked in one message; `first` is where the first of them is."""

    def __init__(self, message: MessageWidget, terms: Sequence[str]) -> None:
        self.message = message
        self.terms = [t for t in terms if t]
        self.count = 0
        self.first: tuple[TextView, QTextCursor] | None = None
        if message.role == "user":
            self.count = len(spans(message.content, self.terms))
            if self.count:
                message.text_label.show_html(marked_html(message.content, self.terms))
        else:
            for part in message.markdown.parts:
                view: TextView = part.body if isinstance(part, CodeBlock) else part
                self._mark(view)

    def _mark(self, view: TextView) -> None:
        background, foreground = match_colours()
        marked = QTextCharFormat()
        marked.setBackground(background)
        marked.setForeground(foreground)
        document = view.document()
        selections: list[QTextEdit.ExtraSelection] = []
        for term in self.terms:
            cursor = document.find(term, 0, QTextDocument.FindFlag(0))
            while not cursor.isNull():
                selection = QTextEdit.ExtraSelection()
                selection.cursor = cursor
                selection.format = marked
                selections.append(selection)
                cursor = document.find(term, cursor, QTextDocument.FindFlag(0))
        if not selections:
            return
        selections.sort(key=lambda s: s.cursor.selectionStart())
        view.setExtraSelections(selections)
        self.count += len(selections)
        if self.first is None:
            self.first = (view, QTextCursor(selections[0].cursor))

    def clear(self) -> None:
        """Take the marks away (another hit is shown)."""
        message = self.message
        if message.role == "user":
            message.text_label.show_plain(message.content)
        else:
            for view in self.marked_views():
                view.setExtraSelections([])
        self.first = None
        self.count = 0

    def marked_views(self) -> list[TextView]:
        views: list[TextView] = []
        if self.message.role == "assistant":
            for part in self.message.markdown.parts:
                view: TextView = part.body if isinstance(part, CodeBlock) else part
                if view.extraSelections():
                    views.append(view)
        return views

    def top_in(self, canvas: QWidget) -> int:
        """The y of the first marked word (or of the message) in `canvas`'s coordinates."""
        if self.first is not None:
            view, cursor = self.first
            rect = view.cursorRect(cursor)
            return view.viewport().mapTo(canvas, QPoint(0, rect.top())).y()
        return self.message.mapTo(canvas, QPoint(0, 0)).y()
