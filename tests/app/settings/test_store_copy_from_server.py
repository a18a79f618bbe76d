"""Settings ▸ Storage on a server store: the server's memory is copied into this computer's
file (to work without the server), the server only read."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.jobs.workers import Workers
from app.mainwindow.main_window import MainWindow
from app.mainwindow.window_state import WindowState
from tests.app.conftest import WindowFactory, settle
from timothy import paths
from timothy.store import Store
from timothy.store.postgres import PostgresStore
from timothy.store.transfer import export_lines


@pytest.fixture
def store(pg_url: str, isolated_env: Path) -> Iterator[PostgresStore]:
    with PostgresStore(pg_url) as server:
        yield server


def test_the_servers_memory_is_copied_into_this_computers_file(
    qtbot: QtBot, make_window: WindowFactory, store: PostgresStore
) -> None:
    store.memories.add("The spare key is under the blue pot", entities=["key"])
    talk = store.sessions.create(title="Keys")
    store.sessions.add_message(talk.id, "user", "Where is the spare key?")
    before = list(export_lines(store))
    window = make_window()
    page = window.open_settings("storage").storage_page
    assert page.copy_button.text() == "Copy the server's memory to this computer"
    assert page.copy_button.isEnabled()
    page.copy_button.click()
    qtbot.waitUntil(lambda: page.copy_status.text().startswith(("✓", "✗")), timeout=30_000)
    assert page.copy_status.text() == "✓ Copied 1 memory, 0 vectors and 1 conversation."
    assert list(export_lines(store)) == before
    with Store.open(paths.data_dir()) as local:
        assert list(export_lines(local)) == before
        assert [s.title for s in local.sessions.list()] == ["Keys"]


def test_the_copy_lands_in_the_data_folder_the_app_was_started_with(
    qtbot: QtBot, workers: Workers, pg_url: str, tmp_path: Path
) -> None:
    """`timothy --data-dir FOLDER` on a server store (a second machine's folder, say): the
    server's memory is copied into FOLDER's file, where this machine's outbox and mirror are
    and where the next start with FOLDER reads, not into the platform's default folder."""
    folder = tmp_path / "second-machine"
    with PostgresStore(pg_url) as earlier:
        earlier.memories.add("The spare key is under the blue pot")
    with PostgresStore(pg_url, outbox_dir=folder) as store:
        assert store.data_dir == folder
        window = MainWindow(store, window_state=WindowState(), probe_local_servers=list)
        qtbot.addWidget(window)
        page = window.open_settings("storage").storage_page
        page.copy_button.click()
        qtbot.waitUntil(lambda: page.copy_status.text().startswith(("✓", "✗")), timeout=30_000)
        assert page.copy_status.text().startswith("✓ Copied 1 memory")
        window.close()
        settle(qtbot, window.workers, window.network, window.jobs)
    with Store.open(folder) as local:
        assert [m.content for m in local.memories.list()] == ["The spare key is under the blue pot"]
    assert not paths.database_path(paths.data_dir()).exists()
