"""Draws Timothy's app icon with QPainter and writes the PNG, ICO and ICNS files in resources/icons.

Run `python packaging/draw_icon.py` after changing the drawing and commit what it writes; the
build only copies the files. ICO and ICNS are written here too (both are a small header around
PNG images), so no platform tool is needed to make them.
"""

from __future__ import annotations

import math
import struct
import sys
from pathlib import Path

from PySide6.QtCore import QBuffer, QIODevice, QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QColor,
    QGuiApplication,
    QImage,
    QLinearGradient,
    QPainter,
    QPainterPath,
    QPen,
)

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
# The window's own logos (a reply's 24 px avatar, the welcome's 72 px, at twice the pixels):
# drawn at these sides, so the window reads a small PNG rather than decode and scale the
# 512 px one (8 ms of the GUI thread when the first reply is shown).
WINDOW_SIDES = (48, 144)
INDIGO = QColor("#4F46E5")
TEAL = QColor("#14B8A6")
INK = QColor("#312E81")
SPARK = QColor("#FBBF24")

# ICO holds these sizes (Windows picks per context); 256 is stored as PNG like the rest.
ICO_SIZES = (16, 24, 32, 48, 64, 128, 256)
# ICNS entry types that take PNG data, by pixel size (the @2x types reuse the larger images).
ICNS_TYPES = (
    (b"icp4", 16),
    (b"icp5", 32),
    (b"ic11", 32),
    (b"ic07", 128),
    (b"ic12", 64),
    (b"ic08", 256),
    (b"ic13", 256),
    (b"ic09", 512),
    (b"ic14", 512),
    (b"ic10", 1024),
)


def sparkle(centre: QPointF, outer: float, inner: float) -> QPainterPath:
    """A four-pointed star: the glint of something remembered."""
    path = QPainterPath()
    for i in range(8):
        radius = outer if i % 2 == 0 else inner
        angle = math.pi / 4 * i - math.pi / 2
        point = centre + QPointF(radius * math.cos(angle), radius * math.sin(angle))
        if i == 0:
            path.moveTo(point)
        else:
            path.lineTo(point)
    path.closeSubpath()
    return path


def draw(size: int) -> QImage:
    """The icon at `size` pixels: a speech bubble holding a T, with a sparkle for a kept memory."""
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    p = QPainter(image)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    p.scale(size / 100, size / 100)  # draw on a 100 x 100 grid

    tile = QRectF(4, 4, 92, 92)
    gradient = QLinearGradient(tile.topLeft(), tile.bottomRight())
    gradient.setColorAt(0, INDIGO)
    gradient.setColorAt(1, TEAL)
    p.setPen(Qt.PenStyle.NoPen)
    p.setBrush(QBrush(gradient))
    p.drawRoundedRect(tile, 22, 22)

    bubble = QPainterPath()
    bubble.addRoundedRect(QRectF(18, 20, 64, 50), 16, 16)
    tail = QPainterPath()
    tail.moveTo(28, 62)
    tail.lineTo(24, 82)
    tail.lineTo(46, 66)
    tail.closeSubpath()
    p.setBrush(QColor("white"))
    p.drawPath(bubble.united(tail))

    p.setBrush(INK)
    p.drawRoundedRect(QRectF(34, 31, 32, 8), 4, 4)  # the T's bar
    p.drawRoundedRect(QRectF(46, 31, 8, 30), 4, 4)  # its stem

    p.setBrush(SPARK)
    outline = QPen(QColor("white"))
    outline.setWidthF(2.2)
    outline.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    p.setPen(outline)
    p.drawPath(sparkle(QPointF(79, 21), 13, 4))
    p.end()
    return image


def png_bytes(image: QImage) -> bytes:
    buffer = QBuffer()
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    if not image.save(buffer, "PNG"):
        raise RuntimeError("Qt could not encode a PNG")
    return bytes(buffer.data().data())


def ico(images: dict[int, bytes]) -> bytes:
    """A Windows .ico whose entries are PNG images (read by Windows Vista and later)."""
    header = struct.pack("<HHH", 0, 1, len(images))
    offset = len(header) + 16 * len(images)
    entries, blobs = b"", b""
    for size, blob in images.items():
        side = size if size < 256 else 0  # 0 means 256 in an ICO directory entry
        entries += struct.pack("<BBBBHHII", side, side, 0, 0, 1, 32, len(blob), offset)
        offset += len(blob)
        blobs += blob
    return header + entries + blobs


def icns(images: dict[int, bytes]) -> bytes:
    """A macOS .icns whose entries are PNG images (read by macOS 10.7 and later)."""
    body = b"".join(
        kind + struct.pack(">I", 8 + len(images[size])) + images[size] for kind, size in ICNS_TYPES
    )
    return b"icns" + struct.pack(">I", 8 + len(body)) + body


def main() -> int:
    app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    ICONS.mkdir(parents=True, exist_ok=True)
    sizes = sorted({*ICO_SIZES, *(size for _, size in ICNS_TYPES)})
    images = {size: png_bytes(draw(size)) for size in sizes}
    (ICONS / "timothy.png").write_bytes(images[512])
    (ICONS / "timothy.ico").write_bytes(ico({size: images[size] for size in ICO_SIZES}))
    (ICONS / "timothy.icns").write_bytes(icns(images))
    for side in WINDOW_SIDES:
        (ICONS / f"timothy-{side}.png").write_bytes(png_bytes(draw(side)))
    del app
    names = ["timothy.png", "timothy.ico", "timothy.icns"]
    names += [f"timothy-{side}.png" for side in WINDOW_SIDES]
    for name in names:
        print(f"wrote {ICONS / name} ({(ICONS / name).stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
