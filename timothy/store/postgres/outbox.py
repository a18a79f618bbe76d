"""New memories kept on this machine while the memory server does not answer.

A `remember` call or an extraction's proposals made while the server is down or out of reach
are not dropped: the memory, complete with its id and times, is appended to a small file in
the data folder (one JSON object a line, flushed to disk before the call returns) and handed
to the server as soon as it answers again (when the change feed reconnects, or the next
write goes through). Handing over is idempotent: a memory the server already has is skipped,
so a crash half way through a hand-over loses and doubles nothing.

The app and the `timothy` command may use one data folder at once (the command hands over
what waits when it opens the store): each read and write of the file holds an OS file lock
(file_lock.py), and a hand-over takes out of the file only what it handed over, so a memory
kept by the other process meanwhile stays. The lock is never held while the server is asked.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path

from timothy.errors import StoreError
from timothy.store.file_lock import locked
from timothy.store.records import Memory, MemorySource, MemoryStatus, MemoryType, parse_time

log = logging.getLogger(__name__)


def outbox_path(folder: Path, location: str) -> Path:
    """One file per server and database, in the data folder."""
    digest = hashlib.sha256(location.encode("utf-8")).hexdigest()[:16]
    return folder / f"pending-for-server-{digest}.jsonl"


def _from_json(data: dict[str, object]) -> Memory:
    def moment(key: str) -> object:
        value = data.get(key)
        return None if value is None else parse_time(str(value))

    entities = data.get("entities") or []
    assert isinstance(entities, list)
    return Memory(
        id=str(data["id"]),
        type=MemoryType(str(data["type"])),
        content=str(data["content"]),
        status=MemoryStatus(str(data["status"])),
        confidence=float(str(data["confidence"])),
        source=MemorySource(str(data["source"])),
        session_id=None if data.get("session_id") is None else str(data["session_id"]),
        supersedes=None if data.get("supersedes") is None else str(data["supersedes"]),
        superseded_by=None,
        created_at=moment("created_at"),  # type: ignore[arg-type]
        last_confirmed_at=moment("last_confirmed_at"),  # type: ignore[arg-type]
        last_retrieved_at=None,
        entities=tuple(str(name) for name in entities),
    )


class Outbox:
    """The pending new memories of one server, in a file of this machine's."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()

    def keep(self, memory: Memory) -> None:
        """Append one memory, durably (fsync) before returning."""
        line = json.dumps(memory.to_json(), ensure_ascii=False) + "\n"
        with self._lock:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with locked(self.path), self.path.open("a", encoding="utf-8") as out:
                out.write(line)
                out.flush()
                os.fsync(out.fileno())
        log.warning("the memory server is unreachable; kept %s on this machine", memory.id)

    def pending(self) -> list[Memory]:
        with self._lock:
            return self._read()[0]

    def waiting(self) -> int:
        """How many memories wait here, those that do not read included (kept too)."""
        with self._lock:
            found, unreadable = self._read()
            return len(found) + len(unreadable)

    def _read(self) -> tuple[list[Memory], list[str]]:
        """The pending memories, and the lines that do not read (kept, never dropped)."""
        found: list[Memory] = []
        unreadable: list[str] = []
        for raw, memory in self._lines():
            if memory is None:
                unreadable.append(raw)
            else:
                found.append(memory)
        return found, unreadable

    def _lines(self) -> list[tuple[str, Memory | None]]:
        """Each line of the file as it is, with its memory (None: it does not read)."""
        if not self.path.exists():  # nothing waits (and no lock file is made to say so)
            return []
        try:
            # Bytes that are not UTF-8 (a damaged line) are kept as they are: such a line
            # does not read, and is written back byte for byte.
            with locked(self.path):
                text = self.path.read_bytes().decode("utf-8", "surrogateescape")
        except FileNotFoundError:
            return []
        lines: list[tuple[str, Memory | None]] = []
        for raw in text.splitlines():
            try:
                raw.encode("utf-8")  # UnicodeEncodeError (a ValueError) on damaged bytes
                lines.append((raw, _from_json(json.loads(raw))))
            except (ValueError, KeyError, TypeError, AssertionError):
                log.warning("a pending memory in %s does not read; left in place", self.path)
                lines.append((raw, None))
        return lines

    def hand_over(self, write: Callable[[list[Memory]], None]) -> int:
        """Give every pending memory to `write` (which skips what the server has), then
        take them out of the file; on a failure the file stays as it was. How many were
        handed over."""
        with self._lock:
            memories = self._read()[0]
            if not memories:
                return 0
            try:
                write(memories)
            except StoreError as exc:
                log.info("pending memories wait for the server: %s", exc)
                return 0
            self._take_out({memory.id for memory in memories})
        log.info("handed %d pending memories to the memory server", len(memories))
        return len(memories)

    def _take_out(self, handed: set[str]) -> None:
        """The file without the memories `handed` over, read afresh under the lock: what
        another process kept since stays (and lines that do not read, byte for byte)."""
        with locked(self.path):
            try:
                text = self.path.read_bytes().decode("utf-8", "surrogateescape")
            except FileNotFoundError:
                return
            kept = [raw for raw in text.splitlines() if _line_id(raw) not in handed]
            if not kept:
                self.path.unlink(missing_ok=True)
                return
            fresh = self.path.with_name(self.path.name + ".new")
            with fresh.open("w", encoding="utf-8", errors="surrogateescape") as out:
                out.write("\n".join(kept) + "\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(fresh, self.path)


def _line_id(raw: str) -> str | None:
    """The id of the memory on a line of the file; None when the line does not read."""
    try:
        data = json.loads(raw)
    except ValueError:
        return None
    return str(data["id"]) if isinstance(data, dict) and "id" in data else None
