"""`timothy sessions export ID --markdown`: the conversation as Markdown, printed or to a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from timothy.chat.export import conversation_markdown
from timothy.cli import main
from timothy.store import Store


def test_export_prints_or_writes_the_markdown(
    store: Store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = store.sessions.create(title="Trains")
    store.sessions.add_message(session.id, "user", "Lisbon to Porto?")
    store.sessions.add_message(session.id, "assistant", "```\nAlfa Pendular\n```")
    expected = conversation_markdown(store, session.id)

    assert main(["sessions", "export", session.id, "--markdown"]) == 0
    out = capsys.readouterr().out
    assert out == expected
    assert out.startswith("# Trains\n") and "## You · " in out and "```\nAlfa Pendular\n```" in out

    target = tmp_path / "trains.md"
    assert main(["sessions", "export", session.id, "--output", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == expected
    assert str(target) in capsys.readouterr().err


def test_an_unknown_id_is_a_sentence(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions", "export", "01NOSUCHCONVERSATION0000000", "--markdown"]) != 0
    err = capsys.readouterr().err
    assert "No conversation has the id" in err and "Traceback" not in err
