"""What the window remembers between runs: geometry, pane sizes and visibility, last conversation.

Kept in an INI file in the config folder (beside settings.json), never in the registry or
the platform's preferences store, so a user or a test finds it in one place.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings

from timothy import paths

WINDOW_STATE_FILENAME = "window.ini"


def window_state_path() -> Path:
    return paths.config_dir() / WINDOW_STATE_FILENAME


class WindowState:
    """Typed reads and writes over a QSettings INI file."""

    def __init__(self, path: Path | None = None) -> None:
        target = path or window_state_path()
        target.parent.mkdir(parents=True, exist_ok=True)
        self.settings = QSettings(str(target), QSettings.Format.IniFormat)

    def bytes(self, key: str) -> QByteArray | None:
        value = self.settings.value(key)
        return value if isinstance(value, QByteArray) and not value.isEmpty() else None

    def set_bytes(self, key: str, value: QByteArray) -> None:
        self.settings.setValue(key, value)

    def text(self, key: str) -> str | None:
        value = self.settings.value(key)
        return value if isinstance(value, str) and value else None

    def set_text(self, key: str, value: str | None) -> None:
        if value:
            self.settings.setValue(key, value)
        else:
            self.settings.remove(key)

    def flag(self, key: str, default: bool) -> bool:
        value = self.settings.value(key)
        if isinstance(value, bool):
            return value
        if isinstance(value, str):
            return value.lower() in ("true", "1", "yes")
        return default

    def set_flag(self, key: str, value: bool) -> None:
        self.settings.setValue(key, value)

    def sizes(self, key: str) -> list[int] | None:
        value = self.settings.value(key)
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            return None
        try:
            sizes = [int(item) for item in value]
        except (TypeError, ValueError):
            return None
        return sizes if sizes and all(size >= 0 for size in sizes) else None

    def set_sizes(self, key: str, sizes: list[int]) -> None:
        self.settings.setValue(key, [str(size) for size in sizes])

    def integer(self, key: str, default: int) -> int:
        value = self.settings.value(key, default)
        try:
            return int(value) if isinstance(value, int | str) else default
        except ValueError:
            return default

    def set_integer(self, key: str, value: int) -> None:
        self.settings.setValue(key, value)

    def sync(self) -> None:
        self.settings.sync()
