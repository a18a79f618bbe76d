"""Invisible characters made visible: review is the security control, so nothing may hide.

A zero-width space or a right-to-left override inside a fact would otherwise look like
nothing at all on a card; here each becomes a marker such as ⟨U+200B⟩.

Emoji are the exception: a family (👨‍👩‍👧) is three pictographs joined by U+200D, a red heart
(❤️) a pictograph and the variation selector U+FE0F. Between or after pictographs those
characters draw the emoji and can hide no word, so they are left alone (as the paste check in
`timothy.memory.provenance` does); the same characters anywhere else are still shown.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Iterator

from timothy.text import INVISIBLE_RE

ZERO_WIDTH_JOINER = "\u200d"
VARIATION_SELECTORS = "\ufe0e\ufe0f"  # text style, emoji style
KEYCAP = "\u20e3"  # 1️⃣ is "1", U+FE0F, U+20E3
KEYCAP_BASES = frozenset("0123456789#*")
SKIN_TONES = range(0x1F3FB, 0x1F400)  # the Fitzpatrick modifiers that follow an emoji


def _pictograph(char: str) -> bool:
    return unicodedata.category(char) == "So" or ord(char) in SKIN_TONES


def _emoji_before(text: str, index: int) -> bool:
    """An emoji ends just before `index` (its selectors and skin tone included)."""
    before = index - 1
    while before >= 0 and (text[before] in VARIATION_SELECTORS or ord(text[before]) in SKIN_TONES):
        before -= 1
    return before >= 0 and _pictograph(text[before])


def _draws_emoji(text: str, index: int) -> bool:
    """The invisible character at `index` is part of an emoji sequence."""
    char = text[index]
    following = text[index + 1 : index + 2]
    if char == ZERO_WIDTH_JOINER:
        return _emoji_before(text, index) and bool(following) and _pictograph(following)
    if char in VARIATION_SELECTORS:
        previous = text[index - 1] if index else ""
        keycap = previous in KEYCAP_BASES and following == KEYCAP
        return bool(previous) and (_pictograph(previous) or keycap)
    return False


def _hidden(text: str) -> Iterator[re.Match[str]]:
    """The invisible characters of `text` that could hide something, in order."""
    for match in INVISIBLE_RE.finditer(text):
        if not _draws_emoji(text, match.start()):
            yield match


def marker(char: str) -> str:
    return f"⟨U+{ord(char):04X}⟩"


def invisible_characters(text: str) -> list[str]:
    """The invisible characters in `text`, in order of first appearance."""
    return list(dict.fromkeys(match.group(0) for match in _hidden(text)))


def describe(char: str) -> str:
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X} {name.title()}" if name else f"U+{ord(char):04X}"


def _replace(text: str, replacement: str | None) -> str:
    """`text` with each hidden character replaced by `replacement` (None: its marker)."""
    parts: list[str] = []
    last = 0
    for match in _hidden(text):
        parts.append(text[last : match.start()])
        parts.append(marker(match.group(0)) if replacement is None else replacement)
        last = match.end()
    parts.append(text[last:])
    return "".join(parts)


def reveal(text: str) -> str:
    """Plain text with every invisible character replaced by its ⟨U+XXXX⟩ marker."""
    return _replace(text, None)


def strip(text: str) -> str:
    """`text` without the invisible characters shown as markers (emoji stay whole)."""
    return _replace(text, "")


def reveal_html(text: str, color: str, background: str = "transparent") -> str:
    """HTML-escaped text (line breaks kept) with each invisible character as a coloured marker."""
    parts: list[str] = []
    last = 0
    for match in _hidden(text):
        parts.append(html.escape(text[last : match.start()]))
        parts.append(
            f'<span style="color:{color}; background-color:{background}; font-weight:600;">'
            f"{html.escape(marker(match.group(0)))}</span>"
        )
        last = match.end()
    parts.append(html.escape(text[last:]))
    return "".join(parts).replace("\n", "<br>")
