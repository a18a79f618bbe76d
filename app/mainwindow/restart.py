"""Starting Timothy again (a new storage choice is used from the next start): a new process
with the same command line, then this one quits."""

from __future__ import annotations

import sys

from PySide6.QtCore import QProcess
from PySide6.QtWidgets import QApplication


def restart_app() -> bool:
    """Start a new Timothy and quit this one; False (nothing quit) when it cannot start."""
    frozen = bool(getattr(sys, "frozen", False))  # the packaged app: the executable is Timothy
    arguments = sys.argv[1:] if frozen else ["-m", "app", *sys.argv[1:]]
    started, _pid = QProcess.startDetached(sys.executable, arguments)
    if started:
        QApplication.quit()
    return bool(started)
