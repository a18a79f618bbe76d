"""Escape in a search box empties it, before the window's own Escape can take the key.

The window gives Escape to "stop the reply" (a window-wide shortcut), and Qt offers a key to
shortcuts before the focused widget sees it: without this, Escape in a search with text did
nothing at all. An empty search lets Escape go on to the window.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QLineEdit


def empties_on_escape(search: QLineEdit, event: QEvent) -> bool:
    """For `search`'s event filter: True when `event` was its Escape, and used."""
    if (
        not isinstance(event, QKeyEvent)
        or event.key() != Qt.Key.Key_Escape
        or event.modifiers() != Qt.KeyboardModifier.NoModifier
        or not search.text()
    ):
        return False
    if event.type() == QEvent.Type.ShortcutOverride:
        event.accept()  # the key is the search's: the press comes here, not to a shortcut
        return True
    if event.type() == QEvent.Type.KeyPress:
        search.clear()
        return True
    return False
