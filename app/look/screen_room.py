"""The room a window has on its screen: sizes laid out at 100 % scale, kept within it.

Windows and dialogs ask for the size they were designed at (on a roomy screen at 100 %) and
get that, or the screen's room when that is less. At 150 % or 200 % display scale a
1280x800 laptop panel is 853x533 or 640x400 logical pixels: a dialog made 760x560 there put
its Save and Cancel past the bottom edge, out of reach, and a minimum size larger than the
screen could not be undone by the owner.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QMargins, QObject, QRect, QSize
from PySide6.QtGui import QGuiApplication, QScreen
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


def fit_onto_screen(window: QWidget, screen: QScreen, minimum: QSize) -> None:
    """Fit a top-level `window` to `screen`, which it has just moved to or whose room has
    changed: its minimum `minimum` or less, and, when it is larger than the screen's room,
    shrunk to it and moved whole onto the screen's available area. A window that fits is
    left where it is: one dragged across to another monitor is not pulled away from the
    pointer. A maximised or full-screen window is the system's to place. The geometry is set
    in one step, inside `screen`: a resize first could leave the window's centre on the
    screen it came from and send it back there."""
    area = screen.availableGeometry()
    frame = frame_margins(window)
    room = area.marginsRemoved(SCREEN_GAP + frame).size().expandedTo(QSize(1, 1))
    least = minimum.boundedTo(room)
    window.setMinimumSize(least.boundedTo(window.minimumSize()))  # lowered before the resize
    too_large = window.width() > room.width() or window.height() > room.height()
    if too_large and not (window.isMaximized() or window.isFullScreen()):
        size = window.size().boundedTo(room).expandedTo(least)
        outer = QRect(window.frameGeometry().topLeft(), size.grownBy(frame))
        x = max(area.left(), min(outer.left(), area.right() + 1 - outer.width()))
        y = max(area.top(), min(outer.top(), area.bottom() + 1 - outer.height()))
        outer.moveTo(x, y)
        window.setGeometry(outer.marginsRemoved(frame))
    window.setMinimumSize(least)


class ScreenWatch(QObject):
    """Fits a top-level window again (`fit_onto_screen`) when it moves to another screen (a
    smaller second monitor, another display scale) or its screen's available area changes (a
    taskbar grown, the resolution lowered): a size and minimum fitted at start to a large
    screen would leave it hanging off a smaller one's edges, its minimum not undoable."""

    def __init__(self, window: QWidget, minimum: QSize) -> None:
        super().__init__(window)
        self._window = window
        self._minimum = minimum
        self._screen: QScreen | None = None
        self._watching = False
        self._fitting = False
        window.installEventFilter(self)  # its native window exists once it is shown

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self._window and event.type() == QEvent.Type.Show and not self._watching:
            handle = self._window.windowHandle()
            if handle is not None:
                self._watching = True
                handle.screenChanged.connect(self._screen_changed)
                self._follow(handle.screen())
        return False

    def _screen_changed(self, screen: QScreen | None) -> None:
        if self._fitting:  # the fit itself never moves the window to another screen
            return
        self._follow(screen)
        self._fit()

    def _follow(self, screen: QScreen | None) -> None:
        if self._screen is not None:
            self._screen.availableGeometryChanged.disconnect(self._fit)
        self._screen = screen
        if screen is not None:
            screen.availableGeometryChanged.connect(self._fit)

    def _fit(self) -> None:
        if self._screen is None or self._fitting:
            return
        self._fitting = True
        try:
            fit_onto_screen(self._window, self._screen, self._minimum)
        finally:
            self._fitting = False
