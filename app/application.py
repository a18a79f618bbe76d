"""Starting the Qt application: the window, the store, clean shut-down."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

from PySide6.QtCore import QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from app.collector import set_aside_start
from app.look import theme
from app.mainwindow.main_window import MainWindow
from timothy import __version__, paths
from timothy.errors import TimothyError
from timothy.health import Check
from timothy.settings import load_settings
from timothy.store.engine import StoreEngine
from timothy.store.location import open_store
from timothy.tokens import encoding

# How long a thread running Python may keep the GIL while another waits for it, once the
# window is on screen (Python's default, kept while the window's modules are imported: 5 ms).
# The GUI thread gives the GIL up around its calls into Qt and waits for it again after each;
# behind a worker busy in Python (a store read made into memories, lexing, an import) every
# such wait was up to 5 ms, so 20 ms of GUI work could take 60-90 ms to come back.
SWITCH_INTERVAL_S = 0.001


def responsive_threads() -> None:
    """Let the GUI thread have the GIL back sooner from busy workers (`SWITCH_INTERVAL_S`):
    called as the window is shown, when the imports that prefer long turns are done."""
    sys.setswitchinterval(SWITCH_INTERVAL_S)


def warm_up() -> threading.Thread:
    """Load the token encoding on a thread while Qt starts and the window is built; join it
    before the window is shown. Its first load holds the GIL for ~0.1 s in one call (tiktoken
    building its tables), which would freeze a window already on screen."""
    thread = threading.Thread(target=encoding, name="timothy-warm-up", daemon=True)
    thread.start()
    return thread


def run_app(data_dir: Path | None, *, warming: threading.Thread | None = None) -> int:
    """`warming`: the encoding's warm-up, when the launcher started it before importing Qt."""
    warming = warming or warm_up()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    assert isinstance(app, QApplication)
    app.setApplicationName("Timothy")
    app.setOrganizationName("Timothy")
    app.setApplicationVersion(__version__)
    app.setWindowIcon(QIcon(str(paths.resources_dir() / "icons" / "timothy.png")))
    # Wayland docks take the icon from the desktop entry of this name (install-desktop-entry.sh).
    app.setDesktopFileName("timothy")
    theme.follow_system(app)
    store_error: str | None = None
    store: StoreEngine | None = None
    try:
        # The data folder's file, or the shared server TIMOTHY_STORE_URL or the settings name.
        store = open_store(data_dir=paths.data_dir(data_dir), settings=load_settings().store)
    except TimothyError as exc:
        store_error = str(exc)
    # The window builds the chat engine and the embedding queue from the owner's settings
    # (app/chat/assistant.py) and rebuilds them whenever the settings change.
    # Pygments' common lexers are imported and compiled off the GUI thread once the rest of
    # start-up has loaded, so the first code block in a reply does not freeze the window.
    window = MainWindow(store, store_error=store_error, warm_up_code=True)
    warming.join()
    set_aside_start(window.start_loads)  # the collector is back once it has loaded: collector.py
    responsive_threads()
    window.show()
    # For smoke tests and screenshots: quit on its own after this many milliseconds.
    auto_quit = os.environ.get("TIMOTHY_QUIT_AFTER_MS")
    if auto_quit:
        QTimer.singleShot(int(auto_quit), window.close)
    code = app.exec()
    if store is not None:
        store.close()
    return int(code)


def screen_platforms() -> list[str]:
    """The Qt platforms that would show this machine's screen, best first; none when headless."""
    if sys.platform == "darwin":
        return ["cocoa"]
    if sys.platform == "win32":
        return ["windows"]
    if os.environ.get("WAYLAND_DISPLAY"):
        return ["wayland", "xcb"]
    return ["xcb"] if os.environ.get("DISPLAY") else []


def check_qt() -> Check:
    """A Qt window can be created: on the screen's own platform, or offscreen with no screen."""
    try:
        wanted = screen_platforms()
        if not os.environ.get("QT_QPA_PLATFORM"):
            # A platform plugin that fails to load is fatal to Qt (the process aborts before the
            # report is printed). Offscreen as the last resort turns that into a FAIL line.
            os.environ["QT_QPA_PLATFORM"] = ";".join([*wanted, "offscreen"])
        else:
            wanted = []  # the caller chose the platform; any that loads is what they asked for
        from PySide6.QtWidgets import QWidget

        app = QApplication.instance() or QApplication(sys.argv[:1])
        platform = QApplication.platformName()
        if wanted and platform not in wanted:
            return Check(
                "Qt window",
                False,
                f"the {' or '.join(wanted)} platform plugin could not be loaded "
                f"(fell back to {platform})",
            )
        widget = QWidget()
        widget.resize(200, 100)
        widget.show()
        app.processEvents()
        shown = widget.isVisible()
        widget.close()
        if not shown:
            return Check("Qt window", False, "a window could not be shown")
        return Check("Qt window", True, f"platform {platform}")
    except Exception as exc:
        return Check("Qt window", False, str(exc))
