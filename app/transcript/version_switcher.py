"""The "‹ 1/2 ›" switcher under a message that has versions (edited, or regenerated)."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QToolButton, QWidget


class VersionSwitcher(QWidget):
    version_chosen = Signal(str)  # the id of the version to show

    def __init__(self, noun: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("VersionSwitcher")
        self.noun = noun  # "message" or "reply", for the tooltips
        self.versions: tuple[str, ...] = ()
        self.index = 0
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(0)
        self.previous_button = self._button("‹", f"Previous version of this {noun}")
        self.previous_button.clicked.connect(lambda: self._step(-1))
        row.addWidget(self.previous_button)
        self.label = QLabel(self)
        self.label.setProperty("muted", True)
        row.addWidget(self.label)
        self.next_button = self._button("›", f"Next version of this {noun}")
        self.next_button.clicked.connect(lambda: self._step(1))
        row.addWidget(self.next_button)
        self.hide()

    def _button(self, text: str, tip: str) -> QToolButton:
        button = QToolButton(self)
        button.setProperty("flat", True)
        button.setAutoRaise(True)
        button.setText(text)
        button.setToolTip(tip)
        return button

    def set_versions(self, versions: tuple[str, ...], index: int) -> None:
        """Show `index` (from 0) of `versions`; hidden when there is only one."""
        self.versions = versions
        self.index = index
        self.label.setText(f"{index + 1}/{len(versions)}")
        self.label.setToolTip(f"Version {index + 1} of {len(versions)}")
        self.previous_button.setEnabled(index > 0)
        self.next_button.setEnabled(index < len(versions) - 1)
        self.setVisible(len(versions) > 1)

    def set_enabled(self, enabled: bool) -> None:
        """Not while a reply is being written."""
        self.previous_button.setEnabled(enabled and self.index > 0)
        self.next_button.setEnabled(enabled and self.index < len(self.versions) - 1)

    def _step(self, by: int) -> None:
        target = self.index + by
        if 0 <= target < len(self.versions):
            self.version_chosen.emit(self.versions[target])
