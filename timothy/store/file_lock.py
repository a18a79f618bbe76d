"""An exclusive lock on a small file in the data folder, held across processes.

The app and the `timothy` command can run on one data folder at once, and a note both keep
there (a read, a change, a write of the whole file) would otherwise lose what the other
wrote between the read and the write. The lock is the operating system's (`flock` on Linux
and macOS, `msvcrt.locking` on Windows) on a file of its own beside the note: it is let go
when its holder exits, however it exits, so a process that died never leaves it taken.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

# Windows' msvcrt.locking does not wait: how long to keep trying, and how often. A holder
# keeps the lock only for a read and a write of a small file.
WINDOWS_WAIT_S = 10.0
WINDOWS_RETRY_S = 0.01


def lock_path(path: Path) -> Path:
    """The lock file of the note `path` (it stays in place, empty, once made)."""
    return path.with_name(path.name + ".lock")


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Held by this process alone while the block runs (other processes wait), for the note
    `path`. OSError when the lock file cannot be made (a read-only data folder)."""
    lock = lock_path(path)
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        _acquire(fd)
        try:
            yield
        finally:
            _release(fd)
    finally:
        os.close(fd)


if sys.platform == "win32":
    import msvcrt

    def _acquire(fd: int) -> None:
        deadline = time.monotonic() + WINDOWS_WAIT_S
        while True:
            try:
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # the first byte stands for the file
                return
            except OSError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(WINDOWS_RETRY_S)  # another process holds it for a moment

    def _release(fd: int) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _acquire(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_EX)  # waits: the holder only reads and writes a note

    def _release(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)
