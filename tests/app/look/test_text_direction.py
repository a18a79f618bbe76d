"""A text's direction is its first strong character's, as Qt lays out a paragraph."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.look.text_direction import block_html, text_direction

RTL = Qt.LayoutDirection.RightToLeft
LTR = Qt.LayoutDirection.LeftToRight


@pytest.mark.parametrize(
    ("text", "direction"),
    [
        ("تحب القهوة", RTL),
        ("אחי גר בחיפה", RTL),
        ("2019: سلمى", RTL),  # digits and punctuation are not strong
        ("🎂 يوم ميلاد", RTL),
        ("Salma سلمى", LTR),
        ("«Zoë»", LTR),
        ("2019 🎂", LTR),  # nothing strong: the interface's own direction
        ("", LTR),
    ],
)
def test_the_first_strong_character_decides(text: str, direction: Qt.LayoutDirection) -> None:
    assert text_direction(text) == direction


def test_a_block_says_its_direction() -> None:
    assert block_html("&lt;سلمى&gt;", "<سلمى>") == '<div dir="rtl">&lt;سلمى&gt;</div>'
    assert block_html("Ana", "Ana") == '<div dir="ltr">Ana</div>'
