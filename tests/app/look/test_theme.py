"""Dark mode follows the palette: colours, the style sheet and already-made icons change with it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QIcon, QPixmap
from PySide6.QtWidgets import QApplication

from app.look import icons, theme
from timothy import paths


def opaque_pixels(icon: QIcon, mode: QIcon.Mode = QIcon.Mode.Normal) -> set[str]:
    """The colours of the fully opaque pixels of `icon` painted now, at 32 px."""
    image = icon.pixmap(32, 32, mode).toImage()
    return {
        image.pixelColor(x, y).name()
        for x in range(32)
        for y in range(32)
        if image.pixelColor(x, y).alpha() == 255
    }


def test_switching_to_dark_changes_colours_style_and_icons(qapp: QApplication) -> None:
    theme.apply(qapp, scheme=Qt.ColorScheme.Light)
    light = theme.colours()
    made_in_light = icons.icon("copy", "text")
    assert not light.dark
    # In the light palette the icon paints in the light text colour, and only in it.
    assert opaque_pixels(made_in_light) == {light.text.name()}
    theme.apply(qapp, scheme=Qt.ColorScheme.Dark)
    dark = theme.colours()
    assert dark.dark and dark.base != light.base and dark.text != light.text
    assert dark.base.name() in qapp.styleSheet()
    # The icon made before the switch now paints in the dark palette's text colour.
    assert opaque_pixels(made_in_light) == {dark.text.name()}
    theme.apply(qapp, scheme=Qt.ColorScheme.Light)
    assert opaque_pixels(icons.icon("copy", "text")) == {light.text.name()}
    # Drawn pictures are kept by colour: the disabled look and the normal one stay apart.
    assert opaque_pixels(made_in_light, QIcon.Mode.Disabled) == {light.muted.name()}
    assert opaque_pixels(made_in_light) == {light.text.name()}


def test_blend_mixes_two_colours() -> None:
    mixed = theme.blend(QColor("#ffffff"), QColor("#000000"), 0.25)
    assert mixed.name() == "#404040"


def test_the_window_logos_are_drawn_small_and_look_like_the_app_icon(qapp: QApplication) -> None:
    """Replies, the welcome and About show the logo from a small drawing (decoding the 512 px
    one took the window's thread 8 ms); each looks like the large icon scaled down."""
    large = QPixmap(str(paths.resources_dir() / "icons" / "timothy.png"))
    assert not large.isNull()
    for size in (24, 56, 72):
        logo = icons.logo(size)
        assert logo.width() == logo.height() == 2 * size
        assert logo.devicePixelRatio() == 2.0
        scaled = large.scaled(
            2 * size,
            2 * size,
            Qt.AspectRatioMode.KeepAspectRatio,
            Qt.TransformationMode.SmoothTransformation,
        ).toImage()
        mine = logo.toImage()
        # The same picture: pixels at a few points within a small tolerance.
        for fx, fy in ((0.5, 0.5), (0.3, 0.7), (0.75, 0.25), (0.5, 0.9)):
            x, y = int(fx * 2 * size), int(fy * 2 * size)
            a, b = mine.pixelColor(x, y), scaled.pixelColor(x, y)
            assert (
                abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue()) < 60
            )
