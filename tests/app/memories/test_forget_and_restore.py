"""Forget for good and Restore, driven through the real window's memory browser.

Forgetting asks first (a confirmation the test answers by its buttons: it is opened with
`open()`, never a blocking `exec()`), then removes the memory and every copy of its text: after
a real recorded turn that recalled it, neither the database file nor its WAL holds a byte of
it, and the recorded block's line reads "[forgotten]".
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from app.mainwindow.main_window import MainWindow
from app.memories.actions import MemoryActions
from app.memories.forget_confirmation import ForgetConfirmation
from app.memories.memory_browser import MemoryBrowser
from tests.app.conftest import WindowFactory, settle, settle_engine
from tests.app.memories.test_browse_actions import choose, context_menu_on
from tests.fakes.openai_server import OpenAIServer
from timothy.cli.memories import forget_summary
from timothy.retrieval.render import render_item
from timothy.store import Memory, MemoryStatus, Store
from timothy.store.backup_folder import backups_dir
from timothy.store.backups import make_backup
from timothy.store.forget import FORGOTTEN, ErasedCopies, ForgetReport
from timothy.store.records import utc_now

SECRET = "quokkaburrow"  # one word: the text index holds it as a term of its own
# The code is long enough never to turn up by chance in a time stamp's digits (a four-digit
# one did, in a stamp's microseconds).
CODE = "447190263318"
LOCKER = f"The owner's gym locker code is {SECRET} {CODE}"
NO_FACTS = json.dumps({"facts": []})


def file_bytes(path: Path) -> bytes:
    """The database file and its WAL, as they are on disk, lowercased (ASCII)."""
    data = path.read_bytes()
    wal = path.with_name(path.name + "-wal")
    if wal.exists():
        data += wal.read_bytes()
    return data.lower()


def traces(data: bytes, word: str) -> list[bytes]:
    """Where `word` is left in `data`, with some bytes either side (for a failure's message)."""
    found, start = [], data.find(word.encode())
    while start >= 0:
        found.append(data[max(0, start - 60) : start + 60])
        start = data.find(word.encode(), start + 1)
    return found


def browse(
    qtbot: QtBot, window: MainWindow, *memories: Memory
) -> tuple[MemoryBrowser, MemoryActions]:
    pane = window.memory_pane
    browser, actions = pane.browser, pane.memory_actions
    assert browser is not None and actions is not None
    pane.tabs.setCurrentWidget(browser)
    qtbot.waitUntil(lambda: all(browser.model.row_of(m.id) >= 0 for m in memories), timeout=5000)
    return browser, actions


def confirmation(qtbot: QtBot, browser: MemoryBrowser) -> ForgetConfirmation:
    qtbot.waitUntil(
        lambda: browser.forget_confirmation is not None and browser.forget_confirmation.isVisible(),
        timeout=5000,
    )
    dialog = browser.forget_confirmation
    assert dialog is not None
    return dialog


def test_forget_for_good_after_a_recalled_turn_leaves_no_trace_in_the_file(
    qtbot: QtBot, make_window: WindowFactory, store: Store, openai_server: OpenAIServer
) -> None:
    locker = store.memories.add(LOCKER, entities=["Quokkaburrow Gym"])
    other = store.memories.add("The owner's gym is open until 22:00")
    window = make_window(server=openai_server)
    # A real turn that recalls the memory: its block is recorded with the reply.
    openai_server.reply("It is in your memories.")
    openai_server.reply("Gym locker")  # the title
    openai_server.reply(NO_FACTS)  # extraction
    window.chat.composer.input.setFocus()
    window.chat.composer.set_text("What is my gym locker code?")
    qtbot.keyClick(window.chat.composer.input, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not window.chat.streaming, timeout=10_000)
    settle_engine(qtbot, window)
    session_id = window.chat.conversation_id
    assert session_id is not None
    [recorded] = [m for m in store.sessions.messages(session_id) if m.memory_block]
    assert recorded.memory_block is not None and LOCKER in recorded.memory_block
    assert SECRET.encode() in file_bytes(store.path)
    backup = make_backup(store, now=utc_now())  # an older backup, as the owner's would be

    browser, actions = browse(qtbot, window, locker, other)
    choose(qtbot, browser, locker)
    qtbot.keyClick(browser.view, Qt.Key.Key_Delete)
    dialog = confirmation(qtbot, browser)
    # It says exactly what goes, that it is for good, and where older copies may remain.
    shown = dialog.text_shown()
    assert LOCKER in shown
    assert "memory blocks recorded with past turns" in shown and FORGOTTEN in shown
    assert "cannot be undone" in shown
    assert f"1 older backup (in {backups_dir(store.path)}) still holds this text" in shown
    assert dialog.chain_button is None  # one version: nothing more to offer
    assert dialog.this_button.text() == "Forget this memory"
    assert store.memories.get(locker.id).content == LOCKER  # asking changed nothing
    # The owner keeps the backup as it is (the box is ticked unless they untick it).
    assert dialog.purge_box is not None and dialog.purge_box.isChecked()
    assert dialog.purge_box.text() == "Also remove it from the 1 backup that holds it"
    dialog.purge_box.setChecked(False)

    with qtbot.waitSignal(actions.memories_forgotten, timeout=10_000) as forgotten:
        dialog.this_button.click()
    report = forgotten.args[0]
    assert report.forgotten == (locker.id,)
    assert report.erased.turns_redacted == 1
    assert report.compacted
    qtbot.waitUntil(lambda: browser.model.row_of(locker.id) < 0, timeout=5000)
    assert browser.model.row_of(other.id) >= 0
    assert window.banner.isVisible() and window.banner.text_label.text() == forget_summary(report)
    assert "Older backups may still hold this text" in window.banner.text_label.text()
    settle(qtbot, window.workers, window.network)

    assert store.memories.get_many([locker.id]) == {}
    kept = store.sessions.message(recorded.id)
    assert kept.memory_block is not None and LOCKER not in kept.memory_block
    assert kept.memory_block == recorded.memory_block.replace(
        render_item(locker.type, LOCKER), render_item(locker.type, FORGOTTEN)
    )
    assert kept.recall is not None and FORGOTTEN in kept.recall.block
    # What the window shows is read again: the reply's record and Last recall are redacted.
    transcript = window.chat.transcript

    def reply_redacted() -> bool:
        replies = [w for w in transcript.messages if w.role == "assistant"]
        recall = replies[-1].recall if replies else None
        return recall is not None and recall.block == kept.memory_block

    qtbot.waitUntil(reply_redacted, timeout=5000)
    view = window.memory_pane.recall_view
    qtbot.waitUntil(lambda: view.block_view.toPlainText() == kept.memory_block, timeout=5000)
    assert LOCKER not in view.items_view.toPlainText()
    after = file_bytes(store.path)
    assert traces(after, SECRET) == []
    assert traces(after, CODE) == []
    # What the confirmation warned of is true: the older backup still holds it.
    assert backup.parent == backups_dir(store.path)
    assert SECRET.encode() in backup.read_bytes().lower()


def test_forget_for_good_with_the_box_ticked_removes_it_from_every_backup(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    before_it = make_backup(store, now=utc_now() - timedelta(days=3))  # held no locker yet
    first = store.memories.add(LOCKER, entities=["Quokkaburrow Gym"])
    older = make_backup(store, now=utc_now() - timedelta(days=2))
    locker = store.memories.supersede(first.id, f"{LOCKER} (new lock)")
    newer = make_backup(store, now=utc_now() - timedelta(days=1))
    other = store.memories.add("The owner's gym is open until 22:00")
    folder = backups_dir(store.path)
    untouched = before_it.read_bytes()
    window = make_window()
    browser, actions = browse(qtbot, window, locker, other)
    choose(qtbot, browser, locker)
    qtbot.keyClick(browser.view, Qt.Key.Key_Delete)
    dialog = confirmation(qtbot, browser)
    assert (
        "2 older backups" in dialog.text_shown() and "still hold this text" in dialog.text_shown()
    )
    assert dialog.purge_box is not None and dialog.purge_box.isChecked()
    assert dialog.purge_box.text() == "Also remove it from the 2 backups that hold it"
    assert dialog.chain_button is not None

    with qtbot.waitSignal(actions.backups_purged, timeout=30_000) as purged:
        dialog.chain_button.click()
    report = purged.args[0]
    assert set(report.purged) == {older, newer} and report.failed == ()
    text = window.banner.text_label.text()
    assert text.startswith("Forgot 2 memories for good (1 version chain).")
    assert "Removed them from 2 backups (1 other backup did not hold it)." in text
    assert "Older backups may still hold" not in text
    for path in sorted(folder.iterdir()):  # every file: backups, logs, leftovers
        assert traces(path.read_bytes().lower(), SECRET) == [], path.name
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        p.name for p in (before_it, older, newer)
    )
    assert before_it.read_bytes() == untouched
    assert traces(file_bytes(store.path), SECRET) == []
    assert store.memories.get(other.id).content == "The owner's gym is open until 22:00"


def test_forgetting_the_whole_version_chain_from_the_context_menu(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    first = store.memories.add("Prefers aisle seats")
    second = store.memories.supersede(first.id, "Prefers window seats on long flights")
    third = store.memories.supersede(second.id, "Prefers window seats, except at night")
    unrelated = store.memories.add("Lives in Porto")
    window = make_window()
    browser, actions = browse(qtbot, window, first, second, third, unrelated)

    offered = context_menu_on(qtbot, browser, third)
    assert offered["forget"].isEnabled() and offered["forget"].text() == "Forget for good…"
    offered["forget"].trigger()
    dialog = confirmation(qtbot, browser)
    shown = dialog.text_shown()
    for version in (first, second, third):
        assert f"“{version.content}”" in shown
    assert "3 versions in all" in shown
    assert dialog.this_button.text() == "Forget this version"
    assert dialog.chain_button is not None
    assert dialog.chain_button.text() == "Forget all 3 versions"

    with qtbot.waitSignal(actions.memories_forgotten, timeout=10_000) as forgotten:
        dialog.chain_button.click()
    report = forgotten.args[0]
    assert set(report.forgotten) == {first.id, second.id, third.id} and report.chains == 1
    qtbot.waitUntil(
        lambda: all(browser.model.row_of(m.id) < 0 for m in (first, second, third)),
        timeout=5000,
    )
    assert store.memories.get_many([first.id, second.id, third.id]) == {}
    assert store.memories.get(unrelated.id).status is MemoryStatus.ACTIVE
    qtbot.waitUntil(lambda: browser.count_label.text() == "1 active · 1 in all", timeout=5000)
    assert "1 version chain" in window.banner.text_label.text()


def test_forgetting_one_version_keeps_the_others_and_cancel_keeps_everything(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    first = store.memories.add("Prefers aisle seats")
    second = store.memories.supersede(first.id, "Prefers window seats")
    window = make_window()
    browser, actions = browse(qtbot, window, first, second)

    choose(qtbot, browser, second)
    qtbot.keyClick(browser.view, Qt.Key.Key_Delete)
    dialog = confirmation(qtbot, browser)
    dialog.cancel_button.click()
    qtbot.waitUntil(lambda: browser.forget_confirmation is None, timeout=5000)
    settle(qtbot, window.workers)
    assert set(store.memories.get_many([first.id, second.id])) == {first.id, second.id}

    # The offscreen platform does not hand activation back from a closed dialog; a desktop does.
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=2000)
    choose(qtbot, browser, first)
    qtbot.keyClick(browser.view, Qt.Key.Key_Delete)
    dialog = confirmation(qtbot, browser)
    with qtbot.waitSignal(actions.memories_forgotten, timeout=10_000):
        dialog.this_button.click()
    qtbot.waitUntil(lambda: browser.model.row_of(first.id) < 0, timeout=5000)
    assert store.memories.get_many([first.id]) == {}
    assert [m.id for m in store.memories.chain(second.id)] == [second.id]


def test_enter_and_escape_on_the_question_never_forget(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    kept = store.memories.add("Prefers aisle seats")
    window = make_window()
    browser, _actions = browse(qtbot, window, kept)
    for key in (Qt.Key.Key_Return, Qt.Key.Key_Escape):
        window.activateWindow()
        qtbot.waitUntil(window.isActiveWindow, timeout=2000)
        choose(qtbot, browser, kept)
        qtbot.keyClick(browser.view, Qt.Key.Key_Delete)
        dialog = confirmation(qtbot, browser)
        assert dialog.cancel_button.hasFocus() or not dialog.isActiveWindow()
        assert dialog.cancel_button.isDefault() and not dialog.this_button.autoDefault()
        qtbot.keyClick(dialog, key)
        qtbot.waitUntil(lambda: browser.forget_confirmation is None, timeout=5000)
        settle(qtbot, window.workers)
        assert set(store.memories.get_many([kept.id])) == {kept.id}


def test_restore_a_rejected_and_an_archived_memory_from_the_browser(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    refused = store.memories.stage("Likes green tea")
    store.memories.reject(refused.id)
    old = store.memories.add("Works at Acme")
    store.memories.archive(old.id)
    fact = store.memories.add("Lives in Porto")
    window = make_window()
    browser, actions = browse(qtbot, window, refused, old, fact)
    queue = window.memory_pane.queue
    assert queue is not None

    # The detail's button, for the rejected one: back to staged, so back in the queue.
    choose(qtbot, browser, refused)
    restore = browser.detail.buttons["restore"]
    qtbot.waitUntil(restore.isVisible, timeout=5000)
    with qtbot.waitSignal(actions.memory_restored, timeout=5000) as restored:
        restore.click()
    assert restored.args[0].status is MemoryStatus.STAGED
    assert store.memories.get(refused.id).status is MemoryStatus.STAGED
    qtbot.waitUntil(lambda: refused.id in [m.id for m in queue.model.memories], timeout=5000)
    qtbot.waitUntil(lambda: not restore.isVisible(), timeout=5000)  # staged: nothing to restore

    # The context menu, for the archived one: back to active.
    offered = context_menu_on(qtbot, browser, old)
    assert offered["restore"].isEnabled()
    with qtbot.waitSignal(actions.memory_restored, timeout=5000):
        offered["restore"].trigger()
    assert store.memories.get(old.id).status is MemoryStatus.ACTIVE

    # Offered only for a rejected or archived memory.
    assert browser.context_menu is not None
    browser.context_menu.close()
    offered = context_menu_on(qtbot, browser, fact)
    assert not offered["restore"].isEnabled()
    qtbot.waitUntil(
        lambda: browser.detail.memory is not None and browser.detail.memory.id == fact.id,
        timeout=5000,
    )
    assert not browser.detail.buttons["restore"].isVisible()


def test_the_details_button_forgets_an_older_version_after_asking(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    first = store.memories.add("Prefers aisle seats")
    second = store.memories.supersede(first.id, "Prefers window seats")
    window = make_window()
    browser, actions = browse(qtbot, window, first, second)
    choose(qtbot, browser, first)  # superseded: nothing to do with it but forget it
    button = browser.detail.buttons["forget"]
    qtbot.waitUntil(button.isVisible, timeout=5000)
    assert not browser.detail.buttons["restore"].isVisible()
    button.click()
    dialog = confirmation(qtbot, browser)
    assert dialog.chain_button is not None and dialog.chain_button.text() == "Forget all 2 versions"
    with qtbot.waitSignal(actions.memories_forgotten, timeout=10_000) as forgotten:
        dialog.this_button.click()
    assert forgotten.args[0].forgotten == (first.id,)
    qtbot.waitUntil(lambda: browser.model.row_of(first.id) < 0, timeout=5000)
    assert store.memories.get(second.id).supersedes is None


def test_a_file_that_could_not_be_rebuilt_is_said_plainly(
    qtbot: QtBot, make_window: WindowFactory
) -> None:
    window = make_window()
    actions = window.memory_pane.memory_actions
    assert actions is not None
    report = ForgetReport(
        forgotten=("01M8RPWX2NZB3H436MDVQYEC9Z",),
        chains=0,
        erased=ErasedCopies((), 0, 0, (), 0),
        compacted=False,
    )
    actions.memories_forgotten.emit(report)
    text = window.banner.text_label.text()
    assert text.startswith(forget_summary(report))
    assert "could not be rebuilt yet" in text and window.banner.kind == "error"
