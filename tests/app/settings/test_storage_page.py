"""Settings ▸ Storage: choosing a shared PostgreSQL server, testing it against a real one, and
its password going to the keyring only."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from app.jobs.workers import Workers
from app.settings.settings_dialog import SettingsDialog
from tests.app.conftest import settle
from tests.fakes.postgres import PgServer, password_role
from timothy import secrets
from timothy.settings import Settings, load_settings, settings_path
from timothy.store.location import StoreSettings, store_password_key
from timothy.store.postgres import PostgresStore

SECRET = "pg-pass-4242-DO-NOT-LEAK"


@pytest.fixture
def dialog(qtbot: QtBot, workers: Workers) -> Iterator[SettingsDialog]:
    widget = SettingsDialog(Settings(), workers, page="storage")
    qtbot.addWidget(widget)
    widget.show()
    settle(qtbot, workers)
    yield widget


def test_the_server_is_tested_and_saved_with_its_password_in_the_keyring_only(
    qtbot: QtBot, dialog: SettingsDialog, workers: Workers, pg_url: str, isolated_env: Path
) -> None:
    page = dialog.storage_page
    assert dialog.pages.currentIndex() == 3
    assert page.local_button.isChecked() and not page.server_box.isEnabled()
    with PostgresStore(pg_url, follow_changes=False) as server:
        server.memories.add("Already on the server")
    page.server_button.setChecked(True)
    assert page.server_box.isEnabled()
    page.url_edit.setText(pg_url)
    page.password_edit.setText(SECRET)
    page.test_button.click()
    qtbot.waitUntil(lambda: page.test_result.text().startswith(("✓", "✗")), timeout=10_000)
    assert page.test_result.text().startswith("✓ PostgreSQL 16")
    assert (
        "pgvector" in page.test_result.text()
        and "holds 1 memory (schema" in page.test_result.text()
    )

    page.ssl_combo.setCurrentIndex(page.ssl_combo.findData("verify-full"))
    page.ca_edit.setText("/etc/ssl/certs/home-ca.pem")
    with qtbot.waitSignal(dialog.settings_saved, timeout=5000):
        dialog.buttons.button(dialog.buttons.StandardButton.Save).click()
    settle(qtbot, workers)
    assert load_settings().store == StoreSettings(
        engine="postgres", url=pg_url, sslmode="verify-full", ca_file="/etc/ssl/certs/home-ca.pem"
    )
    assert secrets.get_secret(store_password_key(pg_url)) == SECRET
    assert SECRET not in settings_path().read_text(encoding="utf-8")
    assert json.loads(settings_path().read_text(encoding="utf-8"))["store"]["engine"] == "postgres"


def test_a_wrong_address_or_a_password_in_it_is_refused_with_a_reason(
    qtbot: QtBot, dialog: SettingsDialog, workers: Workers
) -> None:
    page = dialog.storage_page
    page.server_button.setChecked(True)
    page.url_edit.setText("nas.local/timothy")
    dialog.buttons.button(dialog.buttons.StandardButton.Save).click()
    assert "postgresql://" in dialog.error_label.text() and dialog.isVisible()
    page.url_edit.setText("postgresql://timothy:hunter2@nas.local/timothy")
    dialog.buttons.button(dialog.buttons.StandardButton.Save).click()
    assert "Password field" in dialog.error_label.text()
    assert not settings_path().exists()


def test_the_address_error_goes_once_the_address_or_the_choice_changes(
    qtbot: QtBot, dialog: SettingsDialog
) -> None:
    page = dialog.storage_page
    page.server_button.setChecked(True)
    page.url_edit.setText("nas.local/timothy")
    dialog.buttons.button(dialog.buttons.StandardButton.Save).click()
    assert not dialog.error_label.isHidden()
    page.url_edit.setText("postgresql://timothy@nas.local/timothy")
    assert dialog.error_label.isHidden()  # it spoke of the address as it was
    page.url_edit.setText("nas.local/timothy")
    dialog.buttons.button(dialog.buttons.StandardButton.Save).click()
    assert not dialog.error_label.isHidden()
    page.local_button.setChecked(True)
    assert dialog.error_label.isHidden()


def test_a_server_that_does_not_answer_is_said_plainly(
    qtbot: QtBot, dialog: SettingsDialog, tmp_path: Path
) -> None:
    page = dialog.storage_page
    page.server_button.setChecked(True)
    page.url_edit.setText(f"postgresql://nobody@/nothing?host={tmp_path}")
    page.test_button.click()
    qtbot.waitUntil(lambda: page.test_result.text().startswith(("✓", "✗")), timeout=10_000)
    assert page.test_result.text().startswith("✗") and "did not answer" in page.test_result.text()


def test_a_wrong_password_is_said_to_be_refused_not_unanswered(
    qtbot: QtBot, dialog: SettingsDialog, pg_server: PgServer
) -> None:
    page = dialog.storage_page
    page.server_button.setChecked(True)
    page.url_edit.setText(password_role(pg_server, "owner_with_password", "right"))
    page.password_edit.setText("wrong")
    page.test_button.click()
    qtbot.waitUntil(lambda: page.test_result.text().startswith(("✓", "✗")), timeout=10_000)
    said = page.test_result.text()
    assert "did not answer" not in said
    assert said.endswith(
        'refused this machine: password authentication failed for user "owner_with_password".'
    )


def test_a_test_s_answer_goes_once_what_it_tested_is_changed(
    qtbot: QtBot, dialog: SettingsDialog, pg_server: PgServer
) -> None:
    """A refused password's answer stayed beside the right password typed after it (and
    a "✓" beside an address with a typo put in it since), as if it spoke of them."""
    page = dialog.storage_page
    page.server_button.setChecked(True)
    page.url_edit.setText(password_role(pg_server, "owner_with_password", "right"))
    page.password_edit.setText("wrong")
    page.test_button.click()
    qtbot.waitUntil(lambda: page.test_result.text().startswith(("✓", "✗")), timeout=10_000)
    page.password_edit.setText("right")
    assert page.test_result.text() == ""
    page.test_button.click()
    qtbot.waitUntil(lambda: page.test_result.text().startswith(("✓", "✗")), timeout=10_000)
    assert page.test_result.text().startswith("✗")  # this user may not create tables there
    for change in (
        lambda: page.url_edit.setText(page.url_edit.text() + "x"),
        lambda: page.ssl_combo.setCurrentIndex(page.ssl_combo.findData("require")),
        lambda: page.ca_edit.setText("/etc/ssl/home-ca.pem"),
    ):
        page.test_result.setText("✓ earlier answer")
        change()
        assert page.test_result.text() == ""
    assert page.test_button.isEnabled()


def test_a_test_answer_for_an_address_since_changed_is_not_shown(
    qtbot: QtBot, dialog: SettingsDialog, tmp_path: Path, workers: Workers
) -> None:
    page = dialog.storage_page
    page.server_button.setChecked(True)
    page.url_edit.setText(f"postgresql://nobody@/nothing?host={tmp_path}")
    page.test_button.click()
    page.url_edit.setText(f"postgresql://nobody@/other?host={tmp_path}")
    settle(qtbot, workers)
    assert page.test_result.text() == "" and page.test_button.isEnabled()
