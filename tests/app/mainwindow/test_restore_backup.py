"""Settings > Backups through the real window: the list (when, kind, size, counts read on a
worker), "Back up now", and Restore after a confirmation that says what happens; the window
closes its store, puts the backup in place, opens it again and every view shows it. The
damage banner's "Restore latest good backup" does the same with the newest sound backup."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import apsw
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument, QTextOption
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from app.mainwindow.main_window import RESTORING, MainWindow
from app.mainwindow.window_state import WindowState
from app.settings.backups_page import BackupsPage
from app.settings.restore_confirmation import RestoreConfirmation
from tests.app.conftest import WindowFactory, settle
from tests.store.damaged import damage, digest, filled_store
from timothy.memory.forget import forget
from timothy.settings import Settings
from timothy.store import MemoryStatus, Store
from timothy.store.backup_folder import BackupReason, backup_files, backups_dir
from timothy.store.backups import Backup, make_backup

BEFORE = datetime(2026, 11, 28, 21, 30, tzinfo=UTC)


def open_backups(qtbot: QtBot, window: MainWindow, rows: int) -> BackupsPage:
    dialog = window.open_settings("backups")
    page = dialog.backups_page
    assert dialog.pages.currentWidget() is page
    qtbot.waitUntil(lambda: page.tree.topLevelItemCount() == rows, timeout=10_000)
    return page


def test_the_page_lists_each_backup_with_its_time_kind_size_and_counts(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    first = store.memories.add("The owner's passport expires in May 2031")
    store.memories.add("The owner's dentist is Dr. Ana Lopes")
    store.memories.archive(first.id)
    daily = make_backup(store, now=BEFORE, reason=BackupReason.DAILY)
    store.memories.add("The owner's bike is blue")
    by_hand = make_backup(store, now=BEFORE + timedelta(hours=2))
    window = make_window()
    page = open_backups(qtbot, window, 2)

    newest, older = (page.tree.topLevelItem(row) for row in range(2))
    assert newest is not None and older is not None
    local = (BEFORE + timedelta(hours=2)).astimezone()
    assert newest.text(0) == local.strftime("%a %d %b %Y, %H:%M")
    assert newest.text(1) == "Made by hand" and older.text(1) == "Daily"
    assert newest.text(3) == "2 active · 3 in all"
    assert older.text(3) == "1 active · 2 in all"
    assert newest.text(2).endswith(("KB", "MB"))
    assert [b.path for b in page.backups] == [by_hand, daily]
    assert "2 backups in" in page.state_label.text()
    assert page.restore_button.isEnabled()  # the newest is selected

    page.backup_button.click()
    qtbot.waitUntil(lambda: page.tree.topLevelItemCount() == 3, timeout=10_000)
    assert "integrity checked" in page.state_label.text()
    assert len(backup_files(backups_dir(store.path))) == 3


def test_restore_after_the_confirmation_brings_back_what_the_backup_held(
    qtbot: QtBot, make_window: WindowFactory, store: Store, data_dir: Path
) -> None:
    kept = store.memories.add("The owner's passport expires in May 2031")
    session = store.sessions.create(title="Planning the Porto trip")
    store.sessions.add_message(session.id, "user", "Where should we stay in Porto?")
    backup = make_backup(store, now=BEFORE, reason=BackupReason.DAILY)
    backup_digest = digest(backup)
    forget(store, [kept.id])  # gone for good from the store, still in the backup
    later = store.memories.add("The owner's bike is blue")
    window = make_window()
    browser = window.memory_pane.browser
    assert browser is not None
    qtbot.waitUntil(lambda: [m.id for m in browser.model.memories] == [later.id], timeout=5000)
    assert window.sidebar.model.conversations()[0].title == "Planning the Porto trip"

    page = open_backups(qtbot, window, 1)
    page.restore_button.click()
    restore = window.store_restore
    assert restore is not None
    question = restore.confirmation
    assert question is not None and question.isVisible()
    shown = " ".join(question.text_shown().split())
    aside = next(
        part for part in question.text_shown().splitlines() if "before-restore" in part
    ).strip()
    assert aside.startswith(str(data_dir / "timothy.db.before-restore-"))
    assert "1 active memory (1 in all)" in shown
    assert "not deleted" in shown and "kept aside" in shown
    assert "closes its memory store, puts the backup in its place and opens it again" in shown
    assert question.defaultButton() is question.cancel_button

    question.restore_button.click()
    assert window.restoring  # refused meanwhile: no turn, no memory change
    assert not window.chat.composer.input.isEnabled()
    assert window.chat.composer.input.placeholderText() == RESTORING
    assert not window.memory_pane.isEnabled()
    window.chat.send("Where should we stay?")
    assert not window.chat.streaming and window.chat.transcript.is_empty()
    assert window.add_memory() is None and window.memory_editor is None
    assert window.banner.text_label.text() == RESTORING
    qtbot.waitUntil(lambda: not window.restoring, timeout=20_000)
    assert "Restored 1 memory from the backup of" in window.banner.text_label.text()
    assert aside in window.banner.text_label.text()

    qtbot.waitUntil(lambda: [m.id for m in browser.model.memories] == [kept.id], timeout=5000)
    qtbot.waitUntil(
        lambda: window.status.memory_label.text() == "1 active · 1 in all", timeout=5000
    )
    assert window.memory_pane.isEnabled() and window.chat.paused is None
    assert store.memories.get(kept.id).status is MemoryStatus.ACTIVE
    # The file it replaced is kept whole, with what was written after the backup.
    old = apsw.Connection(aside, flags=apsw.SQLITE_OPEN_READONLY)
    assert old.execute("SELECT id FROM memories").fetchall() == [(later.id,)]
    old.close()
    assert digest(backup) == backup_digest  # only read
    settle(qtbot, window.workers, window.network)
    store.memories.add("written after the restore")  # the store writes again


def test_a_restore_lets_a_read_under_way_finish_before_it_swaps_the_file(
    qtbot: QtBot, make_window: WindowFactory, store: Store, data_dir: Path
) -> None:
    """The window's first reads (or a tab's first page) may still be on a store worker when
    the owner confirms a restore, as with the damage banner's offer at start: the swap
    waits for them instead of refusing with "still in use"."""
    kept = store.memories.add("The owner's passport expires in May 2031")
    make_backup(store, now=BEFORE, reason=BackupReason.DAILY)
    later = store.memories.add("The owner's bike is blue")
    window = make_window()
    settle(qtbot, window.workers, window.network)
    page = open_backups(qtbot, window, 1)
    holding, release = threading.Event(), threading.Event()

    def held(_: object) -> int:
        holding.set()
        release.wait(30)
        return 1

    def read_slowly() -> None:
        # A statement still running (here in a function it calls) keeps its connection in
        # use, so closing it for the swap fails and the file stays open.
        with store.db.read() as conn:
            conn.create_scalar_function("held", held, 1)
            conn.execute("SELECT held(id) FROM memories LIMIT 1").fetchall()

    window.workers.run(window, read_slowly, "reading slowly")
    assert holding.wait(10)
    page.restore_button.click()
    assert window.store_restore is not None
    question = window.store_restore.confirmation
    assert question is not None
    question.restore_button.click()
    restore = window.store_restore
    assert restore is not None and restore.running and window.restoring
    assert not restore.pool.busy  # the swap waits for the read (it would refuse meanwhile)
    release.set()
    qtbot.waitUntil(lambda: not window.restoring, timeout=20_000)
    assert "Restored 1 memory from the backup of" in window.banner.text_label.text()
    assert store.memories.get(kept.id).status is MemoryStatus.ACTIVE
    assert store.memories.count() == 1 and later.id != kept.id
    settle(qtbot, window.workers, window.network)


def test_a_damaged_backup_is_refused_and_the_memories_stay(
    qtbot: QtBot, make_window: WindowFactory, data_dir: Path
) -> None:
    filled_store(data_dir)
    with Store.open(data_dir) as store:
        backup = make_backup(store, now=BEFORE, reason=BackupReason.DAILY)
    damage(backup, table="memories")  # its memories still counted, for the list of backups
    with Store.open(data_dir) as store:
        store.memories.add("written after the backup")
        window = MainWindow(
            store,
            settings=Settings(),
            window_state=WindowState(),
            probe_local_servers=lambda: [],
            consolidation_delay_ms=None,
        )
        qtbot.addWidget(window)
        window.show()
        page = open_backups(qtbot, window, 1)
        page.restore_button.click()
        assert window.store_restore is not None
        question = window.store_restore.confirmation
        assert question is not None
        question.restore_button.click()
        qtbot.waitUntil(lambda: not window.restoring, timeout=30_000)
        assert "is damaged" in window.banner.text_label.text()
        assert "nothing was restored" in window.banner.text_label.text()
        assert "nothing was restored" in page.state_label.text()
        assert store.memories.count() == 3004
        assert not list(data_dir.glob("*before-restore*"))
        window.close()
        for pool in (window.workers, window.network, window.jobs):
            pool.wait(5000)


def test_the_damage_banner_restores_the_newest_good_backup(qtbot: QtBot, data_dir: Path) -> None:
    ids = filled_store(data_dir)
    with Store.open(data_dir) as store:
        good = make_backup(store, now=BEFORE, reason=BackupReason.DAILY)
        bad = make_backup(store, now=BEFORE + timedelta(days=1), reason=BackupReason.DAILY)
    damage(bad)  # the newest backup is damaged too: the one before it is restored
    path = data_dir / "timothy.db"
    damage(path)
    damaged = digest(path)
    with Store.open(data_dir) as store:
        window = MainWindow(
            store,
            settings=Settings(),
            window_state=WindowState(),
            probe_local_servers=lambda: [],
            consolidation_delay_ms=None,
        )
        qtbot.addWidget(window)
        window.show()
        qtbot.waitUntil(lambda: "is damaged" in window.banner.text_label.text(), timeout=20_000)
        assert window.banner.action_button.text() == "Restore latest good backup"
        window.banner.action_button.click()
        restore = window.store_restore
        assert restore is not None
        qtbot.waitUntil(lambda: restore.confirmation is not None, timeout=20_000)
        question = restore.confirmation
        assert question is not None and question.backup.path == good
        question.restore_button.click()
        qtbot.waitUntil(lambda: not window.restoring, timeout=30_000)
        assert "Restored 3,003 memories" in window.banner.text_label.text()
        assert not store.damaged
        assert all(store.memories.get(i) for i in ids)
        store.memories.add("written after the restore")
        window.close()
        for pool in (window.workers, window.network, window.jobs):
            pool.wait(5000)
    kept = list(data_dir.glob("timothy.db.before-restore-*[0-9Z]"))
    assert len(kept) == 1 and digest(kept[0]) == damaged  # moved aside, never written


def test_with_no_sound_backup_the_banner_says_so_and_points_to_backups(
    qtbot: QtBot, data_dir: Path
) -> None:
    filled_store(data_dir)
    with Store.open(data_dir) as store:
        only = make_backup(store, now=BEFORE, reason=BackupReason.DAILY)
    damage(only)
    damage(data_dir / "timothy.db")
    with Store.open(data_dir) as store:
        window = MainWindow(
            store,
            settings=Settings(),
            window_state=WindowState(),
            probe_local_servers=lambda: [],
            consolidation_delay_ms=None,
        )
        qtbot.addWidget(window)
        window.show()
        qtbot.waitUntil(lambda: "is damaged" in window.banner.text_label.text(), timeout=20_000)
        window.banner.action_button.click()
        qtbot.waitUntil(
            lambda: (
                "passes its check" in window.banner.text_label.text()
                and window.banner.kind == "error"
            ),
            timeout=20_000,
        )
        text = window.banner.text_label.text()
        assert "none can be restored" in text and "Settings ▸ Backups" in text
        assert "timothy doctor" in text
        window.banner.action_button.click()
        assert window.settings_dialog is not None
        assert window.settings_dialog.pages.currentWidget() is window.settings_dialog.backups_page
        assert window.store_restore is not None and window.store_restore.confirmation is None
        window.close()
        for pool in (window.workers, window.network, window.jobs):
            pool.wait(5000)


def test_a_long_kept_aside_path_wraps_whole_inside_the_question(qtbot: QtBot) -> None:
    """A data folder whose names have no place to break (no space, no hyphen) is shown
    whole on a few lines, never run past the dialog's edge, and read back unchanged."""
    folder = "Timothy_Data_Folder_On_The_Shared_Drive" * 2
    aside = Path("/home/owner/Library") / folder / "timothy.db.before_restore_20261203T132320Z"
    backup = Backup(Path("backups") / "timothy.db", BEFORE, BackupReason.MANUAL, 4096, 2, 1)
    question = RestoreConfirmation(backup, "Sat 28 Nov 2026, 21:30", "daily", aside)
    qtbot.addWidget(question)
    question.open()
    qtbot.waitExposed(question)
    label = question.findChild(QLabel, "qt_msgbox_label")
    assert label is not None
    laid_out = QTextDocument()  # as the label lays it out: lines break between words only
    laid_out.setDefaultTextOption(QTextOption(Qt.AlignmentFlag.AlignLeft))
    laid_out.setDefaultFont(label.font())
    laid_out.setDocumentMargin(0)
    laid_out.setHtml(label.text())
    laid_out.setTextWidth(label.contentsRect().width())
    assert laid_out.idealWidth() <= label.contentsRect().width()
    assert question.width() <= 700
    assert str(aside) in question.text_shown().replace("\n", "")
