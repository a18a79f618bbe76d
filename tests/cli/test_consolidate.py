"""The `timothy consolidate` command: dry run, real run, the stored report, --if-due."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_timothy
from tests.fakes.openai_server import OpenAIServer
from timothy.cli import main
from timothy.settings import OpenAISettings, Settings, save_settings
from timothy.store import Store
from timothy.store.records import MemorySource, MemoryStatus, MemoryType, parse_time


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _old_memories(data_dir: Path) -> tuple[str, str]:
    with Store.open(data_dir) as store:
        episode = store.memories.add(
            "Picnic by the lake", type=MemoryType.EPISODIC, now=parse_time("2024-01-01T10:00:00Z")
        )
        fact = store.memories.add(
            "I play the cello", confidence=1.0, now=parse_time("2024-01-01T10:00:00Z")
        )
        return episode.id, fact.id


def test_dry_run_then_run_then_last_report(
    capsys: pytest.CaptureFixture[str], data_dir: Path
) -> None:
    episode, fact = _old_memories(data_dir)
    now = "2025-06-01T08:00:00Z"

    code, out, err = cli(capsys, "consolidate", "--dry-run", "--now", now)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == (
        "Consolidation (dry run): would archive 1 old episode; would lower confidence in "
        "1 unconfirmed fact (near-duplicates skipped)."
    )
    assert any(line.startswith(f"would archive {episode}") for line in lines)
    assert any(line.startswith(f"would lower {fact} confidence 1.00 -> 0.90") for line in lines)
    with Store.open(data_dir) as store:
        assert store.memories.get(episode).status is MemoryStatus.ACTIVE
        assert store.memories.get(fact).confidence == 1.0

    code, out, err = cli(capsys, "consolidate", "--json", "--now", now)
    assert code == 0, err
    report = json.loads(out)
    assert report["dry_run"] is False
    assert [a["id"] for a in report["archived"]] == [episode]
    assert [(d["id"], d["confidence_after"]) for d in report["decayed"]] == [(fact, 0.9)]
    assert report["skipped"][0]["step"] == "near_duplicates"
    with Store.open(data_dir) as store:
        assert store.memories.get(episode).status is MemoryStatus.ARCHIVED
        assert store.memories.get(fact).confidence == 0.9

    code, out, _ = cli(capsys, "consolidate", "--last", "--json")
    assert code == 0 and json.loads(out) == report

    code, out, _ = cli(capsys, "consolidate", "--if-due", "--now", "2025-06-01T20:00:00Z")
    assert code == 0 and out.startswith("Not due: the last run was 2025-06-01 08:00 UTC")
    code, out, _ = cli(capsys, "consolidate", "--if-due", "--now", "2025-06-02T08:00:00Z")
    assert code == 0 and out.startswith("Consolidation: nothing to tidy")


def test_last_before_any_run_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "consolidate", "--last")
    assert code == 1 and out == ""
    assert err == "timothy: consolidation has not run yet.\n"


def test_a_bad_now_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "consolidate", "--now", "next tuesday")
    assert code == 1 and "--now needs an ISO 8601 time" in err


def test_the_installed_command_runs_it(data_dir: Path) -> None:
    _old_memories(data_dir)
    result = run_timothy("consolidate", "--now", "2025-06-01T08:00:00Z")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(
        "Consolidation: archived 1 old episode; lowered confidence in 1 unconfirmed fact"
    )


def _near_duplicates(data_dir: Path) -> tuple[str, str]:
    with Store.open(data_dir) as store:
        a = store.memories.add("I like green tea", now=parse_time("2025-05-01T10:00:00Z"))
        b = store.memories.add("I do like green tea", now=parse_time("2025-05-02T10:00:00Z"))
        model = store.vectors.ensure_model("test/3d", 3)
        store.vectors.put_many(model, [(a.id, [1.0, 0.0, 0.0]), (b.id, [1.0, 0.01, 0.0])])
        store.vectors.set_active_model(model.name)
        return a.id, b.id


def test_the_configured_chat_model_merges(
    capsys: pytest.CaptureFixture[str], data_dir: Path, openai_server: OpenAIServer
) -> None:
    a, b = _near_duplicates(data_dir)
    save_settings(Settings(chat_provider="openai", openai=openai_server.settings()))

    code, out, err = cli(capsys, "consolidate", "--dry-run", "--now", "2025-06-01T08:00:00Z")
    assert code == 0, err
    assert out.splitlines()[:2] == [
        "Consolidation (dry run): would merge 2 memories in 1 group.",
        f"would merge {a}, {b}",
    ]
    assert openai_server.chat_requests == []

    openai_server.reply('{"same_fact": true, "content": "I like green tea"}')
    code, out, err = cli(capsys, "consolidate", "--json", "--now", "2025-06-01T08:00:00Z")
    assert code == 0, err
    report = json.loads(out)
    (merged,) = report["merged"]
    assert merged["members"] == [a, b] and merged["chain"] == [a, b, merged["canonical"]]
    with Store.open(data_dir) as store:
        canonical = store.memories.get(merged["canonical"])
        assert canonical.source is MemorySource.CONSOLIDATION
        assert canonical.content == "I like green tea"


def test_an_unusable_chat_model_skips_merging_and_the_rest_runs(
    capsys: pytest.CaptureFixture[str], data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    episode, _ = _old_memories(data_dir)
    _near_duplicates(data_dir)
    save_settings(Settings(chat_provider="openai", openai=OpenAISettings()))  # no key anywhere

    code, out, err = cli(capsys, "consolidate", "--now", "2025-06-01T08:00:00Z")

    assert code == 0
    assert err.startswith("timothy: merging needs the chat model, which is not usable: ")
    assert "API key" in err
    lines = out.splitlines()
    assert lines[0].startswith("Consolidation: archived 1 old episode")
    assert "merge skipped" in lines[0]
    assert any(line.startswith(f"archived {episode}") for line in lines)
