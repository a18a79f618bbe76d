"""Settings ▸ Storage: where the memory lives, this computer's file or a shared PostgreSQL server.

The server's password goes to the OS keyring only (on Save), never into settings.json; the
connection test and the keyring run on workers. A new choice takes effect when Timothy next
starts (the window offers a restart). *Copy* moves a whole store across, as `timothy store
copy` does: this computer's file onto the server, or the server's memory into this
computer's file; on a worker, with progress and a stop, resumable, the source only read.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from app.jobs.store_copy import StoreCopy
from app.jobs.workers import Failure, Workers
from app.look import theme
from app.look.wrapped_label import WrappedLabel
from timothy import paths, secrets
from timothy.errors import InvalidInputError
from timothy.store import DamageCheck, Store
from timothy.store.copy import CopyReport
from timothy.store.engine import StoreEngine
from timothy.store.location import (
    SSL_MODES,
    StoreSettings,
    check_server,
    is_server_url,
    open_server,
    password_in,
    store_password_key,
)

WHAT_WORDS = {"memories": "Memories", "vectors": "Vectors", "conversations": "Conversations"}

SSL_CHOICES = [("", "The driver's default (prefer)"), *[(mode, mode) for mode in SSL_MODES]]


def _hint(text: str, parent: QWidget) -> QLabel:
    label = WrappedLabel(text, parent)
    label.setStyleSheet(f"color: {theme.colours().muted.name()};")
    return label


class StoragePage(QWidget):
    def __init__(self, settings: StoreSettings, workers: Workers, parent: QWidget | None = None):
        super().__init__(parent)
        self.settings = settings
        self.workers = workers
        self._test_run = 0
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("<b>Where your memory lives</b>", self))
        self.choice = QButtonGroup(self)
        self.local_button = QRadioButton("On this computer (a file in the data folder)", self)
        self.server_button = QRadioButton("On a PostgreSQL server that your computers share", self)
        for button in (self.local_button, self.server_button):
            self.choice.addButton(button)
            layout.addWidget(button)
        layout.addWidget(
            _hint(
                "A server keeps one memory for all your machines: what one learns, the others "
                "know. It needs PostgreSQL 15 or newer with the pgvector extension.",
                self,
            )
        )
        self.server_box = QGroupBox("Server", self)
        form = QFormLayout(self.server_box)
        self.url_edit = QLineEdit(settings.url, self.server_box)
        self.url_edit.setPlaceholderText("postgresql://timothy@nas.local:5432/timothy")
        form.addRow("Address", self.url_edit)
        self.password_edit = QLineEdit(self.server_box)
        self.password_edit.setEchoMode(QLineEdit.EchoMode.Password)
        self.password_edit.setPlaceholderText("kept in your system keyring")
        form.addRow("Password", self.password_edit)
        self.password_state = _hint("", self.server_box)
        form.addRow("", self.password_state)
        self.ssl_combo = QComboBox(self.server_box)
        for value, label in SSL_CHOICES:
            self.ssl_combo.addItem(label, value)
        self.ssl_combo.setCurrentIndex(max(0, self.ssl_combo.findData(settings.sslmode)))
        form.addRow("TLS", self.ssl_combo)
        ca_row = QHBoxLayout()
        self.ca_edit = QLineEdit(settings.ca_file, self.server_box)
        self.ca_edit.setPlaceholderText("the CA certificate that signed the server's")
        self.ca_button = QPushButton("Choose…", self.server_box)
        self.ca_button.clicked.connect(self._choose_ca)
        ca_row.addWidget(self.ca_edit, 1)
        ca_row.addWidget(self.ca_button)
        form.addRow("CA file", ca_row)
        test_row = QHBoxLayout()
        self.test_button = QPushButton("Test connection", self.server_box)
        self.test_button.clicked.connect(self.test_connection)
        self.test_result = QLabel(self.server_box)
        self.test_result.setWordWrap(True)
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.test_result, 1)
        form.addRow(test_row)
        layout.addWidget(self.server_box)
        layout.addWidget(
            _hint(
                "A new choice takes effect when Timothy next starts: after saving, the "
                "window offers to restart.",
                self,
            )
        )
        self.copy_box = QGroupBox("Copy your memory", self)
        copy_layout = QVBoxLayout(self.copy_box)
        self.copy_hint = _hint("", self.copy_box)
        copy_layout.addWidget(self.copy_hint)
        copy_row = QHBoxLayout()
        self.copy_button = QPushButton("Copy", self.copy_box)
        self.copy_button.clicked.connect(self.start_copy)
        self.copy_cancel = QPushButton("Stop", self.copy_box)
        self.copy_cancel.clicked.connect(self.stop_copy)
        self.copy_cancel.hide()
        self.copy_progress = QProgressBar(self.copy_box)
        self.copy_progress.hide()
        copy_row.addWidget(self.copy_button)
        copy_row.addWidget(self.copy_progress, 1)
        copy_row.addWidget(self.copy_cancel)
        copy_row.addStretch(0)
        copy_layout.addLayout(copy_row)
        self.copy_status = QLabel(self.copy_box)
        self.copy_status.setWordWrap(True)
        copy_layout.addWidget(self.copy_status)
        self.copy_box.hide()  # until the window offers its store (offer_copy)
        layout.addWidget(self.copy_box)
        self.store: StoreEngine | None = None
        self.data_dir: Path | None = None
        self.copier: StoreCopy | None = None
        layout.addStretch(1)
        (self.server_button if settings.engine == "postgres" else self.local_button).setChecked(
            True
        )
        self.choice.buttonToggled.connect(lambda *_: self._engine_changed())
        self.url_edit.editingFinished.connect(self._load_password_state)
        for edit in (self.url_edit, self.password_edit, self.ca_edit):
            edit.textChanged.connect(lambda _text: self._forget_test())
        self.ssl_combo.currentIndexChanged.connect(lambda _index: self._forget_test())
        self._engine_changed()
        self._load_password_state()

    # -- reading the page --------------------------------------------------------------

    def value(self) -> StoreSettings:
        """The section as chosen; raises InvalidInputError for an address that cannot work."""
        url = self.url_edit.text().strip()
        if self.server_button.isChecked():
            if not is_server_url(url):
                raise InvalidInputError(
                    "The server's address starts with postgresql://, e.g. "
                    "postgresql://timothy@nas.local/timothy."
                )
            if password_in(url):
                raise InvalidInputError(
                    "Leave the password out of the address: type it in the Password field, "
                    "and it is kept in your system keyring."
                )
        section = StoreSettings(
            engine="postgres" if self.server_button.isChecked() else "sqlite",
            url=url,
            sslmode=str(self.ssl_combo.currentData() or ""),
            ca_file=self.ca_edit.text().strip(),
        )
        section.check()
        return section

    def save_password(self, section: StoreSettings) -> None:
        """Keep a typed password in the keyring (a worker calls this on Save)."""
        typed = self.password_edit.text()
        if typed and section.url:
            secrets.set_secret(store_password_key(section.url), typed)

    def saved(self) -> None:
        self.password_edit.clear()

    # -- reactions ---------------------------------------------------------------------

    def _engine_changed(self) -> None:
        self.server_box.setEnabled(self.server_button.isChecked())
        self._refresh_copy()

    # -- copying the store -------------------------------------------------------------

    def offer_copy(self, store: StoreEngine, data_dir: Path, copier: StoreCopy) -> None:
        """Offer to copy the open `store`: a file onto the server this page names, a server
        into the file in `data_dir`. `copier` outlives the dialog (a copy goes on if it is
        closed)."""
        self.store = store
        self.data_dir = data_dir
        self.copier = copier
        copier.progressed.connect(self._copy_progressed)
        copier.finished.connect(self._copy_finished)
        copier.failed.connect(self._copy_failed)
        self.url_edit.textChanged.connect(lambda _text: self._refresh_copy())
        self.copy_box.show()
        self._set_copying(copier.running)
        self._refresh_copy()

    def _copy_from_file(self) -> bool:
        return isinstance(self.store, Store)

    def _refresh_copy(self) -> None:
        if self.store is None or self.copier is None:
            return
        if self._copy_from_file():
            self.copy_button.setText("Copy this computer's memory to the server")
            self.copy_hint.setText(
                "Copies every memory, vector and conversation of this computer's file onto "
                "the server above (what the server already has is skipped). This computer's "
                "file is only read."
            )
            usable = self.server_button.isChecked() and is_server_url(self.url_edit.text())
        else:
            self.copy_button.setText("Copy the server's memory to this computer")
            self.copy_hint.setText(
                "Copies every memory, vector and conversation on the server into this "
                "computer's file, to work without the server. The server is only read."
            )
            usable = True
        self.copy_button.setEnabled(usable and not self.copier.running)

    def start_copy(self) -> None:
        store, data_dir, copier = self.store, self.data_dir, self.copier
        if store is None or data_dir is None or copier is None or copier.running:
            return
        if self._copy_from_file():
            try:
                section = self.value()
            except InvalidInputError as exc:
                self._copy_said(str(exc), error=True)
                return
            typed = self.password_edit.text()

            def open_target() -> StoreEngine:
                return open_server(section, password=typed, data_dir=data_dir)

        else:

            def open_target() -> StoreEngine:
                return Store.open(data_dir, check=DamageCheck.NOW)

        if copier.start(store, open_target):
            self._set_copying(True)
            self._copy_said("Connecting…", error=False)

    def stop_copy(self) -> None:
        if self.copier is not None:
            self.copier.cancel()
            self.copy_cancel.setEnabled(False)
            self._copy_said("Stopping after the batch under way…", error=False)

    def _set_copying(self, copying: bool) -> None:
        self.copy_progress.setVisible(copying)
        self.copy_cancel.setVisible(copying)
        self.copy_cancel.setEnabled(copying)
        self.copy_button.setVisible(not copying)
        if not copying:
            self._refresh_copy()

    def _copy_progressed(self, what: str, done: int, total: int) -> None:
        self.copy_progress.setMaximum(max(total, 1))
        self.copy_progress.setValue(done if total else 1)
        self.copy_progress.setFormat(f"{WHAT_WORDS.get(what, what)}: %v of {total}")
        if self.copy_cancel.isEnabled():
            self._copy_said(f"Copying {what}…", error=False)

    def _copy_finished(self, report: CopyReport) -> None:
        self._set_copying(False)
        if report.stopped:
            self._copy_said(
                f"Stopped. {_count(report.memories_copied, 'memory', 'memories')} and "
                f"{_count(report.conversations_copied, 'conversation')} were copied; copy "
                "again to finish (what is there already is skipped).",
                error=False,
            )
            return
        into_file = None
        if not self._copy_from_file() and self.data_dir is not None:
            into_file = paths.database_path(self.data_dir)
        self._copy_said(copied_text(report, into_file=into_file), error=False, done=True)

    def _copy_failed(self, message: str, copied_some: bool) -> None:
        """`message` says why and what to do; copying again only helps a copy cut off
        after some of it had landed."""
        self._set_copying(False)
        after = (
            "What was copied stays; copy again to finish." if copied_some else "Nothing was copied."
        )
        self._copy_said(f"✗ {message} {after}", error=True)

    def _copy_said(self, text: str, *, error: bool, done: bool = False) -> None:
        colours = theme.colours()
        colour = colours.danger.name() if error else colours.success.name() if done else ""
        self.copy_status.setStyleSheet(f"color: {colour};" if colour else "")
        self.copy_status.setText(text)

    def _choose_ca(self) -> None:
        chosen, _ = QFileDialog.getOpenFileName(
            self, "The CA certificate", self.ca_edit.text(), "Certificates (*.pem *.crt);;All (*)"
        )
        if chosen:
            self.ca_edit.setText(chosen)

    def _load_password_state(self) -> None:
        url = self.url_edit.text().strip()
        if not is_server_url(url) or password_in(url):
            self.password_state.setText("")
            return

        def loaded(saved: object) -> None:
            if self.url_edit.text().strip() != url:
                return
            self.password_state.setText(
                "A password for this server is saved in your system keyring."
                if saved
                else "No password saved for this server yet."
            )

        self.workers.run(
            self,
            lambda: secrets.get_secret(store_password_key(url)) is not None,
            "reading the system keyring",
            on_success=loaded,
            on_failure=lambda failure: self.password_state.setText(failure.message),
        )

    def test_connection(self) -> None:
        """Ask the server what it is (version, pgvector, what it holds) on a worker."""
        try:
            section = self.value()
        except InvalidInputError as exc:
            self._show_result("✗", str(exc), error=True)
            return
        typed = self.password_edit.text()
        self._test_run += 1
        run = self._test_run
        self.test_button.setEnabled(False)
        self._show_result("", "Testing…", error=False)

        def finish(mark: str, message: str, error: bool) -> None:
            if run != self._test_run:
                return
            self.test_button.setEnabled(True)
            self._show_result(mark, message, error=error)

        self.workers.run(
            self,
            lambda: check_server(
                section.url, sslmode=section.sslmode, ca_file=section.ca_file, password=typed
            ),
            "testing the memory server",
            on_success=lambda message: finish("✓", str(message), False),
            on_failure=lambda failure: finish("✗", _failure_text(failure), True),
        )

    def _forget_test(self) -> None:
        """What was tested has changed: its answer (or the one on its way) no longer speaks
        of the address, password and TLS on the page."""
        self._test_run += 1
        self.test_button.setEnabled(True)
        self._show_result("", "", error=False)

    def _show_result(self, mark: str, message: str, *, error: bool) -> None:
        colours = theme.colours()
        colour = colours.danger.name() if error else colours.success.name() if mark else ""
        self.test_result.setStyleSheet(f"color: {colour};" if colour else "")
        self.test_result.setText(f"{mark} {message}".strip())


def copied_text(report: CopyReport, *, into_file: Path | None) -> str:
    """What a finished copy did, and what it left as the target had it (a memory in
    another state there, from an earlier copy, is never written over). `into_file`: the
    file copied into, when the copy was the server's into this computer's."""
    said = [
        f"✓ Copied {_count(report.memories_copied, 'memory', 'memories')}, "
        f"{_count(report.vectors_copied, 'vector')} and "
        f"{_count(report.conversations_copied, 'conversation')}."
    ]
    if report.conversations_caught_up:
        said.append(
            f"{_count(report.conversations_caught_up, 'conversation')} copied before "
            "got the messages added since."
        )
    if report.messages_redacted:
        said.append(
            f"{_count(report.messages_redacted, 'message')} already there "
            f"{'was' if report.messages_redacted == 1 else 'were'} redacted as in the "
            "source (memories forgotten for good there since)."
        )
    there = [
        _count(number, one, many)
        for number, one, many in (
            (report.memories_already_there, "memory", "memories"),
            (report.conversations_already_there, "conversation", None),
        )
        if number
    ]
    if there:
        said.append(f"Already there: {' and '.join(there)}.")
    one = report.memories_differing == 1
    if report.memories_differing:
        where = "this computer's file" if into_file is not None else "the server"
        said.append(
            f"{_count(report.memories_differing, 'memory', 'memories')} there "
            f"{'differs' if one else 'differ'} from the copy (edited, confirmed or archived "
            f"since an earlier copy) and {'was' if one else 'were'} left as {where} has "
            f"{'it' if one else 'them'}."
        )
    if into_file is not None and report.memories_only_in_target:
        extra = report.memories_only_in_target
        said.append(
            f"{_count(extra, 'memory', 'memories')} in this computer's file "
            f"{'is' if extra == 1 else 'are'} not on the server (forgotten there, or never "
            f"copied to it) and {'stays' if extra == 1 else 'stay'}."
        )
    if into_file is not None and (report.memories_differing or report.memories_only_in_target):
        said.append(
            f"To have exactly the server's memory here, move {into_file} out of the way (it "
            "is not read while the server is the store) and copy again."
        )
    return " ".join(said)


def _count(number: int, one: str, many: str | None = None) -> str:
    return f"{number} {one if number == 1 else many or one + 's'}"


def _failure_text(failure: Failure) -> str:
    return failure.message
