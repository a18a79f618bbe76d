"""A machine without libxcb-cursor0: the launcher and `timothy doctor` name the missing
library and the package to install, before Qt can abort with its generic plugin message.

The loader is real; to make the library missing on a machine that has it, the subprocess
tests make `ctypes.CDLL` refuse that one name (the standard library, not Timothy's code)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.conftest import REPO
from timothy.health import XCB_LIBRARIES, missing_xcb_libraries, xcb_library_problem, xcb_wanted

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="X11 is Linux's")

# Runs `timothy ARGS` with libxcb-cursor.so.0 unloadable, then says whether Qt was imported.
WITHOUT_XCB_CURSOR = textwrap.dedent(
    """
    import ctypes, sys
    real = ctypes.CDLL
    def refuse(name, *args, **kwargs):
        if str(name).startswith("libxcb-cursor"):
            raise OSError(f"{name}: cannot open shared object file: No such file or directory")
        return real(name, *args, **kwargs)
    ctypes.CDLL = refuse
    from app.launcher import main
    code = main(sys.argv[1:])
    print("Qt imported:", "PySide6.QtWidgets" in sys.modules)
    sys.exit(code)
    """
)


def run_without_xcb_cursor(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    import os

    environment = {k: v for k, v in os.environ.items() if k not in ("QT_QPA_PLATFORM",)}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-c", WITHOUT_XCB_CURSOR, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=environment,
        cwd=REPO,
    )


X11 = {"DISPLAY": ":987", "WAYLAND_DISPLAY": ""}


@linux_only
def test_the_loader_is_asked_for_the_real_library_names() -> None:
    assert missing_xcb_libraries((("libc.so.6", "libc6"),)) == []
    assert xcb_library_problem((("libc.so.6", "libc6"),)) is None
    absent = (("libxcb-not-there-for-tests.so.0", "libxcb-not-there0"),)
    problem = xcb_library_problem(absent)
    assert problem is not None
    assert "libxcb-not-there-for-tests.so.0" in problem
    assert "sudo apt-get install libxcb-not-there0" in problem
    assert XCB_LIBRARIES == (("libxcb-cursor.so.0", "libxcb-cursor0"),)


@linux_only
def test_xcb_is_wanted_under_x11_or_when_asked_for() -> None:
    assert xcb_wanted({"DISPLAY": ":0"})
    assert not xcb_wanted({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"})
    assert not xcb_wanted({})
    assert xcb_wanted({"QT_QPA_PLATFORM": "xcb"})
    assert xcb_wanted({"QT_QPA_PLATFORM": "xcb;offscreen", "WAYLAND_DISPLAY": "wayland-0"})
    assert not xcb_wanted({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":0"})


@linux_only
def test_the_launcher_names_the_missing_library_before_qt_loads() -> None:
    result = run_without_xcb_cursor(env=X11)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Timothy cannot open its window." in result.stderr
    assert "libxcb-cursor.so.0" in result.stderr
    assert "sudo apt-get install libxcb-cursor0" in result.stderr
    assert "Qt imported: False" in result.stdout
    assert "could not load the Qt platform plugin" not in result.stderr


@linux_only
def test_the_doctor_names_the_missing_library() -> None:
    result = run_without_xcb_cursor("doctor", env=X11)
    assert result.returncode == 1, result.stdout + result.stderr
    [line] = [line for line in result.stdout.splitlines() if "Qt libraries" in line]
    assert line.startswith("FAIL  Qt libraries: Qt's X11 (xcb) platform plugin needs ")
    assert "sudo apt-get install libxcb-cursor0" in line
    # Without an X11 display the library is not needed: reported, not a failure.
    headless = run_without_xcb_cursor("doctor", env={"DISPLAY": "", "WAYLAND_DISPLAY": ""})
    [line] = [line for line in headless.stdout.splitlines() if "Qt libraries" in line]
    assert line.startswith("ok    Qt libraries: not needed here (no X11 display)")
