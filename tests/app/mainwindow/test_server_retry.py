"""The window on a server that refused this computer's login: the server is tried less and
less often (a refusal will not mend by waiting), but at once when the owner asks (*Try again*
on the banner) or saves the settings with the password put right, with no restart."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.mainwindow.server_watch import BACK_TEXT
from tests.app.conftest import WindowFactory
from tests.fakes.postgres import PgServer
from tests.store.test_server_refusal import owned_database
from timothy import secrets
from timothy.settings import Settings
from timothy.store.location import StoreSettings, open_store, store_password_key
from timothy.store.postgres import PostgresStore

SHOWN_MS = 60_000


# Under the 30 s a second refused login waits for the next try: only a try at once meets it.
AT_ONCE_MS = 20_000


@pytest.fixture
def store(pg_server: PgServer, isolated_env: Path) -> Iterator[PostgresStore]:
    """The app's store as the app opens it, with a wrong password in the keyring."""
    secrets.set_secret(store_password_key(owned_database(pg_server)), "wrong")
    settings = StoreSettings(engine="postgres", url=owned_database(pg_server))
    opened = open_store(settings=settings)
    assert isinstance(opened, PostgresStore)
    with opened:
        yield opened


def refused_twice(qtbot: QtBot, store: PostgresStore) -> None:
    """The feed's second refusal is past: its next try is 30 s away."""
    assert store.changes is not None
    qtbot.waitUntil(
        lambda: store.changes is not None and store.changes.refusals >= 1, timeout=SHOWN_MS
    )
    store.retry_now()
    qtbot.waitUntil(
        lambda: store.changes is not None and store.changes.refusals >= 2, timeout=SHOWN_MS
    )


def test_try_again_on_the_banner_uses_a_password_put_right_at_once(
    qtbot: QtBot, make_window: WindowFactory, store: PostgresStore, pg_server: PgServer
) -> None:
    window = make_window()
    qtbot.waitUntil(window.banner.isVisible, timeout=SHOWN_MS)
    assert window.banner.action_button.isVisible()
    assert window.banner.action_button.text() == "Try again"
    refused_twice(qtbot, store)
    secrets.set_secret(store_password_key(owned_database(pg_server)), "right")
    qtbot.mouseClick(window.banner.action_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.banner.text_label.text() == BACK_TEXT, timeout=AT_ONCE_MS)
    assert store.reachable and store.refused is None


def test_settings_saved_with_the_password_put_right_reconnect_at_once(
    qtbot: QtBot, make_window: WindowFactory, store: PostgresStore, pg_server: PgServer
) -> None:
    """The same storage choice saved again with the password typed in Settings ▸ Storage
    (it goes to the keyring) is no new choice to restart for: the server is tried with it
    at once."""
    address = owned_database(pg_server)
    window = make_window(settings=Settings(store=StoreSettings(engine="postgres", url=address)))
    qtbot.waitUntil(window.banner.isVisible, timeout=SHOWN_MS)
    refused_twice(qtbot, store)
    dialog = window.open_settings("storage")
    dialog.storage_page.password_edit.setText("right")
    dialog.save()
    qtbot.waitUntil(lambda: window.banner.text_label.text() == BACK_TEXT, timeout=AT_ONCE_MS)
    assert store.reachable
    assert "restart" not in window.banner.text_label.text().lower()
