"""The app's line icons: SVG files in resources/icons, tinted with a colour of the theme.

`icon()` draws the SVG in the current palette's colour for the role it was given ("text",
"muted", "accent", ...) whenever Qt asks, so the icons follow a switch between light and
dark without being rebuilt. What it drew is kept by name, colour and size: a repaint (every
streamed piece of a reply repaints its buttons) takes a kept picture rather than parsing and
rendering the SVG again.
"""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QByteArray, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QIcon, QIconEngine, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer

from app.look import theme
from timothy import paths


@lru_cache(maxsize=64)
def _svg(name: str) -> str:
    return (paths.resources_dir() / "icons" / f"{name}.svg").read_text(encoding="utf-8")


# The logo drawn at these pixel sides (packaging/draw_icon.py), besides the 512 px one.
LOGO_SIDES = (48, 144)


@lru_cache(maxsize=8)
def logo(size: int, ratio: float = 2.0) -> QPixmap:
    """Timothy's own icon (the packaged application icon), scaled smoothly to `size`: from
    the smallest drawing at least that large (decoding and scaling the 512 px one took the
    window's thread 8 ms, as the first reply was shown)."""
    side = int(size * ratio)
    drawn = next((s for s in LOGO_SIDES if s >= side), None)
    name = f"timothy-{drawn}.png" if drawn is not None else "timothy.png"
    source = QPixmap(str(paths.resources_dir() / "icons" / name))
    if source.isNull():  # a small drawing missing (a damaged install): the large one
        source = QPixmap(str(paths.resources_dir() / "icons" / "timothy.png"))
    scaled = (
        source
        if source.width() == side
        else source.scaled(
            side,
            side,
            Qt.AspectRatioMode.KeepAspectRatio,
            Qt.TransformationMode.SmoothTransformation,
        )
    )
    scaled.setDevicePixelRatio(ratio)
    return scaled


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


Role = str  # a Colours field: "text", "muted", "accent", "accent_text", "danger", "success"


def role_colour(role: Role) -> QColor:
    colour = getattr(theme.colours(), role, None)
    return colour if isinstance(colour, QColor) else theme.colours().text


# Drawn icons by (name, colour, width, height); a handful of names in two palettes and a few
# sizes, so the bound is only a guard.
_drawn: dict[tuple[str, int, int, int], QPixmap] = {}
MAX_DRAWN = 512


class _ThemedSvg(QIconEngine):
    def __init__(self, name: str, role: Role) -> None:
        super().__init__()
        self.name = name
        self.role = role

    def _colour(self, mode: QIcon.Mode) -> QColor:
        return theme.colours().muted if mode == QIcon.Mode.Disabled else role_colour(self.role)

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        data = _svg(self.name).replace("currentColor", self._colour(mode).name())
        QSvgRenderer(QByteArray(data.encode("utf-8"))).render(painter, QRectF(rect))

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        key = (self.name, self._colour(mode).rgba(), size.width(), size.height())
        image = _drawn.get(key)
        if image is None:
            image = QPixmap(size)
            image.fill(Qt.GlobalColor.transparent)
            painter = QPainter(image)
            painter.setRenderHint(QPainter.RenderHint.Antialiasing)
            self.paint(painter, QRect(0, 0, size.width(), size.height()), mode, state)
            painter.end()
            if len(_drawn) >= MAX_DRAWN:
                _drawn.clear()
            _drawn[key] = image
        return image

    def clone(self) -> QIconEngine:
        return _ThemedSvg(self.name, self.role)


def icon(name: str, role: Role = "text", size: int = 18) -> QIcon:
    """The icon drawn in the theme's `role` colour, whatever the palette is when painted."""
    del size  # drawn at whatever size the widget asks for
    return QIcon(_ThemedSvg(name, role))


def icon_size(size: int = 18) -> QSize:
    return QSize(size, size)
