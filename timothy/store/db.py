"""One SQLite file through apsw: sqlite-vec loaded, WAL, a busy timeout, migrated on open."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import apsw
import sqlite_vec

from timothy.errors import DatabaseLockedError, StoreError
from timothy.store.migrations import MIGRATIONS, Migration, apply_migration

log = logging.getLogger(__name__)

SQLITE_HEADER = b"SQLite format 3\x00"
DEFAULT_BUSY_TIMEOUT_MS = 5_000


@contextlib.contextmanager
def sqlite_errors(path: Path | str) -> Iterator[None]:
    """Turn SQLite's failures into StoreErrors that say what happened in plain words."""
    try:
        yield
    except (apsw.BusyError, apsw.LockedError) as exc:
        raise DatabaseLockedError(
            f"The memory database {path} is in use by another program; "
            "close it (or wait a moment) and try again."
        ) from exc
    except (apsw.NotADBError, apsw.CorruptError) as exc:
        raise StoreError(
            f"{path} is damaged or is not a Timothy database; it was left untouched."
        ) from exc
    except apsw.FullError as exc:
        raise StoreError(f"The disk holding {path} is full; nothing was saved.") from exc
    except apsw.ReadOnlyError as exc:
        raise StoreError(f"{path} is read-only; nothing was saved.") from exc
    except apsw.CantOpenError as exc:
        raise StoreError(
            f"Cannot open {path}: check that its folder exists and is writable."
        ) from exc
    except apsw.IOError as exc:
        raise StoreError(f"Reading or writing {path} failed at the disk: {exc}") from exc


def scalar(conn: apsw.Connection, sql: str, params: Any = ()) -> Any:
    """The first column of the first row (None when there is no row)."""
    rows = conn.execute(sql, params).fetchall()
    return rows[0][0] if rows else None


class Database:
    """The memory database: a connection per thread, write transactions, migrations."""

    def __init__(
        self,
        path: Path | str,
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        migrations: Sequence[Migration] = MIGRATIONS,
    ) -> None:
        self.path = Path(path)
        self.busy_timeout_ms = busy_timeout_ms
        self.migrations = tuple(migrations)
        self._local = threading.local()
        self._connections: list[apsw.Connection] = []
        self._connections_lock = threading.Lock()
        self._check_header()
        try:
            self._migrate(self.connection())
        except BaseException:
            self.close()
            raise

    # -- connections -------------------------------------------------------------------

    def _check_header(self) -> None:
        """Refuse, without touching it, a file that is not SQLite (random bytes, a PDF, ...)."""
        try:
            with self.path.open("rb") as handle:
                header = handle.read(len(SQLITE_HEADER))
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StoreError(f"Cannot read {self.path}: {exc.strerror}.") from exc
        if header and header != SQLITE_HEADER:
            raise StoreError(
                f"{self.path} is damaged or is not a Timothy database; it was left untouched."
            )

    def connect(self) -> apsw.Connection:
        """A new connection with sqlite-vec loaded and the pragmas every connection needs."""
        with sqlite_errors(self.path):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = apsw.Connection(str(self.path))
            conn.set_busy_timeout(self.busy_timeout_ms)
            conn.enable_load_extension(True)
            conn.load_extension(sqlite_vec.loadable_path())
            conn.enable_load_extension(False)
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchall()[0][0]
            if str(mode).lower() != "wal":
                log.warning("journal mode is %s, not wal", mode)
            # FULL: a commit that returned survives a crash of this process or the machine.
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
        with self._connections_lock:
            self._connections.append(conn)
        return conn

    def connection(self) -> apsw.Connection:
        """This thread's connection (made on first use)."""
        conn: apsw.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self.connect()
            self._local.conn = conn
        return conn

    def close(self) -> None:
        with self._connections_lock:
            connections, self._connections = self._connections, []
        for conn in connections:
            with contextlib.suppress(apsw.Error):
                conn.close()
        self._local = threading.local()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transactions ------------------------------------------------------------------

    @contextlib.contextmanager
    def write(self) -> Iterator[apsw.Connection]:
        """A write transaction on this thread's connection (a savepoint when nested).

        BEGIN IMMEDIATE takes the write lock up front, so a busy database waits on the busy
        timeout instead of failing half-way through.
        """
        conn = self.connection()
        with sqlite_errors(self.path):
            if conn.in_transaction:
                with conn:  # apsw: a savepoint, released or rolled back
                    yield conn
                return
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @contextlib.contextmanager
    def read(self) -> Iterator[apsw.Connection]:
        """This thread's connection, with SQLite errors turned into StoreErrors."""
        conn = self.connection()
        with sqlite_errors(self.path):
            yield conn

    # -- meta --------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        with self.read() as conn:
            rows = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchall()
        return str(rows[0][0]) if rows else None

    def set_meta(self, key: str, value: str | None) -> None:
        with self.write() as conn:
            if value is None:
                conn.execute("DELETE FROM meta WHERE key = ?", (key,))
            else:
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES (?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (key, value),
                )

    # -- migrations --------------------------------------------------------------------

    def schema_version(self) -> int:
        with self.read() as conn:
            return int(scalar(conn, "PRAGMA user_version"))

    def _migrate(self, conn: apsw.Connection) -> None:
        """Run the migrations the file has not had yet, in order, each in its own write
        transaction with its user_version bump: a migration that fails leaves the file as
        the one before it left it."""
        latest = len(self.migrations)
        version = self.schema_version()
        if version > latest:
            raise StoreError(
                f"{self.path} was written by a newer Timothy (schema {version}; this version "
                f"reads up to {latest}). Update Timothy to open it; the file was left "
                "untouched."
            )
        while version < latest:
            try:
                with self.write():
                    # Another process may have migrated while we waited for the lock.
                    version = int(scalar(conn, "PRAGMA user_version"))
                    if version >= latest:
                        break
                    apply_migration(conn, self.migrations[version])
                    if not conn.in_transaction:
                        raise RuntimeError("the migration ended the transaction it runs in")
                    conn.execute(f"PRAGMA user_version = {version + 1}")
            except StoreError:
                raise
            except Exception as exc:
                raise StoreError(
                    f"Upgrading {self.path} to schema {version + 1} failed ({exc}); the file "
                    f"was left at schema {version}. Please report this."
                ) from exc
            log.info("migrated %s to schema %d", self.path, version + 1)
            version += 1
