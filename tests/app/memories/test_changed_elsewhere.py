"""Two machines edit the same memory: the second sees both versions side by side in a plain
dialog, keeps theirs or edits again on top of theirs, and nothing is lost."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.jobs.workers import Failure
from app.mainwindow.main_window import MainWindow
from app.memories.memory_editor import MemoryEdit
from tests.app.conftest import WindowFactory, settle
from timothy.store import Memory, MemoryStatus, MemoryType
from timothy.store.postgres import PostgresStore


@pytest.fixture
def store(pg_url: str) -> Iterator[PostgresStore]:
    with PostgresStore(pg_url) as laptop:
        yield laptop


@pytest.fixture
def desktop(pg_url: str, tmp_path: Path) -> Iterator[PostgresStore]:
    with PostgresStore(pg_url, follow_changes=False, outbox_dir=tmp_path / "desktop") as other:
        yield other


def edit_from_the_window(window: MainWindow, memory: Memory, content: str) -> list[Failure]:
    actions = window.memory_pane.memory_actions
    assert actions is not None
    failures: list[Failure] = []
    change = MemoryEdit(content, MemoryType.SEMANTIC, ("Ana",))
    actions.edit(window, memory, change, on_done=lambda _m: None, on_failure=failures.append)
    return failures


def test_an_overtaken_edit_shows_both_versions_and_can_be_saved_on_top_of_theirs(
    qtbot: QtBot, make_window: WindowFactory, store: PostgresStore, desktop: PostgresStore
) -> None:
    seen = store.memories.add("My sister Ana lives in Lyon", entities=["Ana"])
    window = make_window()
    theirs = desktop.memories.supersede(seen.id, "My sister Ana lives in Paris")
    failures = edit_from_the_window(window, seen, "My sister Ana lives in Marseille")
    conflicts = window.edit_conflicts
    assert conflicts is not None
    qtbot.waitUntil(lambda: conflicts.dialog is not None, timeout=5000)
    dialog = conflicts.dialog
    assert dialog is not None and dialog.windowTitle() == "Changed on another machine"
    assert dialog.theirs_view.toPlainText() == "My sister Ana lives in Paris"
    assert dialog.ours_view.toPlainText() == "My sister Ana lives in Marseille"
    assert len(failures) == 1 and not window.banner.isVisible()  # no error text shown

    dialog.edit_again.click()
    qtbot.waitUntil(lambda: conflicts.editor is not None, timeout=5000)
    editor = conflicts.editor
    assert editor is not None
    assert editor.content_edit.toPlainText() == "My sister Ana lives in Marseille"
    editor.accept()
    settle(qtbot, window.workers)
    chain = store.memories.chain(seen.id)
    assert [m.content for m in chain] == [
        "My sister Ana lives in Lyon",
        "My sister Ana lives in Paris",
        "My sister Ana lives in Marseille",
    ]
    assert chain[1].id == theirs.id and chain[-1].status is MemoryStatus.ACTIVE
    assert window.banner.text_label.text() == "Saved: your text is the newest version."


def test_keeping_theirs_changes_nothing(
    qtbot: QtBot, make_window: WindowFactory, store: PostgresStore, desktop: PostgresStore
) -> None:
    seen = store.memories.add("I drink my coffee black")
    window = make_window()
    desktop.memories.supersede(seen.id, "I drink my coffee with oat milk")
    edit_from_the_window(window, seen, "I drink tea now")
    conflicts = window.edit_conflicts
    assert conflicts is not None
    qtbot.waitUntil(lambda: conflicts.dialog is not None, timeout=5000)
    dialog = conflicts.dialog
    assert dialog is not None
    dialog.keep_theirs.click()
    assert not dialog.isVisible()
    settle(qtbot, window.workers)
    assert [m.content for m in store.memories.chain(seen.id)] == [
        "I drink my coffee black",
        "I drink my coffee with oat milk",
    ]
