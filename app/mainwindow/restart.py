"""Starting Timothy again (a new storage choice is used from the next start): a new process
with the same command line; the window then closes as it always does (its state saved, its
work stopped)."""

from __future__ import annotations

import sys

from PySide6.QtCore import QProcess


def restart_app() -> bool:
    """Start a new Timothy; False when it cannot start."""
    frozen = bool(getattr(sys, "frozen", False))  # the packaged app: the executable is Timothy
    arguments = sys.argv[1:] if frozen else ["-m", "app", *sys.argv[1:]]
    started, _pid = QProcess.startDetached(sys.executable, arguments)
    return bool(started)
