"""Settings persist in the config folder; the API key lands in the keyring and in no file;
"Test connection" runs the providers' own checks on a worker, against the fake OpenAI server,
with the key as typed, and reports plainly."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

import keyring
import pytest
from keyring.backends import fail
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QDoubleSpinBox, QScrollArea, QWidget
from pytestqt.qtbot import QtBot

from app.jobs.workers import Workers
from app.settings.settings_dialog import PAGES, SettingsDialog
from app.settings.settings_section_form import SettingsSectionForm, is_basic
from tests.app.conftest import WindowFactory, settle
from tests.fakes.openai_server import OpenAIServer
from timothy import secrets
from timothy.secrets import OPENAI_API_KEY
from timothy.settings import OpenAISettings, Settings, load_settings, settings_path
from timothy.store import MemoryType

SECRET = "sk-test-9f8e7d6c5b4a-DO-NOT-LEAK"


@pytest.fixture
def dialog(qtbot: QtBot, workers: Workers) -> Iterator[SettingsDialog]:
    widget = SettingsDialog(Settings(), workers)
    qtbot.addWidget(widget)
    widget.show()
    settle(qtbot, workers)
    yield widget


def choose_openai(dialog: SettingsDialog, base_url: str = "", model: str = "gpt-4o-mini") -> None:
    dialog.provider_combo.setCurrentIndex(dialog.provider_combo.findData("openai"))
    dialog.base_url_edit.setText(base_url)
    dialog.openai_model.setCurrentText(model)


def files_under(folder: Path) -> Iterator[Path]:
    return (path for path in folder.rglob("*") if path.is_file())


def test_settings_persist_and_the_key_goes_only_to_the_keyring(
    qtbot: QtBot, dialog: SettingsDialog, workers: Workers, isolated_env: Path
) -> None:
    choose_openai(dialog, "http://127.0.0.1:11434/v1", "llama3.2")
    dialog.key_edit.setText(SECRET)
    dialog.openai_memories.setChecked(False)
    dialog.ask_before_saving.setChecked(True)
    dialog.embedder_buttons["local"].setChecked(True)
    with qtbot.waitSignal(dialog.settings_saved, timeout=5000) as saved:
        dialog.buttons.button(dialog.buttons.StandardButton.Save).click()
    settle(qtbot, workers)
    expected = saved.args[0]
    loaded = load_settings()
    assert loaded == expected
    assert loaded.chat_provider == "openai"
    assert loaded.openai.base_url == "http://127.0.0.1:11434/v1"
    assert loaded.openai.chat_model == "llama3.2"
    assert loaded.openai.use_memories is False
    assert loaded.memory.ask_before_saving is True
    assert loaded.embedding_provider == "local"
    assert settings_path().parent == isolated_env / "config"
    # The key is in the (test) OS keyring ...
    assert secrets.get_secret(OPENAI_API_KEY) == SECRET
    keyring_file = isolated_env / "keyring.json"
    assert SECRET in keyring_file.read_text(encoding="utf-8")
    # ... and in no file Timothy writes: settings, window state, database, logs, cache.
    checked = 0
    for folder in ("config", "data", "cache", "logs"):
        for path in files_under(isolated_env / folder):
            checked += 1
            assert SECRET.encode() not in path.read_bytes(), f"the key leaked into {path}"
    assert checked >= 1
    assert "api_key" not in json.loads(settings_path().read_text(encoding="utf-8"))["openai"]
    assert not dialog.isVisible()


def test_a_saved_key_is_never_shown_again(qtbot: QtBot, workers: Workers) -> None:
    secrets.set_secret(OPENAI_API_KEY, SECRET)
    widget = SettingsDialog(Settings(chat_provider="openai"), workers)
    qtbot.addWidget(widget)
    settle(qtbot, workers)
    assert widget.key_edit.text() == ""
    assert "(saved)" in widget.key_edit.placeholderText()
    assert "A key is saved" in widget.key_state.text()
    assert not widget.forget_key_button.isHidden()
    widget.forget_key_button.click()
    settle(qtbot, workers)
    assert secrets.get_secret(OPENAI_API_KEY) is None
    assert "never in a file" in widget.key_state.text()


def test_without_a_keyring_nothing_is_saved_and_the_dialog_says_why(
    qtbot: QtBot, dialog: SettingsDialog, workers: Workers
) -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        choose_openai(dialog)
        dialog.key_edit.setText(SECRET)
        dialog.buttons.button(dialog.buttons.StandardButton.Save).click()
        settle(qtbot, workers)
    finally:
        keyring.set_keyring(previous)
    assert not dialog.error_label.isHidden()
    assert "keyring" in dialog.error_label.text()
    assert dialog.isVisible()
    assert not settings_path().exists()


def test_test_connection_tries_the_typed_key_and_reports_success(
    qtbot: QtBot, dialog: SettingsDialog, workers: Workers, openai_server: OpenAIServer
) -> None:
    openai_server.api_key = SECRET
    secrets.set_secret(OPENAI_API_KEY, "sk-test-an-older-saved-key")
    choose_openai(dialog, openai_server.base_url, "llama3.2")
    dialog.key_edit.setText(SECRET)
    dialog.test_button.click()
    assert dialog.test_result.text() == "Testing…"
    assert not dialog.test_button.isEnabled()
    settle(qtbot, workers)
    assert dialog.test_result.text().startswith("✓ Connected: llama3.2 answered in ")
    assert dialog.test_button.isEnabled()
    [request] = openai_server.chat_requests
    assert request["model"] == "llama3.2"
    assert openai_server.requests[-1].headers["authorization"] == f"Bearer {SECRET}"
    # Testing saved nothing: the keyring still holds the older key.
    assert secrets.get_secret(OPENAI_API_KEY) == "sk-test-an-older-saved-key"


def test_test_connection_names_an_unknown_model(
    qtbot: QtBot, dialog: SettingsDialog, workers: Workers, openai_server: OpenAIServer
) -> None:
    openai_server.fail(404)
    choose_openai(dialog, openai_server.base_url, "gpt-none")
    dialog.test_button.click()
    settle(qtbot, workers)
    text = dialog.test_result.text()
    assert text.startswith("✗ ") and "gpt-none" in text and "Traceback" not in text


def test_test_connection_explains_a_refused_key_and_a_dead_server(
    qtbot: QtBot, dialog: SettingsDialog, workers: Workers, openai_server: OpenAIServer
) -> None:
    openai_server.api_key = "the-right-key"
    choose_openai(dialog, openai_server.base_url, "m")
    dialog.key_edit.setText("the-wrong-key")
    dialog.test_button.click()
    settle(qtbot, workers)
    refused = dialog.test_result.text()
    assert refused.startswith("✗ ") and "key" in refused.lower()
    base_url = openai_server.base_url
    openai_server.stop()
    dialog.test_button.click()  # the server is gone now
    settle(qtbot, workers)
    gone = dialog.test_result.text()
    assert gone.startswith("✗ ") and gone != refused and "Traceback" not in gone
    assert base_url in gone or "reach" in gone.lower()


def test_test_embeddings_embeds_one_query(
    qtbot: QtBot, dialog: SettingsDialog, workers: Workers, openai_server: OpenAIServer
) -> None:
    choose_openai(dialog, openai_server.base_url)
    dialog.embedder_buttons["openai"].setChecked(True)
    dialog.embedding_test_button.click()
    settle(qtbot, workers)
    assert dialog.embedding_test_result.text().startswith(
        "✓ Connected: openai/text-embedding-3-small (1536-d) answered in "
    )
    assert len(openai_server.embedding_requests) == 1


def test_bedrock_fields_round_trip(qtbot: QtBot, dialog: SettingsDialog, workers: Workers) -> None:
    dialog.provider_combo.setCurrentIndex(dialog.provider_combo.findData("bedrock"))
    assert dialog.openai_box.isHidden() and not dialog.bedrock_box.isHidden()
    dialog.region_edit.setText("eu-west-1")
    dialog.profile_edit.setText("work")
    dialog.bedrock_model.setCurrentText("us.amazon.nova-pro-v1:0")
    with qtbot.waitSignal(dialog.settings_saved, timeout=5000):
        dialog.buttons.button(dialog.buttons.StandardButton.Save).click()
    loaded = load_settings()
    assert (loaded.chat_provider, loaded.bedrock.region, loaded.bedrock.profile) == (
        "bedrock",
        "eu-west-1",
        "work",
    )
    assert loaded.bedrock.chat_model == "us.amazon.nova-pro-v1:0"
    assert loaded.openai == OpenAISettings()


@dataclass(frozen=True)
class SampleRecallSettings:
    """Shaped like recall's own settings: per-type read-only maps keyed by MemoryType."""

    token_budget: int = 1500
    time_bound_seconds: float = 10.0
    half_life_days: Mapping[MemoryType, float] = field(
        default_factory=lambda: MappingProxyType({t: 90.0 for t in MemoryType})
    )
    min_score: float = 0.005
    type_weights: Mapping[MemoryType, float] = field(
        default_factory=lambda: MappingProxyType(
            {MemoryType.SEMANTIC: 1.0, MemoryType.EPISODIC: 0.8}
        )
    )
    label: str = "x"


def test_a_settings_section_form_edits_whatever_fields_a_feature_defines(qtbot: QtBot) -> None:
    section = SampleRecallSettings()
    basic = SettingsSectionForm(section, include=is_basic)
    advanced = SettingsSectionForm(section, include=lambda name: not is_basic(name))
    qtbot.addWidget(basic)
    qtbot.addWidget(advanced)
    assert set(basic.editors) == {"token_budget"}
    assert set(advanced.editors) == {
        "time_bound_seconds",
        "half_life_days",
        "min_score",
        "type_weights",
        "label",
    }
    basic.editors["token_budget"].setValue(2000)  # type: ignore[attr-defined]
    edited = basic.value()
    assert edited.token_budget == 2000 and edited.half_life_days == section.half_life_days
    spins = advanced.editors["type_weights"].findChildren(QDoubleSpinBox)
    spins[1].setValue(0.5)
    assert advanced.value().type_weights == {MemoryType.SEMANTIC: 1.0, MemoryType.EPISODIC: 0.5}
    half_lives = advanced.editors["half_life_days"].findChildren(QDoubleSpinBox)
    assert len(half_lives) == len(MemoryType)
    half_lives[2].setValue(30.0)
    assert advanced.value().half_life_days[list(MemoryType)[2]] == 30.0


def test_saving_untouched_settings_changes_no_number(qtbot: QtBot, dialog: SettingsDialog) -> None:
    """A spin box shows a rounded number (the minimum score 0.02773 as 0.0277); saving
    without touching it must keep the exact value, not the rounding."""
    assert dialog.chosen_settings() == Settings()
    advanced = dialog.section_forms["recall"][1]
    spin = advanced.editors["min_score"]
    assert isinstance(spin, QDoubleSpinBox)
    spin.setValue(0.05)
    assert dialog.chosen_settings().recall.min_score == 0.05


def save_failing_for_want_of_a_keyring(
    qtbot: QtBot, dialog: SettingsDialog, workers: Workers
) -> None:
    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())
    try:
        dialog.key_edit.setText(SECRET)
        dialog.buttons.button(dialog.buttons.StandardButton.Save).click()
        settle(qtbot, workers)
    finally:
        keyring.set_keyring(previous)
    assert not dialog.error_label.isHidden()


def test_the_keyring_error_goes_when_the_key_is_cleared_or_bedrock_chosen(
    qtbot: QtBot, make_window: WindowFactory
) -> None:
    window = make_window()
    dialog = window.open_settings()
    choose_openai(dialog, "http://127.0.0.1:1234/v1", "llama3.2")
    save_failing_for_want_of_a_keyring(qtbot, dialog, window.network)
    message = dialog.error_label.text()
    # A custom server never receives OPENAI_API_KEY, so the hint does not suggest it.
    assert "keyring" in message and "OPENAI_API_KEY" not in message
    assert "leave the field empty" in message
    dialog.key_edit.clear()
    assert dialog.error_label.isHidden()
    save_failing_for_want_of_a_keyring(qtbot, dialog, window.network)
    dialog.provider_combo.setCurrentIndex(dialog.provider_combo.findData("bedrock"))
    assert dialog.error_label.isHidden()
    dialog.reject()


def test_without_a_keyring_openai_itself_may_take_the_key_from_the_environment(
    qtbot: QtBot, make_window: WindowFactory
) -> None:
    window = make_window()
    dialog = window.open_settings()
    choose_openai(dialog)  # OpenAI's own API
    save_failing_for_want_of_a_keyring(qtbot, dialog, window.network)
    assert "OPENAI_API_KEY" in dialog.error_label.text()
    dialog.reject()


def test_test_connection_can_be_cancelled_and_its_late_answer_is_dropped(
    qtbot: QtBot, make_window: WindowFactory, openai_server: OpenAIServer
) -> None:
    window = make_window(server=openai_server)
    dialog = window.open_settings()
    assert dialog.cancel_test_button.isHidden()
    openai_server.reply("OK", delay=1.0)  # answers, but only after the owner gave up
    dialog.test_button.click()
    assert not dialog.cancel_test_button.isHidden() and not dialog.test_button.isEnabled()
    qtbot.waitUntil(lambda: len(openai_server.chat_requests) == 1, timeout=5000)
    dialog.cancel_test_button.click()
    assert dialog.test_result.text() == "Cancelled."
    assert dialog.test_button.isEnabled() and dialog.cancel_test_button.isHidden()
    settle(qtbot, window.network)  # the late answer arrives ...
    assert [r["model"] for r in openai_server.chat_requests] == ["gpt-4o-mini"]
    assert dialog.test_result.text() == "Cancelled."  # ... and is not shown
    # A new test after a cancelled one reports normally.
    openai_server.reply("OK")
    dialog.test_button.click()
    settle(qtbot, window.network)
    assert dialog.test_result.text().startswith("✓ Connected: gpt-4o-mini answered")
    assert dialog.cancel_test_button.isHidden()
    dialog.reject()


def test_timeouts_are_advanced_settings_and_start_collapsed(
    qtbot: QtBot, make_window: WindowFactory
) -> None:
    window = make_window()
    dialog = window.open_settings(page="memory")
    everyday = {
        name for basic, _advanced in dialog.section_forms.values() for name in basic.editors
    }
    advanced = {
        name for _basic, advanced in dialog.section_forms.values() for name in advanced.editors
    }
    assert not any("timeout" in name or "bound" in name for name in everyday)
    assert {"time_bound_seconds", "extraction_timeout_seconds"} <= advanced
    _basic, recall_advanced = dialog.section_forms["recall"]
    assert not recall_advanced.isVisible()
    dialog.advanced_toggle.click()
    assert recall_advanced.isVisible()
    assert dialog.advanced_toggle.text() == "Hide advanced settings"
    dialog.reject()


def model_names(dialog: SettingsDialog) -> list[str]:
    combo = dialog.openai_model
    return [combo.itemText(i) for i in range(combo.count())]


def test_the_model_list_is_the_servers_own_fetched_off_the_gui_thread(
    qtbot: QtBot, make_window: WindowFactory, openai_server: OpenAIServer
) -> None:
    openai_server.models = ["llama3.2", "qwen2.5:7b"]
    openai_server.models_delay = 0.3
    window = make_window(
        server=openai_server,
        settings=Settings(
            chat_provider="openai", openai=openai_server.settings(chat_model="qwen2.5:7b")
        ),
    )
    settle(qtbot, window.network)  # the header's model picker asked too
    asked_before = len([r for r in openai_server.requests if r.operation == "models"])
    dialog = window.open_settings()
    # Opening the dialog asked the server on a worker: the dialog is already up and waiting.
    assert dialog.models_state.text() == "Asking the server for its models…"
    assert not dialog.list_models_button.isEnabled()
    settle(qtbot, window.network)
    assert model_names(dialog) == ["llama3.2", "qwen2.5:7b"]  # no OpenAI names
    assert dialog.openai_model.currentText() == "qwen2.5:7b"
    assert dialog.models_state.text() == "2 models on this server."
    asked = [r.path for r in openai_server.requests if r.operation == "models"]
    assert asked[asked_before:] == ["/v1/models"]
    # The owner picks another of the server's models, and that is what is saved.
    dialog.openai_model.setCurrentIndex(0)
    with qtbot.waitSignal(dialog.settings_saved, timeout=5000):
        dialog.buttons.button(dialog.buttons.StandardButton.Save).click()
    assert load_settings().openai.chat_model == "llama3.2"


def test_a_new_server_address_lists_that_servers_models(
    qtbot: QtBot, dialog: SettingsDialog, workers: Workers, openai_server: OpenAIServer
) -> None:
    assert "gpt-4o" in model_names(dialog)  # OpenAI's own names for OpenAI's own API
    openai_server.models = ["mistral"]
    choose_openai(dialog, openai_server.base_url, "gpt-4o-mini")
    dialog.base_url_edit.editingFinished.emit()
    settle(qtbot, workers)
    assert model_names(dialog) == ["mistral"]
    # The model typed before is not on this server: it says so rather than pick silently.
    assert dialog.openai_model.currentText() == "gpt-4o-mini"
    assert dialog.models_state.text() == (
        "This server does not list “gpt-4o-mini”; choose one of its 1 model."
    )
    openai_server.models = None  # a server that lists nothing
    dialog.list_models_button.click()
    settle(qtbot, workers)
    assert dialog.models_state.text() == (
        f"The server at {openai_server.base_url} does not list its models; type the model's name."
    )
    assert dialog.list_models_button.isEnabled()


def test_an_address_without_v1_is_told_where_the_api_is(
    qtbot: QtBot, dialog: SettingsDialog, workers: Workers, openai_server: OpenAIServer
) -> None:
    # Ollama's own address, as an owner types it first: its OpenAI API is under /v1
    choose_openai(dialog, openai_server.url, "llama3.2")
    dialog.list_models_button.click()
    settle(qtbot, workers)
    assert dialog.models_state.text() == (
        f"The server's API is at {openai_server.base_url}: add /v1 to the server address."
    )


def test_no_page_scrolls_sideways_at_its_size(qtbot: QtBot, workers: Workers) -> None:
    """At 100 % in a desktop's usual type (11 pt), every page is read without a sideways
    scroll bar (the Memory page's first option was wider than the page)."""
    app = QApplication.instance()
    assert isinstance(app, QApplication)
    before = app.font()
    app.setFont(QFont("DejaVu Sans", 11))
    try:
        dialog = SettingsDialog(Settings(), workers)
        qtbot.addWidget(dialog)
        dialog.show()
        no_sideways_scrolling(qtbot, workers, dialog)
    finally:
        app.setFont(before)


def no_sideways_scrolling(qtbot: QtBot, workers: Workers, dialog: SettingsDialog) -> None:
    settle(qtbot, workers)
    for advanced in (False, True):
        if advanced != dialog.advanced_toggle.isChecked():
            dialog.advanced_toggle.click()
        for page in PAGES:
            dialog.show_page(page)
            area = dialog.pages.currentWidget()
            if not isinstance(area, QScrollArea):
                continue  # the backups page: a table of its own
            # Laid out once shown (a page's scroll bars settle in the events after that).
            qtbot.waitUntil(lambda area=area: area.widget().isVisible(), timeout=2000)
            qtbot.wait(0)
            bar = area.horizontalScrollBar()
            assert bar.maximum() == 0, (page, advanced, bar.maximum())


@pytest.mark.parametrize(
    "address",
    ["localhost:11434/v1", "127.0.0.1:1234/v1", "not a url", "ftp://127.0.0.1/v1", "http://"],
)
def test_an_address_no_client_can_use_is_refused_on_save_with_how_to_write_it(
    qtbot: QtBot, dialog: SettingsDialog, workers: Workers, address: str
) -> None:
    choose_openai(dialog, address, "llama3.2")
    dialog.show_page("memory")
    dialog.buttons.button(dialog.buttons.StandardButton.Save).click()
    settle(qtbot, workers)
    assert dialog.isVisible()  # nothing saved, nothing closed
    assert not settings_path().exists()
    assert dialog.nav.currentRow() == PAGES["chat"]  # the page at fault, with its field
    assert dialog.error_label.isVisible()
    assert "http://" in dialog.error_label.text()
    assert "127.0.0.1:11434/v1" in dialog.error_label.text()
    assert dialog.focusWidget() is dialog.base_url_edit
    # The list of models says the same instead of "could not reach the server".
    dialog.list_models_button.click()
    settle(qtbot, workers)
    assert dialog.models_state.text() == dialog.error_label.text()
    dialog.base_url_edit.setText("http://127.0.0.1:11434/v1")
    assert dialog.error_label.isHidden()  # corrected: the complaint goes


def test_a_wrong_address_stops_no_save_when_nothing_uses_it(
    qtbot: QtBot, dialog: SettingsDialog, workers: Workers
) -> None:
    choose_openai(dialog, "localhost:11434/v1")
    dialog.provider_combo.setCurrentIndex(dialog.provider_combo.findData(None))
    with qtbot.waitSignal(dialog.settings_saved, timeout=5000):
        dialog.buttons.button(dialog.buttons.StandardButton.Save).click()


@pytest.mark.parametrize("provider", [None, "openai", "bedrock"])
def test_narrowed_to_its_least_width_no_page_scrolls_sideways(
    qtbot: QtBot, workers: Workers, provider: str | None
) -> None:
    """The owner narrows the dialog as far as it goes: every page still reads whole (at
    537 px the Memory page's options and the Chat page's fields ran off to the right)."""
    dialog = SettingsDialog(Settings(), workers)
    qtbot.addWidget(dialog)
    dialog.provider_combo.setCurrentIndex(dialog.provider_combo.findData(provider))
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.resize(1, dialog.height())
    qtbot.waitUntil(lambda: dialog.width() == dialog.minimumWidth(), timeout=2000)
    no_sideways_scrolling(qtbot, workers, dialog)


def tab_stops(qtbot: QtBot, start: QWidget, limit: int = 60) -> list[QWidget]:
    """The widgets Tab visits from `start` until it comes back to it."""
    start.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(start.hasFocus, timeout=2000)
    stops: list[QWidget] = []
    for _ in range(limit):
        focused = QApplication.focusWidget()
        assert focused is not None
        qtbot.keyClick(focused, Qt.Key.Key_Tab)
        now = QApplication.focusWidget()
        assert now is not None
        if now is start:
            return stops
        stops.append(now)
    raise AssertionError(f"Tab never came back: {stops}")


@pytest.mark.parametrize("provider", [None, "openai"])
def test_every_tab_stop_is_a_control_the_owner_can_see_act_on(
    qtbot: QtBot, workers: Workers, provider: str | None
) -> None:
    """Tab from the page list goes through the page's controls to Save and Cancel; it never
    stops on a page's scroll area, which shows no focus (Tab seemed to go nowhere)."""
    dialog = SettingsDialog(Settings(), workers)
    qtbot.addWidget(dialog)
    dialog.provider_combo.setCurrentIndex(dialog.provider_combo.findData(provider))
    # Short: the Chat page scrolls, and Tab must bring its lowest control into view.
    dialog.resize(dialog.width(), 300)
    dialog.show()
    qtbot.waitExposed(dialog)
    dialog.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is dialog, timeout=5000)
    stops = tab_stops(qtbot, dialog.nav)
    assert not [stop for stop in stops if isinstance(stop, QScrollArea)]
    assert stops[0] is dialog.provider_combo
    assert (dialog.test_button in stops) is (provider is not None)  # no model: nothing to test
    save = dialog.buttons.button(dialog.buttons.StandardButton.Save)
    assert stops[-2:] == [save, dialog.buttons.button(dialog.buttons.StandardButton.Cancel)]
    if provider is not None:
        dialog.nav.setFocus()
        qtbot.keyClick(dialog.nav, Qt.Key.Key_Tab)
        while QApplication.focusWidget() is not dialog.test_button:
            qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)
        area = dialog.pages.currentWidget()
        assert isinstance(area, QScrollArea)
        where = dialog.test_button.mapTo(area.viewport(), dialog.test_button.rect().topLeft())
        assert area.viewport().rect().contains(where)  # scrolled into view


def test_a_refused_server_address_gets_the_cursor(
    qtbot: QtBot, dialog: SettingsDialog, workers: Workers
) -> None:
    """Save refuses a memory server's address on the Storage page: the owner types the fix at
    once, without hunting for the field (the focus stayed on the page list)."""
    dialog.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is dialog, timeout=5000)
    dialog.storage_page.server_button.setChecked(True)
    dialog.storage_page.url_edit.setText("nas.local/timothy")
    dialog.show_page("memory")
    dialog.buttons.button(dialog.buttons.StandardButton.Save).click()
    assert dialog.nav.currentRow() == PAGES["storage"]
    assert "postgresql://" in dialog.error_label.text()
    assert QApplication.focusWidget() is dialog.storage_page.url_edit
    assert dialog.storage_page.url_edit.selectedText() == "nas.local/timothy"
    assert not settings_path().exists()
