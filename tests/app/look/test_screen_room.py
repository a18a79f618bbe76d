"""On a laptop's 1280x800 panel at 150 % and 200 % display scale (853x533 and 640x400
logical pixels) the window and every dialog fit the screen: each lies inside its available
area, whole (never squeezed below its own minimum), Settings' Save and Cancel are on screen
on every page, the window lays out whole at its minimum size, and a window saved at its full
size on a desktop screen comes back onto the small one.

Each scale runs in a fresh interpreter on an offscreen screen of that size (the tests' own
application is on a desktop screen: tests/fakes/screens.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from tests.app.conftest import WindowFactory, chat_settings
from tests.fakes.openai_server import OpenAIServer
from tests.fakes.screens import DESKTOP, LAPTOP, SMALL_MONITOR, offscreen_platform
from timothy.settings import save_settings
from timothy.store import Store

CHILD = """
import json, sys
from datetime import datetime, timezone
from pathlib import Path
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QWidget
app = QApplication(sys.argv[:1])
from app.look import theme
theme.apply(app, scheme=Qt.ColorScheme.Light)
from app.chat.instructions_dialog import InstructionsDialog
from app.jobs.consolidation_dialog import ConsolidationDialog
from app.mainwindow.main_window import MainWindow
from app.memories.changed_elsewhere_dialog import ChangedElsewhereDialog, EditConflict
from app.memories.forget_confirmation import ForgetConfirmation
from app.memories.memory_editor import MemoryEdit
from app.settings.restore_confirmation import RestoreConfirmation
from app.settings.settings_dialog import PAGES
from tests.app.mainwindow.test_layout import assert_laid_out_whole
from timothy import paths
from timothy.memory.consolidation import ConsolidationReport
from timothy.settings import load_settings
from timothy.store import Store
from timothy.store.backups import Backup, BackupReason

area = app.primaryScreen().availableGeometry()
found = {"area": area.getRect(), "outside": [], "squeezed": [], "cut": [], "sideways": []}

def settle():
    for _ in range(5):
        app.processEvents()

def check(name, window):
    \"\"\"On screen (frame and all) and at least its layout's minimum size.\"\"\"
    settle()
    if not area.contains(window.frameGeometry()):
        found["outside"].append([name, window.frameGeometry().getRect()])
    need = window.minimumSizeHint()
    if window.width() < need.width() or window.height() < need.height():
        found["squeezed"].append([name, window.size().toTuple(), need.toTuple()])

def on_screen(name, widget):
    \"\"\"The widget lies whole inside its window and the screen's available area.\"\"\"
    top = widget.window()
    inside = QRect(widget.mapTo(top, QPoint(0, 0)), widget.size())
    where = QRect(widget.mapToGlobal(QPoint(0, 0)), widget.size())
    if not widget.isVisible() or not top.rect().contains(inside) or not area.contains(where):
        found["cut"].append([name, where.getRect()])

store = Store.open(paths.data_dir(None))
window = MainWindow(store, settings=load_settings(), consolidation_delay_ms=None)
window.show()
QTest.qWaitForWindowExposed(window)
# The memory counts arrive from a worker: waited for, so they cannot land in the status bar
# between the resize below and its check (a label then lags its new text by one layout).
for _ in range(500):
    if window.status.memory_label.text():
        break
    QTest.qWait(20)
check("window", window)
found["window"] = window.frameGeometry().getRect()
window.resize(window.minimumSize())
settle()
try:
    assert_laid_out_whole(window)
except AssertionError as error:
    found["squeezed"].append(["window at its minimum", str(error)])

settings = window.open_settings()
for page in PAGES:
    settings.show_page(page)
    check(f"Settings {page}", settings)
    for button in settings.buttons.buttons():
        on_screen(f"Settings {page}: {button.text()}", button)
    bar = getattr(settings.pages.currentWidget(), "horizontalScrollBar", None)
    if bar is not None and bar().isVisible():
        found["sideways"].append(page)
settings.reject()

editor = window.add_memory()
check("memory editor", editor)
for button in editor.buttons.buttons():
    on_screen(f"memory editor: {button.text()}", button)
editor.reject()
for name, dialog in (
    ("about", window.show_about()),
    ("shortcuts", window.show_shortcuts()),
    ("user guide", window.show_user_guide()),
):
    check(name, dialog)
    dialog.reject()
now = datetime.now(timezone.utc)
memory = store.memories.add("Works at Acme as a data analyst in the Lisbon office")
conflict = EditConflict(memory, MemoryEdit("Works at Globex", memory.type, ()), "Works at Acme")
backup = Backup(Path("backups") / "timothy.db", now, BackupReason.MANUAL, 4096, 2, 1)
aside = Path("/home/owner/.local/share/timothy/timothy.db.before-restore")
for name, dialog in (
    ("instructions", InstructionsDialog("Answer in French.", window.chat)),
    ("consolidation", ConsolidationDialog(ConsolidationReport(ran_at=now), window)),
    ("changed elsewhere", ChangedElsewhereDialog(conflict, window)),
    ("restore", RestoreConfirmation(backup, "Wed 01 Jan 2025, 10:00", "daily", aside, window)),
):
    dialog.open()
    check(name, dialog)
    dialog.reject()
# Forgetting 40 memories at once, one of them long: the list scrolls, the buttons stay.
chosen = [store.memories.add(f"Memory {i} of the move to the Lisbon office") for i in range(39)]
chosen.append(store.memories.add("A long one. " * 400))
forget = ForgetConfirmation(chosen, {}, Path("backups"), window, holding=[Path("backups/a.db")])
forget.open()
check("forget", forget)
for button in (forget.this_button, forget.cancel_button, forget.purge_box):
    on_screen(f"forget: {button.text()}", button)
forget.reject()
window.close()
store.close()
print(json.dumps(found))
"""


# The window left at a size, its state saved as at quitting.
SAVING = """
import sys
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
from app.mainwindow.main_window import MainWindow
from timothy import paths
from timothy.settings import load_settings
from timothy.store import Store
store = Store.open(paths.data_dir(None))
window = MainWindow(store, settings=load_settings(), consolidation_delay_ms=None)
window.show()
QTest.qWaitForWindowExposed(window)
window.resize(int(sys.argv[1]), int(sys.argv[2]))
QTest.qWait(50)
window.close()
store.close()
import json
print(json.dumps(window.size().toTuple()))
"""


def on_laptop(scale: str, folder: Path, child: str = CHILD, *args: str) -> dict[str, list[object]]:
    """Run `child` on a 1280x800 offscreen screen at `scale`; what it found."""
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": offscreen_platform(folder, LAPTOP),
        "QT_SCALE_FACTOR": scale,
    }
    done = subprocess.run(
        [sys.executable, "-c", child, *args], capture_output=True, text=True, timeout=180, env=env
    )
    assert done.returncode == 0, done.stderr
    found: dict[str, list[object]] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


@pytest.mark.parametrize(("scale", "logical"), [("1.5", (853, 533)), ("2", (640, 400))])
def test_the_window_and_its_dialogs_fit_a_laptop_screen_at_scale(
    data_dir: Path,
    tmp_path: Path,
    openai_server: OpenAIServer,
    scale: str,
    logical: tuple[int, int],
) -> None:
    Store.open(data_dir).close()
    save_settings(chat_settings(openai_server))  # a chat model: the composer as it is used
    found = on_laptop(scale, tmp_path)
    assert found["area"] == [0, 0, *logical]
    assert found["outside"] == []
    assert found["squeezed"] == []
    assert found["cut"] == []
    # The Chat page is read without scrolling sideways (its provider's name is shortened).
    assert "chat" not in found["sideways"]


def test_a_window_saved_on_a_desktop_screen_comes_back_onto_a_small_one(
    qtbot: QtBot, make_window: WindowFactory, tmp_path: Path, openai_server: OpenAIServer
) -> None:
    save_settings(chat_settings(openai_server))
    window = make_window()
    window.resize(1380, 860)
    window.move(480, 300)  # its lower right corner far past a 640x400 screen
    qtbot.waitUntil(lambda: window.size().toTuple() == (1380, 860), timeout=5000)
    window.save_state()
    found = on_laptop("2", tmp_path)
    assert found["outside"] == []
    x, y, width, height = found["window"]  # type: ignore[misc]
    assert x >= 0 and y >= 0 and x + width <= 640 and y + height <= 400


def test_a_window_saved_at_a_smaller_scale_is_shrunk_onto_the_screen(
    data_dir: Path, tmp_path: Path, openai_server: OpenAIServer
) -> None:
    """From 175 % (731x457) to 200 % (640x400): Qt's restore moves and shrinks the saved
    geometry onto the screen, as far as the window's minimum lets it."""
    Store.open(data_dir).close()
    save_settings(chat_settings(openai_server))
    assert on_laptop("1.75", tmp_path, SAVING, "720", "430") == [720, 430]
    found = on_laptop("2", tmp_path)
    assert found["outside"] == []
    assert found["squeezed"] == []


# The window moved from a desktop screen to a small second monitor and back, as a drag
# between monitors does: what the window is on each, after each move.
MOVING = """
import json, sys
from PySide6.QtCore import QPoint
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv[:1])
from app.mainwindow.main_window import MainWindow
from tests.app.mainwindow.test_layout import assert_laid_out_whole
from timothy import paths
from timothy.settings import load_settings
from timothy.store import Store
store = Store.open(paths.data_dir(None))
window = MainWindow(store, settings=load_settings(), consolidation_delay_ms=None)
window.show()
QTest.qWaitForWindowExposed(window)
screens = sorted(app.screens(), key=lambda screen: screen.geometry().x())  # left to right
desktop, other, small = screens
found = []
# Dragged across to the other desktop-sized monitor (its centre over it, a part still over the
# first), on to the small one (its centre over that), and back.
steps = (
    (other, lambda: other.geometry().topLeft() - QPoint(400, 0)),
    (small, lambda: small.geometry().center() - window.frameGeometry().center() + window.pos()),
    (desktop, lambda: desktop.availableGeometry().topLeft()),
)
for screen, where in steps:
    window.move(where())
    for _ in range(250):
        if window.screen() is screen:
            break
        QTest.qWait(20)
    for _ in range(5):
        app.processEvents()
    try:
        assert_laid_out_whole(window)
        whole = ""
    except AssertionError as error:
        whole = str(error)
    found.append({
        "screen": screens.index(window.screen()),
        "area": screen.availableGeometry().getRect(),
        "frame": window.frameGeometry().getRect(),
        "minimum": window.minimumSize().toTuple(),
        "whole": whole,
    })
window.close()
store.close()
print(json.dumps(found))
"""


def test_a_window_moved_to_a_smaller_monitor_is_fitted_to_it_and_back(
    data_dir: Path, tmp_path: Path, openai_server: OpenAIServer
) -> None:
    """Its size and minimum were fitted to the desktop screen at start; on the small monitor
    they are fitted again, so the window lies whole on it and the owner can still resize it,
    and back on the desktop the usual minimum returns. One that fits is never moved."""
    Store.open(data_dir).close()
    save_settings(chat_settings(openai_server))
    screens = offscreen_platform(tmp_path, DESKTOP, DESKTOP, SMALL_MONITOR)
    env = {**os.environ, "QT_QPA_PLATFORM": screens}
    done = subprocess.run(
        [sys.executable, "-c", MOVING], capture_output=True, text=True, timeout=180, env=env
    )
    assert done.returncode == 0, done.stderr
    dragged, on_small, on_desktop = json.loads(done.stdout.strip().splitlines()[-1])

    assert on_small["screen"] == 2
    x, y, width, height = on_small["area"]
    left, top, frame_width, frame_height = on_small["frame"]
    assert x <= left and left + frame_width <= x + width, on_small
    assert y <= top and top + frame_height <= y + height, on_small
    assert on_small["minimum"][0] < width and on_small["minimum"][1] < height
    assert on_small["whole"] == ""
    assert on_desktop["screen"] == 0
    assert on_desktop["minimum"] == [760, 480]
    assert on_desktop["whole"] == ""
    # A window that fits the screen it was dragged to stays where it was dropped.
    assert dragged["screen"] == 1
    x, _y, _width, _height = dragged["area"]
    assert dragged["frame"][0] == x - 400
    assert dragged["minimum"] == [760, 480]
