"""Settings ▸ Storage on a server store: the server's memory is copied into this computer's
file (to work without the server), the server only read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.jobs.workers import Workers
from app.mainwindow.main_window import MainWindow
from app.mainwindow.window_state import WindowState
from tests.app.conftest import WindowFactory, settle
from timothy import paths
from timothy.memory.forget import forget
from timothy.memory.remember import REMEMBER_TOOL
from timothy.store import Store
from timothy.store.copy import copy_store
from timothy.store.postgres import PostgresStore
from timothy.store.records import MessageRole, StoredToolCall
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


def test_copying_back_says_what_it_brought_up_to_date_and_what_it_left(
    qtbot: QtBot, make_window: WindowFactory, store: PostgresStore
) -> None:
    """Moving back to this computer's file, which was copied onto the server earlier: the
    page said "✓ Copied 1 memory, 0 vectors and 0 conversations (3 were there already)."
    while the file missed the conversation's later messages and kept the edited memory's
    old state, unsaid."""
    lyon = store.memories.add("My sister lives in Lyon")
    pin = store.memories.add("My PIN is 1234")
    store.memories.add("I take the bus")
    talk = store.sessions.create(title="Garden")
    store.sessions.add_message(talk.id, "user", "Tomatoes or beans?")
    with Store.open(paths.data_dir()) as local:
        copy_store(store, local)  # the file it all came from
    store.memories.supersede(lyon.id, "My sister lives in Paris")
    store.memories.forget([pin.id])
    store.sessions.add_message(talk.id, "assistant", "Tomatoes.")
    window = make_window()
    page = window.open_settings("storage").storage_page
    page.copy_button.click()
    qtbot.waitUntil(lambda: page.copy_status.text().startswith(("✓", "✗")), timeout=30_000)
    file = paths.database_path(paths.data_dir())
    assert page.copy_status.text() == (
        "✓ Copied 1 memory, 0 vectors and 0 conversations. 1 conversation copied before got "
        "the messages added since. Already there: 2 memories. 1 memory there differs from the "
        "copy (edited, confirmed or archived since an earlier copy) and was left as this "
        "computer's file has it. 1 memory in this computer's file is not on the server "
        "(forgotten there, or never copied to it) and stays. To have exactly the server's "
        f"memory here, move {file} out of the way (it is not read while the server is the "
        "store) and copy again."
    )
    with Store.open(paths.data_dir()) as local:
        assert [m.content for m in local.sessions.branch(talk.id)] == [
            "Tomatoes or beans?",
            "Tomatoes.",
        ]


def test_copying_back_says_what_it_redacted_as_the_server_did(
    qtbot: QtBot, make_window: WindowFactory, store: PostgresStore
) -> None:
    """A memory forgotten for good on the server since the file was copied: the file's copy
    of the turn that remembered it loses the words too, and the page says so."""
    pin = store.memories.add("My PIN is Walrus-1234")
    talk = store.sessions.create(title="Bank")
    call = StoredToolCall("call-1", REMEMBER_TOOL.name, json.dumps({"content": pin.content}))
    store.sessions.add_message(talk.id, MessageRole.ASSISTANT, "", tool_calls=[call])
    saved = {"saved": True, "id": pin.id, "content": pin.content, "status": "saved"}
    store.sessions.add_message(talk.id, MessageRole.TOOL, json.dumps(saved), tool_call_id="call-1")
    with Store.open(paths.data_dir()) as local:
        copy_store(store, local)
    forget(store, [pin.id])
    window = make_window()
    page = window.open_settings("storage").storage_page
    page.copy_button.click()
    qtbot.waitUntil(lambda: page.copy_status.text().startswith(("✓", "✗")), timeout=30_000)
    assert (
        "2 messages already there were redacted as in the source (memories forgotten for good "
        "there since)." in page.copy_status.text()
    )
    with Store.open(paths.data_dir()) as local:
        kept = json.dumps([m.to_json() for m in local.sessions.messages(talk.id)])
    assert "Walrus" not in kept
