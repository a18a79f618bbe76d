"""The window keeps a daily backup, and a damaged store shows a banner with the way back,
while the file itself is never written to."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from app.mainwindow.main_window import MainWindow
from app.mainwindow.window_state import WindowState
from tests.app.conftest import WindowFactory, settle
from tests.store.damaged import damage, digest, filled_store
from timothy.settings import Settings
from timothy.store import Store
from timothy.store.backup_folder import backup_files, backups_dir


def test_the_window_makes_the_daily_backup(
    qtbot: QtBot, make_window: WindowFactory, store: Store
) -> None:
    store.memories.add("The owner's passport expires in May 2031")
    assert backup_files(backups_dir(store.path)) == []
    window = make_window(consolidation_delay_ms=0)
    qtbot.waitUntil(lambda: len(backup_files(backups_dir(store.path))) == 1, timeout=20_000)
    settle(qtbot, window.workers, window.jobs)
    window.upkeep.backup_if_due()  # again the same day: not due, nothing new
    settle(qtbot, window.workers, window.jobs)
    assert len(backup_files(backups_dir(store.path))) == 1


def test_a_damaged_store_shows_how_to_get_it_back_and_is_never_written(
    qtbot: QtBot, data_dir: Path
) -> None:
    filled_store(data_dir)
    path = data_dir / "timothy.db"
    damage(path)
    before = digest(path)
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
        text = window.banner.text_label.text()
        assert window.banner.isVisible()
        assert str(path) in text and "nothing was written to it" in text
        assert "timothy memories export" in text  # no backup yet: save what can be read
        window.upkeep.backup_if_due()  # a damaged store is never backed up
        settle(qtbot, window.workers, window.network, window.jobs)
        assert backup_files(backups_dir(path)) == []
        window.close()
        for pool in (window.workers, window.network, window.jobs):
            pool.wait(5000)
    assert digest(path) == before
