"""Changes whose outcome this machine could not learn, kept in the data folder across restarts.

When the reply to a change is lost and the server does not answer the question whether it
landed either (see memories.py), the owner is told that doing it again is safe. That promise
must outlive the app: the change is noted here (its event, the memory it was about, and how
to tell on the server whether it landed), so a repeat that finds it done is its success even
after a restart, and when the server answers again the store asks about each, and the window
hears what did land (a forgotten memory leaves the lists).

Only ids, statuses and times are kept, never a memory's words (a forgotten memory's words
must not outlive it here). The file is small and written whole (a new file renamed over the
old, flushed to disk first); one that does not read is set aside and counts as empty: the
worst that follows is the error a repeat gave before. The app and the `timothy` command may
change it at once (one data folder): each read, change and write holds an OS file lock
(file_lock.py), so neither loses what the other noted.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from timothy.store.file_lock import locked

log = logging.getLogger(__name__)

# (event, memory id) as the repository names a change (see BaseMemoryRepository._saved).
Change = tuple[str, str]
# How many settled changes stay noted for a repeat from a window that still showed them
# (those whose outcome is not known yet are never dropped).
SETTLED_KEPT = 50


def unsure_path(folder: Path, location: str) -> Path:
    """One file per server and database, in the data folder (beside the outbox)."""
    digest = hashlib.sha256(location.encode("utf-8")).hexdigest()[:16]
    return folder / f"unsure-for-server-{digest}.json"


class UnsureChanges:
    """The noted changes of one server: each with its `check` (how to tell it landed: the
    memory `id` in one of the statuses `status`, with the confirmation time `stamp`; or the
    memories `gone`), and whether the store has since learned that it landed (`landed`).
    `path` None: noted in memory only."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._held: list[dict[str, Any]] = []  # the entries when there is no file

    def note(self, change: Change, check: dict[str, Any]) -> None:
        """Note a change whose outcome is not known (again, if it was noted before)."""
        entry = {"event": change[0], "key": change[1], "check": check, "landed": False}
        with self._locked():
            entries = [e for e in self._read() if _change(e) != change]
            self._write([*entries, entry])

    def take(self, change: Change) -> dict[str, Any] | None:
        """The check of `change` if it is noted, and it is noted no more (a repeat of it)."""
        with self._locked():
            entries = self._read()
            found = next((e for e in entries if _change(e) == change), None)
            if found is None:
                return None
            self._write([e for e in entries if e is not found])
            return dict(found["check"])

    def discard(self, change: Change) -> None:
        """Its outcome is known (it landed and was reported, or it did not land)."""
        with self._locked():
            entries = self._read()
            kept = [e for e in entries if _change(e) != change]
            if len(kept) != len(entries):
                self._write(kept)

    def unsettled(self) -> list[tuple[Change, dict[str, Any]]]:
        """The changes whose outcome is not known yet, oldest first, with their checks."""
        if self.path is not None and not self.path.exists():
            return []  # none noted (read at every start: no lock file is made for it)
        with self._locked():
            return [(_change(e), dict(e["check"])) for e in self._read() if not e["landed"]]

    def landed(self, change: Change) -> None:
        """The store learned that `change` landed (and told its listeners): a repeat of it
        is still its success, but it is not asked about again."""
        with self._locked():
            entries = self._read()
            for entry in entries:
                if _change(entry) == change:
                    entry["landed"] = True
            settled = [e for e in entries if e["landed"]]
            drop = {id(e) for e in settled[: max(0, len(settled) - SETTLED_KEPT)]}
            self._write([e for e in entries if id(e) not in drop])

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """This store's threads one at a time, and other processes on the same data folder
        (the app and the `timothy` command) too: a read and the write after it are one step."""
        with self._lock:
            if self.path is None:
                yield
                return
            with locked(self.path):
                yield

    def _read(self) -> list[dict[str, Any]]:
        if self.path is None:
            return [dict(e) for e in self._held]
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as exc:
            return self._set_aside(exc)
        if not isinstance(data, list) or not all(_readable(e) for e in data):
            return self._set_aside(ValueError("not a list of changes"))
        return data

    def _set_aside(self, exc: Exception) -> list[dict[str, Any]]:
        assert self.path is not None
        aside = self.path.with_name(self.path.name + ".unreadable")
        log.warning("%s does not read (%s); set aside as %s", self.path, exc, aside.name)
        try:
            os.replace(self.path, aside)
        except OSError as moved:
            log.warning("%s could not be set aside: %s", self.path, moved)
        return []

    def _write(self, entries: list[dict[str, Any]]) -> None:
        if self.path is None:
            self._held = entries
            return
        if not entries:
            self.path.unlink(missing_ok=True)
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = self.path.with_name(self.path.name + ".new")
        with fresh.open("w", encoding="utf-8") as out:
            json.dump(entries, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(fresh, self.path)


def _change(entry: dict[str, Any]) -> Change:
    return str(entry["event"]), str(entry["key"])


def _readable(entry: object) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("event"), str)
        and isinstance(entry.get("key"), str)
        and isinstance(entry.get("check"), dict)
        and isinstance(entry.get("landed"), bool)
    )
