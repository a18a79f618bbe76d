"""The header's model picker says when the owner turns to it (its list is then asked for)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.chat.model_picker import ModelPicker


def test_the_picker_is_wanted_when_opened_focused_or_pointed_at(qtbot: QtBot) -> None:
    picker = ModelPicker()
    qtbot.addWidget(picker)
    picker.show_models([], "gpt-4o-mini")
    picker.show()
    qtbot.waitExposed(picker)
    wanted: list[str] = []
    picker.wanted.connect(lambda: wanted.append("wanted"))
    picker.show_models(["gpt-4o-mini", "gpt-4o"], "gpt-4o-mini")  # our own filling: not
    assert wanted == []
    picker.showPopup()
    assert wanted == ["wanted"]
    picker.hidePopup()
    qtbot.mouseMove(picker)
    picker.activateWindow()
    picker.setFocus(Qt.FocusReason.TabFocusReason)
    qtbot.waitUntil(lambda: len(wanted) >= 2, timeout=2000)
