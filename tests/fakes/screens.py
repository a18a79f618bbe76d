"""Screens for Qt's offscreen platform: its own is 800x800, smaller than the window's size
at 100 % (1380x860), which the window now fits into its screen. The tests' application runs
on a desktop-sized screen; a test of a small or scaled screen starts a child process on a
laptop's (QT_SCALE_FACTOR 1.5 or 2 makes its 1280x800 853x533 or 640x400 logical pixels)."""

from __future__ import annotations

import json
from pathlib import Path

DESKTOP = (1920, 1200)
LAPTOP = (1280, 800)


def offscreen_platform(folder: Path, size: tuple[int, int]) -> str:
    """The platform name (for `-platform` or QT_QPA_PLATFORM) of one offscreen screen of
    `size` physical pixels, its configuration written into `folder`."""
    width, height = size
    screen = {
        "name": f"Screen{width}x{height}",
        "x": 0,
        "y": 0,
        "width": width,
        "height": height,
        "logicalDpi": 96,
        "logicalBaseDpi": 96,
        "dpr": 1,
    }
    config = folder / f"screen-{width}x{height}.json"
    config.write_text(json.dumps({"screens": [screen]}), encoding="utf-8")
    return f"offscreen:configfile={config}"
