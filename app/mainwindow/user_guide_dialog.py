"""Help ▸ User guide: the README's *User guide* section, rendered as Markdown (the README
travels with the app: build.spec bundles it), read on a worker."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

from app.jobs.workers import Failure, Workers
from app.look import theme
from app.look.screen_room import fitted
from timothy import paths
from timothy.health import Check

GUIDE_HEADING = "## User guide"
PROJECT_README = "the README.md that comes with Timothy's source"


def user_guide(readme: str) -> str:
    """The *User guide* section of the README (from its heading to the next `## `), with its
    own heading as the page's title; "" when the README has none."""
    start = readme.find(f"\n{GUIDE_HEADING}\n")
    if start < 0 and not readme.startswith(f"{GUIDE_HEADING}\n"):
        return ""
    body = readme[start + 1 if start >= 0 else 0 :].split("\n", 1)[1]
    end = body.find("\n## ")
    section = body if end < 0 else body[: end + 1]
    return "# User guide\n" + section.rstrip("\n") + "\n"


def read_guide(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise FileNotFoundError(
            f"The user guide could not be read ({path}: {exc.strerror}); it is in {PROJECT_README}."
        ) from exc
    guide = user_guide(text)
    if not guide:
        raise ValueError(f"{path} has no user guide; it is in {PROJECT_README}.")
    return guide


def check_user_guide() -> Check:
    """The README with its user guide is where Help ▸ User guide reads it (in a bundle too)."""
    path = paths.readme_path()
    try:
        guide = read_guide(path)
    except (OSError, ValueError) as exc:
        return Check("user guide", False, str(exc))
    return Check("user guide", True, f"{path} ({len(guide.splitlines())} lines)")


class UserGuideDialog(QDialog):
    def __init__(self, readme: Path, workers: Workers, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("User guide")
        self.resize(fitted(self, 720, 680))
        layout = QVBoxLayout(self)
        self.browser = QTextBrowser(self)
        self.browser.setOpenExternalLinks(True)
        self.browser.document().setDocumentMargin(16)
        self.browser.setPlainText("Loading the guide…")
        layout.addWidget(self.browser, 1)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.loaded = False
        workers.run(
            self,
            lambda: read_guide(readme),
            "reading the user guide",
            on_success=self._show,
            on_failure=self._failed,
        )

    def _show(self, guide: str) -> None:
        document = self.browser.document()
        document.setDefaultStyleSheet(
            f"code {{ background: {theme.colours().code_header.name()}; }}"
        )
        document.setMarkdown(guide, QTextDocument.MarkdownFeature.MarkdownDialectGitHub)
        self.browser.moveCursor(self.browser.textCursor().MoveOperation.Start)
        self.loaded = True

    def _failed(self, failure: Failure) -> None:
        error = failure.error
        self.browser.setPlainText(
            str(error) if isinstance(error, FileNotFoundError | ValueError) else failure.message
        )
        self.browser.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.loaded = True
