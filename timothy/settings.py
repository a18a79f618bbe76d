"""The owner's settings: one JSON file in the config folder, read into frozen dataclasses.

Secrets never live here (see `timothy.secrets`). Each package defines its own sections beside
its code (`providers/settings.py`, `memory/settings.py`, `retrieval/settings.py`,
`chat/settings.py`); this module composes them at the top and handles the file. Nothing in
the core below `timothy.assistant` imports it: each part is handed its own section.
"""

from __future__ import annotations

import collections.abc
import contextlib
import dataclasses
import enum
import json
import logging
import os
import tempfile
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from timothy import paths
from timothy.chat.settings import ChatSettings
from timothy.errors import InvalidInputError
from timothy.memory.settings import ConsolidationSettings, MemoryPolicySettings
from timothy.providers.settings import BedrockSettings, OpenAISettings
from timothy.retrieval.settings import RecallSettings
from timothy.store.location import StoreSettings

log = logging.getLogger(__name__)

SETTINGS_FILENAME = "settings.json"
T = TypeVar("T")


__all__ = [
    "BedrockSettings",
    "ChatSettings",
    "ConsolidationSettings",
    "MemoryPolicySettings",
    "OpenAISettings",
    "RecallSettings",
    "Settings",
    "StoreSettings",
    "first_run_settings",
    "load_settings",
    "save_settings",
]


@dataclass(frozen=True, slots=True)
class Settings:
    chat_provider: str | None = None  # "openai" | "bedrock" | None (see providers.factory)
    embedding_provider: str | None = None  # "openai" | "bedrock" | "local" | None
    openai: OpenAISettings = field(default_factory=OpenAISettings)
    bedrock: BedrockSettings = field(default_factory=BedrockSettings)
    memory: MemoryPolicySettings = field(default_factory=MemoryPolicySettings)
    recall: RecallSettings = field(default_factory=RecallSettings)
    chat: ChatSettings = field(default_factory=ChatSettings)
    consolidation: ConsolidationSettings = field(default_factory=ConsolidationSettings)
    store: StoreSettings = field(default_factory=StoreSettings)

    def to_json(self) -> dict[str, Any]:
        converted = to_json(self)
        assert isinstance(converted, dict)
        return converted

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


def to_json(value: Any) -> Any:
    """Settings as plain JSON values (enum keys and values by name, mappings as objects)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {item.name: to_json(getattr(value, item.name)) for item in dataclasses.fields(value)}
    if isinstance(value, collections.abc.Mapping):
        return {to_json(key): to_json(item) for key, item in value.items()}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, list | tuple):
        return [to_json(item) for item in value]
    return value


def settings_path() -> Path:
    return paths.config_dir() / SETTINGS_FILENAME


def _coerce(kind: Any, value: Any, default: Any) -> Any:
    """`value` as `kind`, or `default` when it does not fit (a hand-edited file must not crash)."""
    if dataclasses.is_dataclass(kind) and isinstance(kind, type):
        return from_json(kind, value) if isinstance(value, dict) else default
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(kind)
        if value is None and type(None) in options:
            return None
        for option in options:
            if option is type(None):
                continue
            coerced = _coerce(option, value, _MISSING)
            if coerced is not _MISSING:
                return coerced
        return default
    if origin in (dict, collections.abc.Mapping):
        _key_kind, value_kind = typing.get_args(kind)
        if not isinstance(value, dict):
            return default
        result = {}
        for key, item in value.items():
            coerced = _coerce(value_kind, item, _MISSING)
            if isinstance(key, str) and coerced is not _MISSING:
                result[key] = coerced
        return result
    if kind is bool:
        return value if isinstance(value, bool) else default
    if kind is int:
        return value if isinstance(value, int) and not isinstance(value, bool) else default
    if kind is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        return default
    if kind is str:
        return value if isinstance(value, str) else default
    return value if value is not None else default


_MISSING = object()


def from_json(cls: type[T], data: dict[str, Any]) -> T:
    """Build a settings dataclass from JSON, keeping defaults for missing or unusable values."""
    hints = typing.get_type_hints(cls)
    values: dict[str, Any] = {}
    for item in dataclasses.fields(cls):  # type: ignore[arg-type]
        if item.name in data:
            if item.default is not dataclasses.MISSING:
                default = item.default
            elif item.default_factory is not dataclasses.MISSING:
                default = item.default_factory()
            else:
                default = _MISSING
            coerced = _coerce(hints[item.name], data[item.name], default)
            if coerced is not _MISSING:
                values[item.name] = coerced
    try:
        instance = cls(**values)
        check = getattr(instance, "check", None)
        if callable(check):
            check()
        return instance
    except (InvalidInputError, ValueError, TypeError) as exc:
        log.warning("settings section %s unusable (%s); using its defaults", cls.__name__, exc)
        return cls()


def first_run_settings() -> Settings:
    """What a new owner starts with: vector search on, with the offline local embedder (no
    network, no key, no cost). Choosing another provider, or none, is saved like any change;
    a saved `"embedding_provider": null` stays off."""
    return Settings(embedding_provider="local")


def load_settings(path: Path | None = None) -> Settings:
    """The saved settings; the first-run defaults when there is no file yet; a broken file is
    kept aside (and the plain defaults used)."""
    target = path or settings_path()
    try:
        raw = target.read_bytes()
    except FileNotFoundError:
        return first_run_settings()
    except OSError as exc:
        log.warning("cannot read settings %s: %s; using defaults", target, exc)
        return Settings()
    try:
        data = json.loads(raw.decode("utf-8"))  # not UTF-8: a UnicodeDecodeError, a ValueError
        if not isinstance(data, dict):
            raise ValueError("settings must be a JSON object")
    except ValueError as exc:
        aside = target.with_suffix(".broken.json")
        log.warning("settings %s unreadable (%s); kept as %s, using defaults", target, exc, aside)
        with contextlib.suppress(OSError):
            os.replace(target, aside)
        return Settings()
    return from_json(Settings, _upgraded(data))


def _upgraded(data: dict[str, Any]) -> dict[str, Any]:
    """A file saved before recall's ranking departures (no `leg_weights` yet) holds the
    article's k 60 and minimum 0.005 only because they were the defaults then: left in, they
    would mix with the new weights, neighbours and days into a combination nobody measured.
    They give way to today's defaults; values the owner changed are kept."""
    recall = data.get("recall")
    if not isinstance(recall, dict) or "leg_weights" in recall:
        return data
    recall = dict(recall)
    for name, old_default in (("rrf_k", 60), ("min_score", 0.005)):
        if recall.get(name) == old_default:
            del recall[name]
    return {**data, "recall": recall}


def save_settings(settings: Settings, path: Path | None = None) -> None:
    """Write atomically (temp file, then rename): a crash never leaves half a settings file."""
    target = path or settings_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temp_name = tempfile.mkstemp(prefix=".settings-", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(settings.to_json(), out, indent=2, sort_keys=True)
            out.write("\n")
        os.replace(temp_name, target)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise
