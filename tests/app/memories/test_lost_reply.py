"""Changes made from the window whose reply is lost after the server committed (a proxy drops
the connection instead of passing on the COMMIT's answer): an edit shows saved, not an error,
and saving it again shows no "changed on another machine"; a forget whose outcome could not
be learned, done again, is its success and leaves the window."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.jobs.workers import Failure
from app.mainwindow.main_window import MainWindow
from app.memories.memory_editor import MemoryEdit
from tests.app.conftest import WindowFactory, settle
from tests.app.memories.test_browse_actions import choose
from tests.fakes.pg_proxy import LossyProxy
from timothy.store import Memory, MemoryStatus, MemoryType
from timothy.store.forget import ForgetReport
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


def test_a_forget_of_unknown_outcome_done_again_from_the_window_is_its_success(
    qtbot: QtBot, make_window: WindowFactory, store: PostgresStore, lossy_proxy: LossyProxy
) -> None:
    """The server stops answering as the forget commits: the window says it cannot tell yet
    and that doing it again is safe. Done again once the server answers, it is a success,
    and the memory is gone from the browser's list, the queue and the history on show."""
    store.memories.landed_wait_s = 0.3
    staged = store.memories.stage("The door code is 4711")
    window = make_window()
    pane = window.memory_pane
    browser, actions, queue = pane.browser, pane.memory_actions, pane.queue
    assert browser is not None and actions is not None and queue is not None
    qtbot.waitUntil(lambda: [m.id for m in queue.model.memories] == [staged.id], timeout=10_000)
    pane.tabs.setCurrentWidget(browser)
    qtbot.waitUntil(lambda: browser.model.row_of(staged.id) >= 0, timeout=10_000)
    choose(qtbot, browser, staged)
    chain = browser.detail.chain_view
    qtbot.waitUntil(lambda: "4711" in chain.toPlainText(), timeout=10_000)

    def forget_from_the_window() -> tuple[list[ForgetReport], list[Failure]]:
        done: list[ForgetReport] = []
        failures: list[Failure] = []
        actions.forget(
            window, [staged], chain=False, on_done=done.append, on_failure=failures.append
        )
        qtbot.waitUntil(lambda: bool(done or failures), timeout=20_000)
        return done, failures

    with lossy_proxy.unanswered_after_commit(after=b"DELETE FROM memories"):
        done, failures = forget_from_the_window()
    assert done == [] and "cannot tell yet" in failures[0].message
    qtbot.waitUntil(lambda: store.reachable, timeout=20_000)
    settle(qtbot, window.workers)
    done, failures = forget_from_the_window()
    assert failures == [] and [report.forgotten for report in done] == [(staged.id,)]
    qtbot.waitUntil(lambda: browser.model.row_of(staged.id) < 0, timeout=10_000)
    qtbot.waitUntil(lambda: queue.model.memories == [], timeout=10_000)
    qtbot.waitUntil(lambda: "4711" not in chain.toPlainText(), timeout=10_000)
    assert store.memories.get_many([staged.id]) == {}
