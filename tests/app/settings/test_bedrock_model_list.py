"""Settings and the chat header offer Bedrock's own chat models for the region (asked on a
worker, from the fake control plane through the real boto3 client), and the Nova models
Timothy knows, with a plain note, when the region's cannot be listed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.jobs.workers import Workers
from app.settings.settings_dialog import BEDROCK_MODELS, SettingsDialog
from tests.app.conftest import WindowFactory, settle
from tests.fakes.bedrock_control_server import BedrockControlServer
from timothy.providers.bedrock_models import list_bedrock_chat_models
from timothy.settings import BedrockSettings, Settings

BEDROCK = Settings(
    chat_provider="bedrock",
    bedrock=BedrockSettings(region="us-east-1", chat_model="us.amazon.nova-lite-v1:0"),
)


@pytest.fixture
def bedrock_dialog(
    qtbot: QtBot, workers: Workers, bedrock_control: BedrockControlServer
) -> Iterator[SettingsDialog]:
    dialog = SettingsDialog(BEDROCK, workers)
    qtbot.addWidget(dialog)
    dialog.show()
    settle(qtbot, workers)
    yield dialog


def offered(dialog: SettingsDialog) -> list[str]:
    combo = dialog.bedrock_model
    return [combo.itemText(i) for i in range(combo.count())]


def test_the_dialog_offers_the_regions_chat_models(
    bedrock_dialog: SettingsDialog, bedrock_control: BedrockControlServer
) -> None:
    expected = list(list_bedrock_chat_models(BEDROCK.bedrock).models)
    assert offered(bedrock_dialog) == expected
    assert "meta.llama3-8b-instruct-v1:0" in expected, "more than the Nova models"
    assert bedrock_dialog.bedrock_model.currentText() == "us.amazon.nova-lite-v1:0"
    assert (
        bedrock_dialog.bedrock_models_state.text() == f"{len(expected)} chat models in us-east-1."
    )


def test_another_region_lists_again(
    qtbot: QtBot,
    bedrock_dialog: SettingsDialog,
    bedrock_control: BedrockControlServer,
    workers: Workers,
) -> None:
    asked = len(bedrock_control.requests)
    bedrock_dialog.region_edit.setFocus()
    bedrock_dialog.region_edit.setText("us-west-2")
    qtbot.keyClick(bedrock_dialog.region_edit, Qt.Key.Key_Return)  # editing finished
    settle(qtbot, workers)
    again = bedrock_control.requests[asked:]
    assert again and "us-west-2" in again[0].headers["authorization"]
    assert bedrock_dialog.bedrock_models_state.text().endswith("in us-west-2.")


def test_a_refused_listing_falls_back_to_the_nova_models_with_a_note(
    qtbot: QtBot, workers: Workers, bedrock_control: BedrockControlServer
) -> None:
    bedrock_control.fail_with = "AccessDeniedException"
    dialog = SettingsDialog(BEDROCK, workers)
    qtbot.addWidget(dialog)
    settle(qtbot, workers)
    assert offered(dialog) == BEDROCK_MODELS
    note = dialog.bedrock_models_state.text()
    assert note.startswith("Could not list Bedrock's models: Your AWS credentials may not list")
    assert note.endswith("These are the Nova models Timothy knows.")
    assert dialog.list_bedrock_models_button.isEnabled(), "the owner may try again"


def test_choosing_bedrock_lists_its_models(
    qtbot: QtBot, workers: Workers, bedrock_control: BedrockControlServer
) -> None:
    dialog = SettingsDialog(Settings(), workers)
    qtbot.addWidget(dialog)
    settle(qtbot, workers)
    assert bedrock_control.requests == []
    dialog.region_edit.setText("us-east-1")
    dialog.provider_combo.setCurrentIndex(dialog.provider_combo.findData("bedrock"))
    settle(qtbot, workers)
    assert "meta.llama3-8b-instruct-v1:0" in offered(dialog)


def test_the_header_picker_offers_the_regions_models(
    qtbot: QtBot, make_window: WindowFactory, bedrock_control: BedrockControlServer
) -> None:
    window = make_window(settings=BEDROCK)
    picker = window.chat.model_picker
    expected = list(list_bedrock_chat_models(BEDROCK.bedrock).models)
    qtbot.waitUntil(lambda: picker.models() == expected, timeout=5000)
    assert picker.currentText() == "us.amazon.nova-lite-v1:0"
