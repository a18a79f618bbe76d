"""The main window (a first version: the store's state; the chat arrives with the chat engine)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QMainWindow, QVBoxLayout, QWidget

from timothy.store import Store


class MainWindow(QMainWindow):
    def __init__(self, store: Store | None, *, store_error: str | None = None) -> None:
        super().__init__()
        self.store = store
        self.setWindowTitle("Timothy")
        self.resize(1100, 720)
        central = QWidget(self)
        layout = QVBoxLayout(central)
        title = QLabel("<h2>Timothy</h2>", central)
        title.setAlignment(Qt.AlignmentFlag.AlignCenter)
        layout.addWidget(title)
        if store is not None:
            active = store.memories.count(status="active")
            staged = store.memories.count(status="staged")
            text = f"{active} active memories, {staged} waiting for confirmation."
        else:
            text = f"The memory store could not be opened: {store_error}"
        self.status_label = QLabel(text, central)
        self.status_label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.status_label.setWordWrap(True)
        layout.addWidget(self.status_label)
        layout.addStretch(1)
        self.setCentralWidget(central)
