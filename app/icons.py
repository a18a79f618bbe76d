"""The app's line icons: SVG files in resources/icons, tinted to the palette when loaded."""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QByteArray, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

from app import theme
from timothy import paths


@lru_cache(maxsize=64)
def _svg(name: str) -> str:
    return (paths.resources_dir() / "icons" / f"{name}.svg").read_text(encoding="utf-8")


def pixmap(
    name: str, color: QColor | str | None = None, size: int = 18, ratio: float = 2.0
) -> QPixmap:
    """The icon drawn in `color` (default: the palette's text colour), crisp at `ratio`."""
    tint = QColor(color) if color is not None else theme.colours().text
    data = _svg(name).replace("currentColor", tint.name())
    renderer = QSvgRenderer(QByteArray(data.encode("utf-8")))
    side = int(size * ratio)
    image = QPixmap(side, side)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    renderer.render(painter, QRectF(0, 0, side, side))
    painter.end()
    image.setDevicePixelRatio(ratio)
    return image


def icon(name: str, color: QColor | str | None = None, size: int = 18) -> QIcon:
    result = QIcon()
    result.addPixmap(pixmap(name, color, size))
    muted = theme.colours().muted
    result.addPixmap(pixmap(name, muted, size), QIcon.Mode.Disabled)
    return result


def icon_size(size: int = 18) -> QSize:
    return QSize(size, size)
