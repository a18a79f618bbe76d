"""Settings persist as JSON in the config folder; a damaged file never stops Timothy."""

from __future__ import annotations

import json
from pathlib import Path

from timothy.retrieval.settings import RecallSettings
from timothy.settings import OpenAISettings, Settings, load_settings, save_settings, settings_path


def test_a_first_run_searches_vectors_with_the_offline_embedder() -> None:
    assert load_settings() == Settings(embedding_provider="local")
    save_settings(load_settings().replace(embedding_provider=None))  # the owner turns it off
    assert load_settings().embedding_provider is None


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


def test_a_file_that_is_not_utf8_is_kept_aside_and_defaults_used() -> None:
    """Saved by an editor in Latin-1, or damaged: every command failed with "unexpected
    error" (the app too) instead of starting on the defaults."""
    path = settings_path()
    path.parent.mkdir(parents=True)
    broken = '{"openai": {"model": "caf\xe9"}}'.encode("latin-1")
    path.write_bytes(broken)
    assert load_settings() == Settings()
    assert path.with_suffix(".broken.json").read_bytes() == broken
    assert not path.exists()


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


def test_recall_and_chat_sections_round_trip_and_survive_bad_values() -> None:
    from timothy.chat.settings import ChatSettings
    from timothy.retrieval.settings import RecallSettings
    from timothy.store.records import MemoryType

    settings = Settings(
        recall=RecallSettings(
            token_budget=1500,
            half_life_days={"episodic": 30.0},
            type_weights={"preference": 1.5},
        ),
        chat=ChatSettings(compact_at_share=0.6),
    )
    save_settings(settings)
    data = json.loads(settings_path().read_text(encoding="utf-8"))
    assert data["recall"]["half_life_days"]["episodic"] == 30.0
    loaded = load_settings()
    assert loaded == settings
    assert loaded.recall.half_life(MemoryType.EPISODIC) == 30.0
    assert loaded.recall.weight(MemoryType.PREFERENCE) == 1.5

    data["recall"]["half_life_days"] = {"episodic": -5}  # out of range: the section resets
    data["chat"]["keep_recent_messages"] = "many"  # wrong type: that field resets
    settings_path().write_text(json.dumps(data), encoding="utf-8")
    loaded = load_settings()
    assert loaded.recall == RecallSettings()
    assert loaded.chat.keep_recent_messages == ChatSettings().keep_recent_messages
    assert loaded.chat.compact_at_share == 0.6


def test_consolidation_section_is_checked_on_load() -> None:
    from timothy.memory.settings import ConsolidationSettings

    save_settings(Settings(consolidation=ConsolidationSettings(duplicate_cosine=0.97)))
    assert load_settings().consolidation.duplicate_cosine == 0.97
    data = json.loads(settings_path().read_text(encoding="utf-8"))
    data["consolidation"]["decay_floor"] = 3.0
    settings_path().write_text(json.dumps(data), encoding="utf-8")
    assert load_settings().consolidation == ConsolidationSettings()


def test_a_file_saved_before_the_ranking_departures_takes_the_new_fusion_defaults() -> None:
    """Saved with k 60 and minimum 0.005 as the defaults of the time: today's defaults apply;
    a value the owner changed is kept, and a file saved today keeps what it says."""
    path = settings_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    before = RecallSettings()
    old = {"recall": {"rrf_k": 60, "min_score": 0.005, "token_budget": 800}}
    path.write_text(json.dumps(old), encoding="utf-8")
    loaded = load_settings().recall
    assert (loaded.rrf_k, loaded.min_score) == (before.rrf_k, before.min_score)
    assert loaded.token_budget == 800

    old["recall"]["rrf_k"] = 30  # the owner's own choice
    path.write_text(json.dumps(old), encoding="utf-8")
    loaded = load_settings().recall
    assert (loaded.rrf_k, loaded.min_score) == (30.0, before.min_score)

    article = Settings(recall=RecallSettings.article())
    save_settings(article)
    assert load_settings().recall == article.recall
