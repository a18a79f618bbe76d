"""Settings ▸ Storage copies the open store to the server (or the server's into this
computer's file) on a worker, with progress and a stop, resumable, the source only read; a
new storage choice offers a restart."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from pytestqt.qtbot import QtBot

import timothy.store.copy
from app.mainwindow.main_window import MainWindow
from app.settings.storage_page import StoragePage
from tests.app.conftest import WindowFactory
from tests.fakes.postgres import refuse_memories_saying
from timothy.store import Store
from timothy.store.location import StoreSettings
from timothy.store.postgres import PostgresStore
from timothy.store.transfer import export_lines

COPY_MS = 30_000


def storage_page(window: MainWindow) -> StoragePage:
    page = window.open_settings("storage").storage_page
    assert page.copy_box.isVisible()
    return page


def fill(store: Store, count: int) -> None:
    for number in range(count):
        store.memories.add(f"Fact number {number} about the garden")
    talk = store.sessions.create(title="Garden plans")
    store.sessions.add_message(talk.id, "user", "Tomatoes or beans this year?")


def test_this_computers_memory_is_copied_to_the_server_and_the_file_is_only_read(
    qtbot: QtBot, make_window: WindowFactory, store: Store, pg_url: str, tmp_path: Path
) -> None:
    fill(store, 3)
    before = list(export_lines(store))
    window = make_window()
    page = storage_page(window)
    assert not page.copy_button.isEnabled()  # no server named yet
    page.server_button.setChecked(True)
    page.url_edit.setText(pg_url)
    assert page.copy_button.isEnabled()
    assert page.copy_button.text() == "Copy this computer's memory to the server"
    page.copy_button.click()
    qtbot.waitUntil(lambda: page.copy_status.text().startswith(("✓", "✗")), timeout=COPY_MS)
    assert page.copy_status.text() == "✓ Copied 3 memories, 0 vectors and 1 conversation."
    assert list(export_lines(store)) == before
    with PostgresStore(pg_url, follow_changes=False, outbox_dir=tmp_path / "s") as server:
        assert server.memories.count() == 3
        assert [s.title for s in server.sessions.list()] == ["Garden plans"]


def test_a_stopped_copy_is_finished_by_copying_again(
    qtbot: QtBot,
    make_window: WindowFactory,
    store: Store,
    pg_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(timothy.store.copy, "BATCH", 2)
    fill(store, 7)
    window = make_window()
    page = storage_page(window)
    page.server_button.setChecked(True)
    page.url_edit.setText(pg_url)
    page.copy_button.click()
    assert page.copy_cancel.isVisible() and not page.copy_button.isVisible()
    page.copy_cancel.click()  # before the first batch lands: it stops between batches
    qtbot.waitUntil(lambda: not window.store_copy.running, timeout=COPY_MS)
    assert page.copy_status.text().startswith("Stopped.")
    assert page.copy_button.isVisible() and page.copy_button.isEnabled()
    with PostgresStore(pg_url, follow_changes=False, outbox_dir=tmp_path / "s") as server:
        assert server.memories.count() < 7
    page.copy_button.click()
    qtbot.waitUntil(lambda: page.copy_status.text().startswith(("✓", "✗")), timeout=COPY_MS)
    assert page.copy_status.text().startswith("✓")
    with PostgresStore(pg_url, follow_changes=False, outbox_dir=tmp_path / "s") as server:
        assert server.memories.count() == 7 and len(server.sessions.list()) == 1


def test_a_new_storage_choice_offers_a_restart(
    qtbot: QtBot, make_window: WindowFactory, pg_url: str
) -> None:
    window = make_window()
    restarts: list[bool] = []
    window.restart_app = lambda: restarts.append(True) or True
    window.apply_settings(window.settings.replace(store=StoreSettings("postgres", pg_url)))
    assert window.banner.isVisible()
    assert window.banner.text_label.text() == (
        "Timothy uses the new storage choice from its next start."
    )
    assert window.banner.action_button.text() == "Restart now"
    window.banner.action_button.click()
    assert restarts == [True] and not window.isVisible()  # closed as it always is


def test_a_copy_the_server_turns_away_says_nothing_was_copied(
    qtbot: QtBot, make_window: WindowFactory, store: Store, pg_url: str, tmp_path: Path
) -> None:
    """A server set up by a newer Timothy refuses the copy before anything moves: the page
    said "What was copied stays; copy again to finish", as if part of it had landed and
    copying again would finish it."""
    fill(store, 2)
    with PostgresStore(pg_url, follow_changes=False, outbox_dir=tmp_path / "s"):
        pass
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE timothy_schema SET version = 99")
    window = make_window()
    page = storage_page(window)
    page.server_button.setChecked(True)
    page.url_edit.setText(pg_url)
    page.copy_button.click()
    qtbot.waitUntil(lambda: page.copy_status.text().startswith(("✓", "✗")), timeout=COPY_MS)
    said = page.copy_status.text()
    assert "set up by a newer Timothy" in said
    assert said.endswith("Nothing was copied.")
    assert "copy again" not in said


def test_a_copy_cut_off_midway_says_what_was_copied_stays(
    qtbot: QtBot,
    make_window: WindowFactory,
    store: Store,
    pg_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After a batch has landed, copying again does finish the copy: the page says so."""
    monkeypatch.setattr(timothy.store.copy, "BATCH", 2)
    with PostgresStore(pg_url, follow_changes=False, outbox_dir=tmp_path / "s"):
        pass  # its tables, for the policy below
    refuse_memories_saying(pg_url, "number 3")
    fill(store, 5)
    window = make_window()
    page = storage_page(window)
    page.server_button.setChecked(True)
    page.url_edit.setText(pg_url)
    page.copy_button.click()
    qtbot.waitUntil(lambda: page.copy_status.text().startswith(("✓", "✗")), timeout=COPY_MS)
    assert page.copy_status.text().endswith("What was copied stays; copy again to finish.")
