"""A conversation exported as Markdown: title, date, each turn under who spoke, code intact."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from timothy.chat.export import (
    close_fences,
    conversation_markdown,
    export_markdown,
    markdown_file_name,
)
from timothy.errors import NotFoundError, StoreError
from timothy.store.engine import StoreEngine
from timothy.store.records import MessageStatus

STARTED = datetime(2026, 11, 28, 9, 5, tzinfo=UTC)
REPLY = (
    "Use `pathlib`:\n\n"
    "```python\n"
    "from pathlib import Path\n\n"
    "# not a heading: a comment in the code\n"
    "print(Path('notes.txt').read_text())\n"
    "```\n\n"
    "That is all."
)


def conversation(store: StoreEngine) -> str:
    session = store.sessions.create(title="Reading files", now=STARTED)
    store.sessions.add_message(session.id, "user", "How do I read a file?", now=STARTED)
    store.sessions.add_message(session.id, "assistant", REPLY, now=STARTED + timedelta(seconds=20))
    store.sessions.add_message(
        session.id, "user", "And in Rust?", now=STARTED + timedelta(minutes=3)
    )
    return session.id


def test_the_document_has_the_title_date_and_each_turn_under_its_speaker(
    store: StoreEngine,
) -> None:
    session_id = conversation(store)
    text = conversation_markdown(store, session_id, tz=UTC)
    assert text == (
        "# Reading files\n"
        "\n"
        "*Started 28 Nov 2026, 09:05 · 3 messages · exported from Timothy*\n"
        "\n"
        "## You · 28 Nov 2026, 09:05\n"
        "\n"
        "How do I read a file?\n"
        "\n"
        "## Timothy · 28 Nov 2026, 09:05\n"
        "\n"
        f"{REPLY}\n"
        "\n"
        "## You · 28 Nov 2026, 09:08\n"
        "\n"
        "And in Rust?\n"
    )
    assert "```python\nfrom pathlib import Path\n\n# not a heading" in text


def test_a_reply_cut_short_inside_a_code_block_does_not_swallow_the_rest(
    store: StoreEngine,
) -> None:
    session = store.sessions.create(title="", now=STARTED)
    store.sessions.add_message(session.id, "user", "Show me", now=STARTED)
    store.sessions.add_message(
        session.id,
        "assistant",
        "Here:\n\n```sh\nls -l",
        status=MessageStatus.CANCELLED,
        now=STARTED,
    )
    store.sessions.add_message(session.id, "user", "Thanks", now=STARTED)
    text = conversation_markdown(store, session.id, tz=UTC)
    assert text.startswith("# Untitled conversation\n")
    assert "```sh\nls -l\n```\n\n*This reply was cut short.*\n\n## You" in text


def test_fences_are_closed_only_when_open() -> None:
    assert close_fences("```\ncode\n```") == "```\ncode\n```"
    assert close_fences("~~~~js\nx\n~~~") == "~~~~js\nx\n~~~\n~~~~"
    assert close_fences("inline ```not a fence``` here") == "inline ```not a fence``` here"


def test_export_writes_the_file_and_says_plainly_when_it_cannot(
    store: StoreEngine, tmp_path: Path
) -> None:
    session_id = conversation(store)
    folder = tmp_path / "exports"
    folder.mkdir()
    target = folder / "reading.md"
    assert export_markdown(store, session_id, target, tz=UTC) == target
    assert target.read_text(encoding="utf-8") == conversation_markdown(store, session_id, tz=UTC)
    assert [p.name for p in folder.iterdir()] == ["reading.md"], "no temporary file left"
    with pytest.raises(StoreError, match="Cannot write to"):
        export_markdown(store, session_id, tmp_path / "missing" / "x.md")
    with pytest.raises(NotFoundError):
        conversation_markdown(store, "01NOSUCHCONVERSATION0000000")


def test_the_file_name_comes_from_the_title() -> None:
    started = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
    assert markdown_file_name("Trip: Lisbon → Porto?", started).endswith(".md")
    assert markdown_file_name("Trip: Lisbon → Porto?", started).startswith(
        "Trip-Lisbon-Porto 2026-11-2"
    )
    assert markdown_file_name("///", started).startswith("conversation 2026-11-2")
