"""Settings ▸ Storage: where the memory lives, this computer's file or a shared PostgreSQL server.

The server's password goes to the OS keyring only (on Save), never into settings.json; the
connection test and the keyring run on workers. A new choice takes effect when Timothy next
starts; moving what this machine remembers onto the server is `timothy store copy --to URL`.
"""

from __future__ import annotations

from PySide6.QtWidgets import (
    QButtonGroup,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QRadioButton,
    QVBoxLayout,
    QWidget,
)

from app.jobs.workers import Failure, Workers
from app.look import theme
from timothy import secrets
from timothy.errors import InvalidInputError
from timothy.store.location import (
    SSL_MODES,
    StoreSettings,
    check_server,
    is_server_url,
    password_in,
    store_password_key,
)

SSL_CHOICES = [("", "The driver's default (prefer)"), *[(mode, mode) for mode in SSL_MODES]]


def _hint(text: str, parent: QWidget) -> QLabel:
    label = QLabel(text, parent)
    label.setWordWrap(True)
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
                "A new choice takes effect when Timothy next starts. To move what this "
                "computer remembers onto the server, run `timothy store copy --to ADDRESS` "
                "once, from this computer.",
                self,
            )
        )
        layout.addStretch(1)
        (self.server_button if settings.engine == "postgres" else self.local_button).setChecked(
            True
        )
        self.choice.buttonToggled.connect(lambda *_: self._engine_changed())
        self.url_edit.editingFinished.connect(self._load_password_state)
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

    def _show_result(self, mark: str, message: str, *, error: bool) -> None:
        colours = theme.colours()
        colour = colours.danger.name() if error else colours.success.name() if mark else ""
        self.test_result.setStyleSheet(f"color: {colour};" if colour else "")
        self.test_result.setText(f"{mark} {message}".strip())


def _failure_text(failure: Failure) -> str:
    return failure.message
