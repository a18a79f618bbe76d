"""Invisible characters made visible: review is the security control, so nothing may hide.

A zero-width space or a right-to-left override inside a fact would otherwise look like
nothing at all on a card; here each becomes a marker such as ⟨U+200B⟩.
"""

from __future__ import annotations

import html
import unicodedata

from timothy.text import INVISIBLE_RE


def marker(char: str) -> str:
    return f"⟨U+{ord(char):04X}⟩"


def invisible_characters(text: str) -> list[str]:
    """The invisible characters in `text`, in order of first appearance."""
    return list(dict.fromkeys(match.group(0) for match in INVISIBLE_RE.finditer(text)))


def describe(char: str) -> str:
    name = unicodedata.name(char, "")
    return f"U+{ord(char):04X} {name.title()}" if name else f"U+{ord(char):04X}"


def reveal(text: str) -> str:
    """Plain text with every invisible character replaced by its ⟨U+XXXX⟩ marker."""
    return INVISIBLE_RE.sub(lambda match: marker(match.group(0)), text)


def reveal_html(text: str, color: str, background: str = "transparent") -> str:
    """HTML-escaped text (line breaks kept) with each invisible character as a coloured marker."""
    parts: list[str] = []
    last = 0
    for match in INVISIBLE_RE.finditer(text):
        parts.append(html.escape(text[last : match.start()]))
        parts.append(
            f'<span style="color:{color}; background-color:{background}; font-weight:600;">'
            f"{html.escape(marker(match.group(0)))}</span>"
        )
        last = match.end()
    parts.append(html.escape(text[last:]))
    return "".join(parts).replace("\n", "<br>")
