"""Settings > Backups: the backups in the data folder's `backups/`, newest first, with when
(the owner's local time), why, how big, and how many memories each holds; "Back up now",
"Open backups folder", and "Restore…" of the selected one.

Listing opens every backup to count its memories, so it runs on a worker. The page does not
back up or restore itself: it asks (`backup_requested`, `restore_requested`) and the window,
which owns the store, does it and tells the page (`reload`, `set_busy`).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.jobs.workers import Failure, Workers
from app.look import theme
from timothy import paths
from timothy.store.backup_folder import BackupReason, backups_dir
from timothy.store.backups import KEEP_DAILY, KEEP_WEEKLY, Backup, list_backups

KIND_LABELS = {
    BackupReason.DAILY: "Daily",
    BackupReason.MIGRATION: "Before an upgrade",
    BackupReason.MERGE: "Before a merge",
    BackupReason.MANUAL: "Made by hand",
}
WEEKLY_LABEL = "Weekly"
MADE, KIND, SIZE, MEMORIES = range(4)


def size_text(size: int) -> str:
    """Bytes as the owner reads them: "812 KB", "1.4 MB"."""
    if size < 1000:
        return f"{size} bytes"
    value = float(size)
    unit = "bytes"
    for unit in ("KB", "MB", "GB"):  # noqa: B007 (the unit it stopped at is the one shown)
        value /= 1000
        if value < 1000:
            break
    return f"{value:.0f} {unit}" if value >= 100 else f"{value:.1f} {unit}"


def made_text(backup: Backup) -> str:
    """When it was made, in the owner's local time zone, to the minute."""
    return backup.made_at.astimezone().strftime("%a %d %b %Y, %H:%M")


def memories_text(backup: Backup) -> str:
    if backup.memories is None or backup.active is None:
        return "cannot be read"
    return f"{backup.active:,} active · {backup.memories:,} in all"


def kind_labels(found: list[Backup]) -> dict[Path, str]:
    """The kind each backup is to the owner. A daily backup kept past the 7 latest days is
    the one kept for its week, so it reads "Weekly"."""
    labels: dict[Path, str] = {}
    days: list[object] = []
    for backup in found:  # newest first
        label = KIND_LABELS[backup.reason]
        if backup.reason in (BackupReason.DAILY, BackupReason.MIGRATION, BackupReason.MERGE):
            day = backup.made_at.date()
            if day not in days:
                days.append(day)
            if backup.reason is BackupReason.DAILY and len(days) > KEEP_DAILY:
                label = WEEKLY_LABEL
        labels[backup.path] = label
    return labels


class BackupsPage(QWidget):
    backup_requested = Signal()  # "Back up now"
    # (the Backup chosen, its kind as listed): the window asks before it restores
    restore_requested = Signal(object, str)
    listed = Signal(int)  # how many backups the list shows, after each load

    def __init__(
        self,
        data: Path,
        workers: Workers,
        *,
        can_restore: bool = True,
        server: str | None = None,
        parent: QWidget | None = None,
    ) -> None:
        """`data`: the data folder; `can_restore`: False when the store is not open (the
        list still shows, "Back up now" and "Restore…" are off); `server`: where the store
        is when it is on a server (then its backups are the server's job: the page says so,
        lists nothing and offers nothing)."""
        super().__init__(parent)
        self.data = data
        self.folder = backups_dir(paths.database_path(data))
        self.workers = workers
        self.server = server
        self.can_restore = can_restore and server is None
        self.backups: list[Backup] = []
        self.kinds: dict[Path, str] = {}
        self._busy: str | None = None
        self._note: str | None = None  # what the last backup or restore did, or why not
        self._loads = 0  # bumped by each load: an older answer is dropped
        layout = QVBoxLayout(self)
        self.intro = intro = QLabel(
            "Timothy copies your memory database once a day, before an upgrade changes it and "
            "before a tidy-up merges memories. Each copy is checked before it counts. It keeps "
            f"the latest {KEEP_DAILY} daily and {KEEP_WEEKLY} weekly copies; copies made by "
            "hand are kept until you delete them.",
            self,
        )
        intro.setWordWrap(True)
        intro.setProperty("muted", True)
        layout.addWidget(intro)

        self.tree = QTreeWidget(self)
        self.tree.setObjectName("BackupsList")
        self.tree.setColumnCount(4)
        self.tree.setHeaderLabels(["Made", "Kind", "Size", "Memories"])
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.tree.header()
        header.setStretchLastSection(False)
        for column in (SIZE, MEMORIES):
            self.tree.headerItem().setTextAlignment(
                column, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
            )
        header.setSectionResizeMode(MADE, QHeaderView.ResizeMode.Stretch)
        for column in (KIND, SIZE, MEMORIES):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.itemSelectionChanged.connect(self._update_buttons)
        self.tree.itemDoubleClicked.connect(lambda _item, _column: self.request_restore())
        layout.addWidget(self.tree, 1)

        self.state_label = QLabel(self)
        self.state_label.setWordWrap(True)
        self.state_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.state_label)

        buttons = QHBoxLayout()
        self.backup_button = QPushButton("Back up now", self)
        self.backup_button.clicked.connect(self.backup_requested)
        buttons.addWidget(self.backup_button)
        self.open_button = QPushButton("Open backups folder", self)
        self.open_button.clicked.connect(self.open_folder)
        buttons.addWidget(self.open_button)
        buttons.addStretch(1)
        self.restore_button = QPushButton("Restore…", self)
        self.restore_button.setToolTip(
            "Put the selected backup in place of your memories (you are asked first)"
        )
        self.restore_button.clicked.connect(self.request_restore)
        buttons.addWidget(self.restore_button)
        layout.addLayout(buttons)
        self._update_buttons()
        if server is not None:
            intro.setText(
                f"Your memory is on a server ({server}). Its backups are the server's job: "
                "its administrator's pg_dump, or a copy to a file with `timothy store copy "
                "--to FILE` in a terminal. Timothy keeps no backups of a server store, so "
                "there is nothing to back up or restore here."
            )
            for widget in (self.tree, self.backup_button, self.open_button, self.restore_button):
                widget.hide()
            layout.addStretch(1)
            self._show_state()
            return
        self.reload()

    # -- the list ------------------------------------------------------------------------

    def reload(self) -> None:
        """List the backups again (on a worker: each one is opened to count its memories)."""
        if self.server is not None:
            return  # a server's backups are not Timothy's to list
        self._loads += 1
        load = self._loads
        data = self.data
        if not self.backups:
            self.state_label.setText("Reading the backups…")
        self.workers.run(
            self,
            lambda: list_backups(data),
            "reading the backups",
            on_success=lambda found: self._listed(load, found),
            on_failure=lambda failure: self._failed(load, failure),
        )

    def _listed(self, load: int, found: list[Backup]) -> None:
        if load != self._loads:
            return
        selected = self.selected()
        self.backups = found
        labels = self.kinds = kind_labels(found)
        self.tree.clear()
        unreadable = theme.colours().danger
        for backup in found:
            item = QTreeWidgetItem(
                [made_text(backup), labels[backup.path], size_text(backup.size), ""]
            )
            item.setText(MEMORIES, memories_text(backup))
            item.setData(MADE, Qt.ItemDataRole.UserRole, str(backup.path))
            item.setToolTip(MADE, str(backup.path))
            for column in (SIZE, MEMORIES):
                item.setTextAlignment(
                    column, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
                )
            if backup.memories is None:
                item.setForeground(MEMORIES, unreadable)
            self.tree.addTopLevelItem(item)
            if selected is not None and backup.path == selected.path:
                item.setSelected(True)
        first = self.tree.topLevelItem(0)
        if first is not None and not self.tree.selectedItems():
            first.setSelected(True)
        self._show_state()
        self._update_buttons()
        self.listed.emit(len(found))

    def _failed(self, load: int, failure: Failure) -> None:
        if load == self._loads:
            self.state_label.setText(f"The backups could not be read: {failure.message}")

    def _show_state(self) -> None:
        note = f"{self._note} " if self._note else ""
        if self.server is not None:
            self.state_label.setText(note.strip())  # the introduction says the rest
        elif self._busy is not None:
            self.state_label.setText(self._busy)
        elif not self.can_restore:
            self.state_label.setText(
                "Your memory store is not open, so a backup cannot be made or restored from "
                "here. Quit Timothy and run `timothy restore FILE` in a terminal, with one of "
                f"the files in {self.folder}."
            )
        elif not self.backups:
            self.state_label.setText(
                f"{note}No backups yet. They are kept in {self.folder}; the first is made when "
                "Timothy starts, or now with “Back up now”."
            )
        else:
            count = len(self.backups)
            self.state_label.setText(
                f"{note}{count} backup{'' if count == 1 else 's'} in {self.folder}."
            )

    def selected(self) -> Backup | None:
        items = self.tree.selectedItems()
        if not items:
            return None
        path = str(items[0].data(MADE, Qt.ItemDataRole.UserRole))
        return next((b for b in self.backups if str(b.path) == path), None)

    def select(self, path: Path) -> None:
        for row in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(row)
            if item is not None:
                item.setSelected(str(item.data(MADE, Qt.ItemDataRole.UserRole)) == str(path))

    # -- actions -------------------------------------------------------------------------

    def set_busy(self, text: str | None) -> None:
        """While a backup or a restore runs: say so, and start no other."""
        self._busy = text
        if text is not None:
            self._note = None
        self._show_state()
        self._update_buttons()

    def show_note(self, text: str) -> None:
        """What the last backup or restore did (or why it did not), above the count."""
        self._note = text
        self._show_state()

    def _update_buttons(self) -> None:
        idle = self._busy is None
        self.backup_button.setEnabled(idle and self.can_restore)
        chosen = self.selected()
        self.restore_button.setEnabled(
            idle and self.can_restore and chosen is not None and chosen.memories is not None
        )

    def request_restore(self) -> None:
        chosen = self.selected()
        if chosen is not None and self.restore_button.isEnabled():
            self.restore_requested.emit(chosen, self.kinds.get(chosen.path, ""))

    def open_folder(self) -> None:
        target = self.folder if self.folder.is_dir() else self.data
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(target)))
