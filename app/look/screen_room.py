"""The room a window has on its screen: sizes laid out at 100 % scale, kept within it.

Windows and dialogs ask for the size they were designed at (on a roomy screen at 100 %) and
get that, or the screen's room when that is less. At 150 % or 200 % display scale a
1280x800 laptop panel is 853x533 or 640x400 logical pixels: a dialog made 760x560 there put
its Save and Cancel past the bottom edge, out of reach, and a minimum size larger than the
screen could not be undone by the owner.
"""

from __future__ import annotations

from PySide6.QtCore import QMargins, QSize
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QWidget

# The window manager's frame (title bar and borders) around a window whose own frame is not
# known yet, i.e. before it is first shown: a typical title bar with room to spare.
FRAME_GUESS = QMargins(8, 40, 8, 8)
# Kept free around a window that fills its screen's room: Qt centres a dialog by its top and
# left frame only, so one exactly as tall as the room lost its bottom border off the screen.
SCREEN_GAP = QMargins(4, 4, 4, 4)


def _shown_over(widget: QWidget) -> QWidget:
    """The window `widget` is (a main window) or opens over (a dialog: its parent's window),
    whose screen and frame it shares."""
    parent = widget.parentWidget()
    return parent.window() if parent is not None else widget.window()


def frame_margins(widget: QWidget) -> QMargins:
    """The frame around `widget`'s window: as the platform reports it once shown, or
    FRAME_GUESS before (a dialog's frame is taken to be its parent window's)."""
    for window in (widget.window(), _shown_over(widget)):
        handle = window.windowHandle()
        if handle is not None and window.isVisible():
            return handle.frameMargins()
    return FRAME_GUESS


def screen_room(widget: QWidget) -> QSize:
    """The largest size `widget`'s window may have, frame excluded: its screen's available
    area (the taskbar and docks left out) less the frame and SCREEN_GAP."""
    screen = _shown_over(widget).screen() or QGuiApplication.primaryScreen()
    area = screen.availableGeometry().marginsRemoved(SCREEN_GAP + frame_margins(widget))
    return area.size().expandedTo(QSize(1, 1))


def fitted(widget: QWidget, width: int, height: int) -> QSize:
    """`width` x `height`, or less where `widget`'s screen has less room."""
    return QSize(width, height).boundedTo(screen_room(widget))


def fitted_width(widget: QWidget, width: int) -> int:
    return min(width, screen_room(widget).width())
