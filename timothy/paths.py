"""Where Timothy keeps its data, settings, cache and logs, and where its shipped resources are."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import platformdirs

APP_NAME = "Timothy"
DATABASE_FILENAME = "timothy.db"


def data_dir(override: str | os.PathLike[str] | None = None) -> Path:
    """The data folder: `--data-dir`, else `TIMOTHY_DATA_DIR`, else the platform's user data dir."""
    if override:
        return Path(override).expanduser()
    env = os.environ.get("TIMOTHY_DATA_DIR")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def config_dir() -> Path:
    env = os.environ.get("TIMOTHY_CONFIG_DIR")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME, appauthor=False))


def cache_dir() -> Path:
    env = os.environ.get("TIMOTHY_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


def log_dir() -> Path:
    env = os.environ.get("TIMOTHY_LOG_DIR")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_log_dir(APP_NAME, appauthor=False))


def database_path(data: Path) -> Path:
    return data / DATABASE_FILENAME


def resources_dir() -> Path:
    """The shipped `resources/` folder: inside the PyInstaller bundle, or beside the sources."""
    env = os.environ.get("TIMOTHY_RESOURCES_DIR")
    if env:
        return Path(env)
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return Path(bundle) / "resources"
    return Path(__file__).resolve().parent.parent / "resources"


def readme_path() -> Path:
    """README.md, whose user guide the app's Help shows: at the bundle's root (build.spec puts
    it there), or beside the sources."""
    bundle = getattr(sys, "_MEIPASS", None)
    if bundle:
        return Path(bundle) / "README.md"
    return Path(__file__).resolve().parent.parent / "README.md"


def is_frozen() -> bool:
    return bool(getattr(sys, "frozen", False))
