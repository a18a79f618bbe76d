"""The memory editor walked by keyboard: every field is reached with Tab and nothing the owner
did not type ends up in the fact."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QDialogButtonBox
from pytestqt.qtbot import QtBot

from app.memories.memory_editor import MemoryEditor
from timothy.store import Store


def open_editor(qtbot: QtBot, editor: MemoryEditor) -> MemoryEditor:
    qtbot.addWidget(editor)
    editor.show()
    qtbot.waitExposed(editor)
    editor.activateWindow()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is editor.content_edit, timeout=5000)
    return editor


def test_tab_leaves_the_fact_for_the_next_field_and_types_nothing(
    qtbot: QtBot, store: Store
) -> None:
    memory = store.memories.add("Likes green tea", type="preference")
    editor = open_editor(qtbot, MemoryEditor(memory))
    qtbot.keyClick(editor.content_edit, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is editor.type_combo
    qtbot.keyClick(editor.type_combo, Qt.Key.Key_Tab)
    assert QApplication.focusWidget() is editor.entities_edit
    qtbot.keyClick(editor.entities_edit, Qt.Key.Key_Backtab)
    qtbot.keyClick(editor.type_combo, Qt.Key.Key_Backtab)
    assert QApplication.focusWidget() is editor.content_edit
    assert editor.content_edit.toPlainText() == "Likes green tea"
    # Nothing was typed: Save still waits for a change rather than offering a tab as one.
    assert not editor.buttons.button(QDialogButtonBox.StandardButton.Save).isEnabled()


def type_into_focus(qtbot: QtBot, text: str = "", key: Qt.Key | None = None) -> None:
    """What a keyboard does: the keys go to whichever widget has the focus."""
    focused = QApplication.focusWidget()
    assert focused is not None
    if text:
        qtbot.keyClicks(focused, text)
    if key is not None:
        qtbot.keyClick(focused, key)


def test_a_new_memory_is_written_and_saved_by_keyboard_alone(qtbot: QtBot) -> None:
    editor = open_editor(qtbot, MemoryEditor(None))
    type_into_focus(qtbot, "Dentist is Dr. Lopes", Qt.Key.Key_Tab)
    type_into_focus(qtbot, key=Qt.Key.Key_Tab)
    type_into_focus(qtbot, "Dr. Lopes")
    assert QApplication.focusWidget() is editor.entities_edit
    with qtbot.waitSignal(editor.accepted, timeout=5000):
        type_into_focus(qtbot, key=Qt.Key.Key_Return)
    edit = editor.edit()
    assert edit.content == "Dentist is Dr. Lopes"
    assert edit.entities == ("Dr. Lopes",)
