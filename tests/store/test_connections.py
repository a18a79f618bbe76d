"""Each thread reads the SQLite file on a connection of its own, closed when the thread ends."""

from __future__ import annotations

import threading
from pathlib import Path

import apsw
import pytest

from timothy.store import Store

WAIT_SECONDS = 10


class Reader(threading.Thread):
    """Reads through its own connection, then (given `until`) waits for it and reads again
    before it ends."""

    def __init__(self, store: Store, until: threading.Event | None = None) -> None:
        super().__init__(name="test-reader")
        self.store = store
        self.until = until
        self.opened = threading.Event()
        self.conn: apsw.Connection | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.conn = self.store.db.connection()
            self.store.memories.list(limit=1)
            self.opened.set()
            if self.until is not None:
                self.until.wait(WAIT_SECONDS)
                self.store.memories.list(limit=1)
        except BaseException as exc:
            self.error = exc
            self.opened.set()

    def begin(self) -> Reader:
        self.start()
        assert self.opened.wait(WAIT_SECONDS)
        return self

    def end(self) -> None:
        self.join(WAIT_SECONDS)
        assert not self.is_alive()
        assert self.error is None


def test_a_threads_connection_is_closed_when_the_thread_ends(data_dir: Path) -> None:
    """It stayed open (a file handle, sqlite-vec, a page cache) until some later thread
    happened to take over the ended thread's ident."""
    with Store.open(data_dir) as store:
        reader = Reader(store).begin()
        reader.end()
        assert reader.conn is not None
        with pytest.raises(apsw.ConnectionClosedError):
            reader.conn.execute("SELECT 1")
        # The store goes on for everyone else, and for a thread that comes after.
        assert store.memories.list(limit=1) == []
        Reader(store).begin().end()


def test_a_thread_ending_leaves_the_connections_of_live_threads_open(data_dir: Path) -> None:
    with Store.open(data_dir) as store:
        mine = store.db.connection()
        release = threading.Event()
        living = Reader(store, until=release).begin()
        Reader(store).begin().end()
        release.set()  # the living thread reads again, on its own connection
        living.end()
        assert mine.execute("SELECT 1").fetchall() == [(1,)]
        assert store.db.connection() is mine
