"""The window on a server that turns this machine's login away (here a wrong password): it
opens with what this machine keeps, as for a server out of reach, but says what is wrong and
where to put it right, not "out of reach — retrying", which would never mend by itself."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.mainwindow.main_window import MainWindow
from app.mainwindow.window_state import WindowState
from app.memories.memory_pane import REFUSED_TEXT
from app.transcript.notice import Notice
from tests.app.conftest import WindowFactory, settle, settle_engine
from tests.fakes.openai_server import OpenAIServer
from tests.fakes.postgres import PgServer, password_role
from timothy.errors import StoreError
from timothy.settings import Settings
from timothy.store.location import StoreSettings, open_store
from timothy.store.postgres import PostgresStore

SHOWN_MS = 60_000


@pytest.fixture
def store(pg_server: PgServer, isolated_env: Path) -> Iterator[PostgresStore]:
    """The app's store on a server whose password this machine has wrong."""
    address = password_role(pg_server, "owner_with_password", "right")
    with PostgresStore(make_conninfo(address, password="wrong"), start_offline=True) as opened:
        yield opened


def test_the_banner_says_the_server_refused_the_password(
    qtbot: QtBot, make_window: WindowFactory, store: PostgresStore
) -> None:
    window = make_window()
    qtbot.waitUntil(window.banner.isVisible, timeout=SHOWN_MS)
    said = window.banner.text_label.text()
    assert "out of reach" not in said
    assert (
        'refused this machine: password authentication failed for user "owner_with_password"'
        in said
    )
    assert "Settings ▸ Storage" in said
    # The memory pane says the same, not that the server is out of reach.
    pane_says = window.memory_pane.away_label.text()
    assert window.memory_pane.away_label.isVisibleTo(window)
    assert pane_says == REFUSED_TEXT and "out of reach" not in pane_says
    # The views' failures (they cannot read the memories) add no error of their own.
    settle(qtbot, window.workers)
    assert window.banner.kind == "warning"
    assert window.banner.text_label.text() == said


def test_a_turn_s_notice_says_the_server_refused_the_login_not_that_it_is_out_of_reach(
    qtbot: QtBot, make_window: WindowFactory, store: PostgresStore, openai_server: OpenAIServer
) -> None:
    """Under the reply, as in the banner: the server's reason and where to put it right."""
    window = make_window(server=openai_server)
    openai_server.reply("Noted.")
    openai_server.reply("Groceries")  # the title
    openai_server.reply(json.dumps({"facts": []}))  # extraction
    window.chat.composer.input.setFocus()
    window.chat.composer.set_text("Add eggs to the list")
    qtbot.keyClick(window.chat.composer.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not window.chat.streaming, timeout=10_000)
    settle_engine(qtbot, window)
    [notice] = [
        n for n in window.chat.transcript.findChildren(Notice) if n.property("away") is True
    ]
    said = notice.text_label.text()
    assert "out of reach" not in said
    assert "refused this computer's login" in said
    assert 'password authentication failed for user "owner_with_password"' in said
    assert "Settings ▸ Storage" in said


def test_a_server_store_that_cannot_be_opened_says_what_to_do_meanwhile(
    qtbot: QtBot, pg_url: str
) -> None:
    """A server set up by a newer Timothy (or one this user may not create tables on) is
    not opened at all: the banner said "chatting waits until it opens", which it never
    does by itself. It says to restart once it is put right, or to choose this computer's
    file meanwhile, and takes the owner to Settings ▸ Storage."""
    with PostgresStore(pg_url, follow_changes=False):
        pass
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE timothy_schema SET version = 99")
    settings = Settings(store=StoreSettings("postgres", pg_url))
    with pytest.raises(StoreError) as refused:
        open_store(settings=settings.store)
    window = MainWindow(
        None,
        store_error=str(refused.value),
        settings=settings,
        window_state=WindowState(),
        probe_local_servers=list,
    )
    qtbot.addWidget(window)
    said = window.banner.text_label.text()
    assert "set up by a newer Timothy" in said
    assert "chatting waits until it opens" not in said
    assert said.endswith(
        "Once that is put right, restart Timothy; to work from this computer's file "
        "meanwhile, choose it in Settings ▸ Storage."
    )
    assert window.banner.action_button.text() == "Storage settings"
    window.banner.action_button.click()
    dialog = window.settings_dialog
    assert dialog is not None and dialog.pages.currentIndex() == 3  # Storage
    window.close()
    settle(qtbot, window.workers, window.network, window.jobs)
