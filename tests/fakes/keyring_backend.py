"""A keyring backend for tests: keeps secrets in a JSON file named by TIMOTHY_TEST_KEYRING_FILE.

A file (not memory) so that a subprocess under test and the test itself see the same secrets,
and so a test can prove a key went to the keyring and to no other file it controls.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from keyring.backend import KeyringBackend


class FileKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    @property
    def _path(self) -> Path:
        return Path(os.environ["TIMOTHY_TEST_KEYRING_FILE"])

    def _load(self) -> dict[str, str]:
        try:
            return dict(json.loads(self._path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            return {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._load().get(f"{service}\x00{username}")

    def set_password(self, service: str, username: str, password: str) -> None:
        data = self._load()
        data[f"{service}\x00{username}"] = password
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._path.write_text(json.dumps(data), encoding="utf-8")

    def delete_password(self, service: str, username: str) -> None:
        data = self._load()
        data.pop(f"{service}\x00{username}", None)
        self._path.parent.mkdir(parents=True, exist_ok=True)
        self._path.write_text(json.dumps(data), encoding="utf-8")


class LockedKeyring(FileKeyring):
    """A keyring that is there but will not open (a Secret Service collection left locked):
    every read and write raises, as the D-Bus backends do."""

    def get_password(self, service: str, username: str) -> str | None:
        from keyring.errors import KeyringLocked

        raise KeyringLocked("Failed to unlock the collection!")

    def set_password(self, service: str, username: str, password: str) -> None:
        from keyring.errors import KeyringLocked

        raise KeyringLocked("Failed to unlock the collection!")


class LockableKeyring(FileKeyring):
    """The file keyring behind a lock the test turns: while `locked`, every read and write
    raises as a locked Secret Service collection does; `reads` counts the reads tried (a
    read of a locked keyring may put up the system's unlock prompt: tries must be few)."""

    def __init__(self, *, locked: bool = True) -> None:
        super().__init__()
        self.locked = locked
        self.reads = 0

    def get_password(self, service: str, username: str) -> str | None:
        from keyring.errors import KeyringLocked

        self.reads += 1
        if self.locked:
            raise KeyringLocked("Failed to unlock the collection!")
        return super().get_password(service, username)

    def set_password(self, service: str, username: str, password: str) -> None:
        from keyring.errors import KeyringLocked

        if self.locked:
            raise KeyringLocked("Failed to unlock the collection!")
        super().set_password(service, username, password)
