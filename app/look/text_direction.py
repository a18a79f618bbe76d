"""Which way a text reads, so a memory in Arabic or Hebrew is drawn from the right.

Qt lays out a QLabel's or a QTextDocument's paragraph in its own direction (the first strong
character's, Unicode's rules P2 and P3) and aligns it from that side; a string painted with
`QPainter.drawText` takes the widget's direction instead, so a right-to-left fact in a row
of the browser started at the left edge, its final punctuation on the wrong side.
"""

from __future__ import annotations

import unicodedata

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextOption

# Unicode bidirectional classes of the strong characters: left-to-right, right-to-left
# (Hebrew and others), Arabic letters.
_STRONG_LEFT = "L"
_STRONG_RIGHT = frozenset({"R", "AL"})


def text_direction(text: str) -> Qt.LayoutDirection:
    """The direction `text` reads in: its first strong character's (Unicode P2-P3);
    left to right when it has none (digits, punctuation, emoji only)."""
    for char in text:
        kind = unicodedata.bidirectional(char)
        if kind == _STRONG_LEFT:
            return Qt.LayoutDirection.LeftToRight
        if kind in _STRONG_RIGHT:
            return Qt.LayoutDirection.RightToLeft
    return Qt.LayoutDirection.LeftToRight


def line_option(text: str) -> QTextOption:
    """How to paint `text` as one line in its own direction: from its starting side (the
    right for Arabic or Hebrew), vertically centred. (Qt mirrors a leading alignment for a
    right-to-left text direction.)"""
    option = QTextOption(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
    option.setTextDirection(text_direction(text))
    option.setWrapMode(QTextOption.WrapMode.NoWrap)
    return option


def block_html(text_html: str, text: str) -> str:
    """`text_html` (the HTML of `text`) as a block of rich text of its own, laid out in
    `text`'s direction: an Arabic or Hebrew fact under an English label ("Remembered:",
    "#1 semantic") is aligned from the right, its final punctuation on its side. (Qt takes a
    block's direction from the `dir` attribute; on a span it does nothing.)"""
    right_to_left = text_direction(text) == Qt.LayoutDirection.RightToLeft
    return f'<div dir="{"rtl" if right_to_left else "ltr"}">{text_html}</div>'
