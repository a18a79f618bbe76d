"""Screens for Qt's offscreen platform: its own is 800x800, smaller than the window's size
at 100 % (1380x860), which the window now fits into its screen. The tests' application runs
on a desktop-sized screen; a test of a small or scaled screen starts a child process on a
laptop's (QT_SCALE_FACTOR 1.5 or 2 makes its 1280x800 853x533 or 640x400 logical pixels)."""

from __future__ import annotations

import json
from pathlib import Path

DESKTOP = (1920, 1200)
LAPTOP = (1280, 800)
# A small second monitor, as small as the laptop's panel at 200 % in logical pixels.
SMALL_MONITOR = (640, 400)


def offscreen_platform(folder: Path, *sizes: tuple[int, int]) -> str:
    """The platform name (for `-platform` or QT_QPA_PLATFORM) of offscreen screens of
    `sizes` physical pixels, side by side from the left (the first is the primary), their
    configuration written into `folder`."""
    screens = []
    left = 0
    for number, (width, height) in enumerate(sizes):
        screens.append(
            {
                "name": f"Screen{width}x{height}" + (f"-{number + 1}" if number else ""),
                "x": left,
                "y": 0,
                "width": width,
                "height": height,
                "logicalDpi": 96,
                "logicalBaseDpi": 96,
                "dpr": 1,
            }
        )
        left += width
    named = "-".join(f"{width}x{height}" for width, height in sizes)
    config = folder / f"screen-{named}.json"
    config.write_text(json.dumps({"screens": screens}), encoding="utf-8")
    return f"offscreen:configfile={config}"
