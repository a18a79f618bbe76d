"""The question before forgetting for good, saying exactly what goes: each memory's text (and,
when it has older or newer versions, every version's), that the text also leaves the memory
blocks recorded with past turns, that it cannot be undone, and which backups still hold it,
with a box (ticked) to remove it from them too.

Opened with `open()` (window-modal, never a nested event loop), answered by its buttons (the
text scrolls; the buttons are always in view):
`chosen(chain)` says which (`False`: only the chosen versions; `True`: every version);
`purge_backups()` says whether the box was ticked.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from math import ceil
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractButton,
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStyle,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.look.screen_room import fitted, fitted_width
from timothy.store import Memory
from timothy.store.forget import FORGOTTEN

TEXT_WIDTH = 520  # px: the question's text, as wide as a message box's
MIN_TEXT_WIDTH = 240
ICON_SIZE = 48


def _quoted(memory: Memory) -> str:
    return f"“{escape(memory.content)}”"


def confirmation_html(
    chosen: list[Memory],
    chains: dict[str, list[Memory]],
    backups: Path | None,
    holding: Sequence[Path] = (),
) -> tuple[str, int]:
    """The question's text (HTML, every memory's words escaped) and how many versions
    forgetting "all versions" removes (no more than `len(chosen)`: there are no others).
    `backups` is None for a store on a server: its backups are the server's."""
    chosen_ids = {memory.id for memory in chosen}
    versions: dict[str, Memory] = {}
    for memory in chosen:
        for version in chains.get(memory.id) or [memory]:
            versions.setdefault(version.id, version)
    one = len(chosen) == 1
    parts = [
        "<p>This memory will be removed for good:</p>"
        if one
        else f"<p>These {len(chosen)} memories will be removed for good:</p>",
        "<ul>" + "".join(f"<li>{_quoted(m)}</li>" for m in chosen) + "</ul>",
    ]
    if len(versions) > len(chosen):
        listed = "".join(
            f"<li>{_quoted(v)}{' <i>(chosen)</i>' if v.id in chosen_ids else ''}</li>"
            for v in versions.values()
        )
        parts.append(
            f"<p>{'It has' if one else 'They have'} {len(versions)} versions in all. "
            f"<b>Forget all {len(versions)} versions</b> removes every one of these:</p>"
            f"<ul>{listed}</ul>"
        )
    parts.append(
        f"<p>{'Its' if one else 'Their'} text is also removed from the memory blocks recorded "
        f"with past turns (the line there will read “{FORGOTTEN}”), and from any "
        "<i>remember</i> message that saved it.</p>"
    )
    if backups is None:
        parts.append(
            "<p><b>This cannot be undone.</b> The memory is on a server: its backups are the "
            "server's job (its administrator's), and Timothy cannot remove the text from them. "
            "Backups made before now may still hold it.</p>"
        )
    elif holding:
        count = len(holding)
        parts.append(
            f"<p><b>This cannot be undone.</b> {count} older backup{'' if count == 1 else 's'} "
            f"(in {escape(str(backups))}) still hold{'s' if count == 1 else ''} this text. "
            "With the box below ticked it is removed from them too: each is changed on a "
            "copy, checked, then put in its place. Unticked, they keep it.</p>"
        )
    else:
        parts.append(
            "<p><b>This cannot be undone.</b> Older backups made before now (in "
            f"{escape(str(backups))}) may still hold this text; none of those Timothy "
            "keeps there does now.</p>"
        )
    return "".join(parts), len(versions)


class ForgetConfirmation(QDialog):
    """A warning dialog rather than a message box: its text (every chosen memory, every
    version) scrolls, so with many memories chosen, or a long one, or on a small screen at
    200 %, the buttons stay on the screen."""

    chosen = Signal(bool)  # True: every version of each chain

    def __init__(
        self,
        chosen: list[Memory],
        chains: dict[str, list[Memory]],
        backups: Path | None,
        parent: QWidget | None = None,
        *,
        holding: Sequence[Path] = (),
    ) -> None:
        """`holding`: the backups that hold any of these memories' versions."""
        super().__init__(parent)
        self.setWindowTitle("Forget for good")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        html, versions = confirmation_html(chosen, chains, backups, holding)
        self.holding = list(holding)
        self.memories = list(chosen)

        top = QHBoxLayout()
        icon = QLabel(self)
        icon.setPixmap(
            self.style()
            .standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning, None, self)
            .pixmap(ICON_SIZE, ICON_SIZE)
        )
        icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        top.addWidget(icon)
        self.text_view = QTextBrowser(self)
        self.text_view.setOpenLinks(False)
        self.text_view.setFrameShape(QFrame.Shape.NoFrame)
        self.text_view.viewport().setAutoFillBackground(False)  # reads as the dialog's text
        self.text_view.setHtml(html)
        self.text_view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        top.addWidget(self.text_view, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top, 1)

        self.purge_box: QCheckBox | None = None
        if holding:
            count = len(holding)
            it = "it" if len(chosen) == 1 else "them"
            self.purge_box = QCheckBox(
                f"Also remove {it} from the {count} backup{'' if count == 1 else 's'} "
                f"that hold{'s' if count == 1 else ''} {it}",
                self,
            )
            self.purge_box.setChecked(True)  # forgetting for good means gone everywhere
            layout.addWidget(self.purge_box)

        self.buttons = QDialogButtonBox(self)
        count = len(chosen)
        if versions == count:
            label = "Forget this memory" if count == 1 else f"Forget {count} memories"
        else:
            label = "Forget this version" if count == 1 else f"Forget these {count} versions"
        self.this_button: QPushButton = self.buttons.addButton(
            label, QDialogButtonBox.ButtonRole.DestructiveRole
        )
        self.chain_button: QPushButton | None = None
        if versions > len(chosen):
            self.chain_button = self.buttons.addButton(
                f"Forget all {versions} versions", QDialogButtonBox.ButtonRole.DestructiveRole
            )
        cancel = self.buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        assert cancel is not None
        self.cancel_button: QPushButton = cancel
        # Enter never forgets by accident: only Cancel is a default button, and it has the
        # focus; Escape rejects, as a message box's escape button does.
        for button in self.buttons.buttons():
            if isinstance(button, QPushButton):
                button.setAutoDefault(button is self.cancel_button)
        self.cancel_button.setDefault(True)
        self.cancel_button.setFocus(Qt.FocusReason.OtherFocusReason)
        self.buttons.clicked.connect(self._clicked)
        layout.addWidget(self.buttons)
        self._fit_to_text()

    def _fit_to_text(self) -> None:
        """As tall as the text needs at TEXT_WIDTH, or the screen's room: beyond it, the
        text scrolls and the box and buttons stay in view."""
        width = fitted_width(self, TEXT_WIDTH)
        document = self.text_view.document().clone(self)  # the view lays its own out late
        document.setTextWidth(width)
        margins = self.text_view.contentsMargins()
        text_height = ceil(document.size().height()) + margins.top() + margins.bottom()
        self.text_view.setMinimumWidth(min(width, MIN_TEXT_WIDTH))
        around = self.sizeHint().height() - self.text_view.sizeHint().height()
        icon_width = self.sizeHint().width() - self.text_view.sizeHint().width()
        self.resize(fitted(self, width + icon_width, text_height + around))
        document.deleteLater()

    def purge_backups(self) -> bool:
        """Whether the owner asked to remove it from the backups as well."""
        return self.purge_box is not None and self.purge_box.isChecked()

    def text_shown(self) -> str:
        """The question as the owner reads it (without markup)."""
        return self.text_view.toPlainText()

    def _clicked(self, button: QAbstractButton) -> None:
        if button is self.this_button:
            self.accept()
            self.chosen.emit(False)
        elif self.chain_button is not None and button is self.chain_button:
            self.accept()
            self.chosen.emit(True)
        else:
            self.reject()
