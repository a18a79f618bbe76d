"""A control's tooltip, and its accessible name when it shows an icon and no words.

A screen reader reads a button by its name, which Qt takes from the button's text: an icon
button (copy, regenerate, send, hide the pane) was read as just "button". Its tooltip's
first words are the name, without the keys that trigger it (the shortcut is announced
apart) or what follows a colon (the tooltip keeps the explanation).
"""

from __future__ import annotations

import re

from PySide6.QtWidgets import QWidget

# "(Ctrl+B)", "(Esc)", "(Enter)", "(F2)": the keys a tooltip names after the action.
_KEYS_RE = re.compile(r"\s*\((?:Ctrl|Alt|Shift|Meta|Esc|Enter|Del|F\d+|⌘)[^)]*\)")


def spoken(tip: str) -> str:
    """The name a screen reader gives a control whose tooltip is `tip`."""
    first = tip.strip().split("\n", 1)[0]
    name = _KEYS_RE.sub("", first).split(": ", 1)[0]
    return name.rstrip(":").strip()


def set_tip(widget: QWidget, tip: str) -> None:
    """Set an icon control's tooltip and, from it, its accessible name."""
    widget.setToolTip(tip)
    widget.setAccessibleName(spoken(tip))
