"""An edit saved from the window whose reply is lost after the server committed (a proxy
drops the connection instead of passing on the COMMIT's answer): the window shows it saved,
not an error, and saving it again shows no "changed on another machine"."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.jobs.workers import Failure
from app.mainwindow.main_window import MainWindow
from app.memories.memory_editor import MemoryEdit
from tests.app.conftest import WindowFactory, settle
from tests.fakes.pg_proxy import LossyProxy
from timothy.store import Memory, MemoryStatus, MemoryType
from timothy.store.postgres import PostgresStore


@pytest.fixture
def store(lossy_proxy: LossyProxy, pg_url: str, tmp_path: Path) -> Iterator[PostgresStore]:
    with PostgresStore(lossy_proxy.url(pg_url), outbox_dir=tmp_path / "laptop") as laptop:
        yield laptop


def edit_from_the_window(
    qtbot: QtBot, window: MainWindow, memory: Memory, content: str
) -> tuple[list[Memory], list[Failure]]:
    actions = window.memory_pane.memory_actions
    assert actions is not None
    saved: list[Memory] = []
    failures: list[Failure] = []
    change = MemoryEdit(content, MemoryType.SEMANTIC, ("Ana",))
    actions.edit(window, memory, change, on_done=saved.append, on_failure=failures.append)
    qtbot.waitUntil(lambda: bool(saved or failures), timeout=20_000)
    settle(qtbot, window.workers)
    return saved, failures


def test_an_edit_whose_reply_is_lost_shows_saved_and_saving_again_adds_nothing(
    qtbot: QtBot, make_window: WindowFactory, store: PostgresStore, lossy_proxy: LossyProxy
) -> None:
    seen = store.memories.add("My sister Ana lives in Lyon", entities=["Ana"])
    window = make_window()
    # Only the edit's connection: the window's store commits on others too.
    lossy_proxy.cut_at(b"COMMIT", after=b"SET status = 'superseded'")
    saved, failures = edit_from_the_window(qtbot, window, seen, "My sister Ana lives in Paris")
    assert lossy_proxy.cut.is_set()
    assert failures == [] and [m.content for m in saved] == ["My sister Ana lives in Paris"]
    # The window still held the old version: saving the same edit again, once the store is
    # back in touch (the lost connection marked the server away), is the same success.
    qtbot.waitUntil(lambda: store.reachable, timeout=20_000)
    again, failures = edit_from_the_window(qtbot, window, seen, "My sister Ana lives in Paris")
    assert failures == [] and [m.id for m in again] == [saved[0].id]
    conflicts = window.edit_conflicts
    assert conflicts is not None and conflicts.dialog is None
    chain = [(m.content, m.status) for m in store.memories.chain(seen.id)]
    assert chain == [
        ("My sister Ana lives in Lyon", MemoryStatus.SUPERSEDED),
        ("My sister Ana lives in Paris", MemoryStatus.ACTIVE),
    ]
