"""The Memory menu manages memories without the CLI: add one by hand, export every memory to
JSON Lines and import such a file (the CLI's format), each on a worker."""

from __future__ import annotations

import json
import threading
from pathlib import Path

from pytestqt.qtbot import QtBot

from app.mainwindow.main_window import MainWindow
from tests.app.conftest import WindowFactory, settle
from timothy.store import MemorySource, MemoryStatus, MemoryType, Store
from timothy.store.transfer import export_lines


def settle_window(qtbot: QtBot, window: MainWindow) -> None:
    settle(qtbot, window.workers, window.network)


def test_add_a_memory_by_hand(qtbot: QtBot, make_window: WindowFactory, store: Store) -> None:
    window = make_window()
    threads: list[str] = []
    store.memories.listeners.append(lambda _e, _m: threads.append(threading.current_thread().name))
    window.menus.add_memory_action.trigger()
    editor = window.memory_editor
    assert editor is not None and editor.isVisible()
    assert editor.windowTitle() == "Add a memory"
    save = editor.buttons.button(editor.buttons.StandardButton.Save)
    assert not save.isEnabled()  # no text yet
    editor.content_edit.setPlainText("My sister Ana lives in Porto")
    editor.type_combo.setCurrentIndex(editor.type_combo.findData(MemoryType.SEMANTIC.value))
    editor.entities_edit.setText("Ana, Porto")
    assert save.isEnabled()
    save.click()
    qtbot.waitUntil(lambda: len(store.memories.list()) == 1, timeout=5000)
    [memory] = store.memories.list()
    assert memory.content == "My sister Ana lives in Porto"
    assert memory.status is MemoryStatus.ACTIVE and memory.source is MemorySource.MANUAL
    assert memory.type is MemoryType.SEMANTIC and memory.entities == ("Ana", "Porto")
    assert threads and threading.main_thread().name not in threads  # saved off the GUI thread
    settle_window(qtbot, window)
    # The pane shows it, chosen in Browse; the counts include it.
    browser = window.memory_pane.browser
    assert browser is not None
    qtbot.waitUntil(
        lambda: browser.detail.memory is not None and browser.detail.memory.id == memory.id,
        timeout=5000,
    )
    assert window.memory_pane.tabs.currentWidget() is browser
    qtbot.waitUntil(
        lambda: window.status.memory_label.text() == "1 active · 1 in all", timeout=5000
    )
    assert window.banner.isVisible() and "Added" in window.banner.text_label.text()


def test_add_a_memory_refuses_text_that_does_not_show_before_it_closes(
    qtbot: QtBot, make_window: WindowFactory
) -> None:
    """The store refuses text of zero-width and control characters only; the editor says so
    while the owner is still typing, rather than closing and losing the text to a banner."""
    window = make_window()
    window.menus.add_memory_action.trigger()
    editor = window.memory_editor
    assert editor is not None
    save = editor.buttons.button(editor.buttons.StandardButton.Save)
    for text in ("\u200b\u200b", " \x00\x1b\u2060 "):
        editor.content_edit.setPlainText(text)
        assert not save.isEnabled()
        assert "needs some text" in editor.problem_label.text()
    editor.content_edit.setPlainText("Ana\u200b lives in Porto")  # shown text, with one hidden
    assert save.isEnabled() and editor.problem_label.isHidden()
    editor.reject()


def test_export_writes_json_lines_as_the_cli_does(
    qtbot: QtBot, make_window: WindowFactory, store: Store, tmp_path: Path
) -> None:
    store.memories.add("Lives in Porto", entities=["Porto"])
    store.memories.stage("Likes green tea")
    window = make_window()
    window.menus.export_action.trigger()
    dialog = window.file_dialog
    assert dialog is not None and dialog.isVisible()
    assert dialog.selectedFiles()[0].endswith(".jsonl")  # a dated name is proposed
    target = tmp_path / "my memories.jsonl"
    dialog.selectFile(str(target))
    dialog.accept()
    qtbot.waitUntil(lambda: "Exported" in window.banner.text_label.text(), timeout=5000)
    assert window.banner.text_label.text() == f"Exported 2 memories to {target}."
    assert target.read_text(encoding="utf-8").splitlines() == list(export_lines(store))
    assert not list(tmp_path.glob(".export-*")), "no temporary file is left behind"


def test_import_adds_every_line_or_none(
    qtbot: QtBot, make_window: WindowFactory, store: Store, tmp_path: Path
) -> None:
    store.memories.add("Lives in Porto")
    good = tmp_path / "from-another-computer.jsonl"
    good.write_text(
        json.dumps({"content": "Plays the cello", "type": "semantic", "status": "active"})
        + "\n"
        + json.dumps({"content": "Wants to learn Greek", "status": "staged"})
        + "\n",
        encoding="utf-8",
    )
    bad = tmp_path / "broken.jsonl"
    bad.write_text(json.dumps({"content": "Fine line"}) + "\n{not json\n", encoding="utf-8")
    window = make_window()
    browser, queue = window.memory_pane.browser, window.memory_pane.queue
    assert browser is not None and queue is not None

    window.menus.import_action.trigger()
    dialog = window.file_dialog
    assert dialog is not None and dialog.isVisible()
    dialog.selectFile(str(bad))
    dialog.accept()
    qtbot.waitUntil(
        lambda: window.banner.kind == "error" and window.banner.isVisible(), timeout=5000
    )
    assert window.banner.text_label.text().startswith("Could not import broken.jsonl: line 2:")
    assert "nothing was imported" in window.banner.text_label.text()
    assert len(store.memories.list()) == 1

    window.import_memories()
    dialog = window.file_dialog
    assert dialog is not None
    dialog.selectFile(str(good))
    dialog.accept()
    qtbot.waitUntil(lambda: "Imported" in window.banner.text_label.text(), timeout=5000)
    assert (
        window.banner.text_label.text() == "Imported 2 memories from from-another-computer.jsonl."
    )
    assert {m.content for m in store.memories.list()} == {
        "Lives in Porto",
        "Plays the cello",
        "Wants to learn Greek",
    }
    # The store announces no imported memory one by one: the views reload and recount.
    qtbot.waitUntil(lambda: browser.count_label.text() == "2 active · 3 in all", timeout=5000)
    qtbot.waitUntil(
        lambda: [m.content for m in queue.model.memories] == ["Wants to learn Greek"], timeout=5000
    )
    qtbot.waitUntil(
        lambda: window.status.memory_label.text() == "2 active · 3 in all · 1 to confirm",
        timeout=5000,
    )
