"""The question before a backup replaces the owner's memories, saying exactly what happens:
which backup (when, what kind, how many memories), that what was written since is not in
it, where the current file is kept aside (never deleted), and that Timothy closes its store,
puts the backup in place and opens it again.

Opened with `open()` (window-modal, never a nested event loop); `confirmed` says yes.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QAbstractButton, QMessageBox, QPushButton, QWidget

from app.look.breakable import breakable, unbroken
from app.look.screen_room import screen_room
from timothy.store.backups import Backup

# Wide enough for the kept-aside path on one line or two, not cut every few words (less
# where the screen has less room). A long name in it with no place to break is given some
# (`breakable`): it ran past the dialog's edge, cut off.
TEXT_WIDTH = 560  # px


def _memories(backup: Backup) -> str:
    if backup.memories is None or backup.active is None:
        return "memories that could not be counted"
    return (
        f"{backup.active:,} active memor{'y' if backup.active == 1 else 'ies'} "
        f"({backup.memories:,} in all)"
    )


def confirmation_html(backup: Backup, made: str, kind: str, aside: Path) -> str:
    return (
        f"<p><b>Restore your memories from the backup of {escape(made)}</b> "
        f"({escape(kind.lower())})?</p>"
        f"<p>It holds {_memories(backup)} and your conversations as they were then. "
        "Memories, conversations and changes made since then will not be in Timothy "
        "after the restore.</p>"
        "<p>Your current memory file is <b>not deleted</b>: it is kept aside, as it is now, "
        f"at<br><code>{escape(breakable(str(aside)))}</code></p>"
        "<p>Timothy closes its memory store, puts the backup in its place and opens it "
        "again. Chatting and changes to memories wait until it has finished. A backup "
        "that turns out damaged is refused, and your memories stay as they are.</p>"
    )


class RestoreConfirmation(QMessageBox):
    confirmed = Signal()

    def __init__(
        self, backup: Backup, made: str, kind: str, aside: Path, parent: QWidget | None = None
    ) -> None:
        """`made` and `kind`: the backup's time and kind as the list shows them; `aside`:
        where the current file will be kept."""
        super().__init__(parent)
        self.backup = backup
        self.aside = aside
        self.setWindowTitle("Restore a backup")
        self.setIcon(QMessageBox.Icon.Warning)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setText(confirmation_html(backup, made, kind, aside))
        self.restore_button: QPushButton = self.addButton(
            "Restore this backup", QMessageBox.ButtonRole.DestructiveRole
        )
        self.cancel_button: QPushButton = self.addButton(QMessageBox.StandardButton.Cancel)
        self.setDefaultButton(self.cancel_button)  # Enter never restores by accident
        self.setEscapeButton(self.cancel_button)
        self.buttonClicked.connect(self._clicked)
        self._set_text_width(TEXT_WIDTH)
        beside = self.minimumSizeHint().width() - TEXT_WIDTH  # the icon and margins
        self._set_text_width(min(TEXT_WIDTH, screen_room(self).width() - beside))

    def _set_text_width(self, width: int) -> None:
        self.setStyleSheet(f"QLabel#qt_msgbox_label {{ min-width: {width}px; }}")

    def text_shown(self) -> str:
        """The question as the owner reads it (without markup or places to break)."""
        document = QTextDocument()
        document.setHtml(self.text())
        return unbroken(document.toPlainText())

    def _clicked(self, button: QAbstractButton) -> None:
        if button is self.restore_button:
            self.confirmed.emit()
