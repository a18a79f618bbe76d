"""Settings persist as JSON in the config folder; a damaged file never stops Timothy."""

from __future__ import annotations

import json
from pathlib import Path

from timothy.settings import OpenAISettings, Settings, load_settings, save_settings, settings_path


def test_defaults_when_no_file() -> None:
    assert load_settings() == Settings()


def test_round_trip(isolated_env: Path) -> None:
    settings = Settings(
        chat_provider="openai", openai=OpenAISettings(base_url="http://127.0.0.1:11434/v1")
    )
    save_settings(settings)
    assert settings_path().parent == isolated_env / "config"
    assert load_settings() == settings


def test_broken_file_is_kept_aside_and_defaults_used() -> None:
    path = settings_path()
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    assert load_settings() == Settings()
    assert path.with_suffix(".broken.json").read_text(encoding="utf-8") == "{not json"


def test_wrong_types_fall_back_to_defaults_field_by_field() -> None:
    path = settings_path()
    path.parent.mkdir(parents=True)
    data = {
        "chat_provider": "bedrock",
        "openai": {"timeout_seconds": "soon", "chat_model": "gpt-x", "use_memories": 1},
        "bedrock": "not an object",
        "unknown": 5,
    }
    path.write_text(json.dumps(data), encoding="utf-8")
    loaded = load_settings()
    assert loaded.chat_provider == "bedrock"
    assert loaded.openai.chat_model == "gpt-x"
    assert loaded.openai.timeout_seconds == OpenAISettings().timeout_seconds
    assert loaded.openai.use_memories is True
    assert loaded.bedrock == Settings().bedrock
