"""One SQLite file through apsw: sqlite-vec loaded, WAL, a busy timeout, migrated on open.

A damaged file is never written to. Damage is found by `PRAGMA quick_check` when the store
opens (on a thread, so a big store starts as fast as a small one; the first write waits for
it), by `integrity_check` in `timothy doctor` and on every backup, and by any corruption
error SQLite raises along the way. Once damage is known the store only reads: every write is
refused with a DamagedStoreError that says how to restore, new connections open read-only,
and closing never checkpoints the log into the file.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import logging
import os
import struct
import threading
import weakref
from collections.abc import Callable, Iterator, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any

import apsw

from timothy.errors import DamagedStoreError, DatabaseLockedError, StoreError
from timothy.store.backup_folder import damaged_message
from timothy.store.migrations import MIGRATIONS, Migration, apply_migration

log = logging.getLogger(__name__)

SQLITE_HEADER = b"SQLite format 3\x00"
HEADER_SIZE = 100
DEFAULT_BUSY_TIMEOUT_MS = 5_000
# FTS5 writes each transaction's terms as a segment of their own and merges segments only in
# proportion to the data written: a store written a memory at a time held 13-16 segments, and
# a query looks each of its terms up in every one (a 1k store's turn spent 3.7 ms in SQL with
# 15, 2.4 with one). So a write that changed rows also merges up to this many pages of any
# two segments of a level (FTS5's 'merge' with 'usermerge' 2): 2 segments stay, for ~0.05 ms.
TEXT_INDEX_MERGE_PAGES = 16
TEXT_INDEX_MERGE_LEAST = 2

# Called with the database, its schema version and the version it is about to be migrated
# to, before the first migration of an existing store (the store makes a backup there).
BeforeMigration = Callable[["Database", int, int], None]


@functools.cache
def vec_extension_path() -> str:
    """The sqlite-vec loadable library, as SQLite's `load_extension` takes it (no suffix).

    Found beside the `sqlite_vec` package without importing it: its `__init__` imports
    numpy (0.2 s), which opening a store does not need, so the window's start does not wait
    for it (numpy loads on the worker that first searches or embeds). The package's own
    `loadable_path()` is the same folder and name; it is asked only if the package cannot be
    located that way.
    """
    spec = importlib.util.find_spec("sqlite_vec")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    if not folders:
        import sqlite_vec

        return str(sqlite_vec.loadable_path())
    return os.path.normpath(os.path.join(folders[0], "vec0"))


class DamageCheck(StrEnum):
    """When the open-time `quick_check` runs."""

    BACKGROUND = "background"  # on a thread; the first write waits for its answer
    NOW = "now"  # before the store is returned (the command line, which lives briefly)
    OFF = "off"  # not at all (a caller that runs its own, fuller check)


@contextlib.contextmanager
def sqlite_errors(
    path: Path | str, on_damage: Callable[[str], None] | None = None
) -> Iterator[None]:
    """Turn SQLite's failures into StoreErrors that say what happened in plain words.

    A corruption error also calls `on_damage` with SQLite's own words, so the database
    knows it is damaged from then on.
    """
    try:
        yield
    except (apsw.BusyError, apsw.LockedError) as exc:
        raise DatabaseLockedError(
            f"The memory database {path} is in use by another program; "
            "close it (or wait a moment) and try again."
        ) from exc
    except (apsw.NotADBError, apsw.CorruptError) as exc:
        if on_damage is not None:
            on_damage(str(exc) or type(exc).__name__)
        raise DamagedStoreError(damaged_message(Path(path))) from exc
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


def make_folder(folder: Path) -> None:
    """Create a data folder (and its parents), or say in plain words which one cannot be."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        blocker = folder
        while not blocker.exists() and blocker != blocker.parent:
            blocker = blocker.parent
        if blocker.exists() and not blocker.is_dir():
            raise StoreError(
                f"Cannot create the data folder {folder}: {blocker} is a file, not a folder."
            ) from exc
        raise StoreError(
            f"Cannot create the data folder {folder} in {blocker}: {exc.strerror or exc}."
        ) from exc
    if not folder.is_dir():
        raise StoreError(f"Cannot use the data folder {folder}: it is a file, not a folder.")


def read_header(path: Path) -> bytes:
    """The file's first 100 bytes, read as plain bytes (b"" when there is no file)."""
    try:
        with path.open("rb") as handle:
            return handle.read(HEADER_SIZE)
    except FileNotFoundError:
        return b""
    except OSError as exc:
        raise StoreError(f"Cannot read {path}: {exc.strerror}.") from exc


def header_schema_version(header: bytes) -> int:
    """`PRAGMA user_version` as the header holds it (bytes 60-63, big-endian)."""
    return int(struct.unpack(">I", header[60:64])[0]) if len(header) >= 64 else 0


def header_in_wal_mode(header: bytes) -> bool:
    """Bytes 18 and 19 are 2 once a file is in WAL mode."""
    return len(header) >= 20 and header[18] == 2 and header[19] == 2


def newer_message(path: Path, version: int, latest: int) -> str:
    return (
        f"{path} was written by a newer Timothy (schema {version}; this version reads up to "
        f"{latest}). Update Timothy to open it; the file was left untouched."
    )


def scalar(conn: apsw.Connection, sql: str, params: Any = ()) -> Any:
    """The first column of the first row (None when there is no row)."""
    rows = conn.execute(sql, params).fetchall()
    return rows[0][0] if rows else None


def first_problem(problems: Sequence[str]) -> str:
    """The first thing SQLite's quick_check or integrity_check found, on one line for a
    message: a problem comes as "*** in database main ***" then one line per page."""
    if not problems:
        return "no answer"
    lines = [line.strip() for line in problems[0].splitlines()]
    shown = [line for line in lines if line and not line.startswith("***")]
    return shown[0] if shown else "no detail"


class _ThreadEnd:
    """Kept in a `threading.local` of a Python thread that opened a connection: the thread's
    end drops it (its thread state takes its locals along), and it has the connection
    closed then, on that thread."""

    __slots__ = ("_conn", "_database", "_thread")

    def __init__(self, database: Database, thread: int, conn: apsw.Connection) -> None:
        self._database = weakref.ref(database)
        self._thread = thread
        self._conn = conn

    def __del__(self) -> None:
        database = self._database()
        if database is not None:
            database._thread_ended(self._thread, self._conn)


class Database:
    """The memory database: a connection per thread, write transactions, migrations, and
    whether the file is known to be damaged."""

    def __init__(
        self,
        path: Path | str,
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        check: DamageCheck | str = DamageCheck.BACKGROUND,
        before_migration: BeforeMigration | None = None,
        migrations: Sequence[Migration] = MIGRATIONS,
    ) -> None:
        self.path = Path(path)
        self.busy_timeout_ms = busy_timeout_ms
        self.migrations = tuple(migrations)
        # By thread ident, not `threading.local`: the app's pool threads are Qt's, and
        # PySide gives such a thread a new Python thread state (and so an empty
        # `threading.local`) for every task it runs. Each task then made a connection of its
        # own, kept open in `_connections` with its page cache: ~1 MB each, 50 more after
        # paging Browse through 10k memories. An ident is never shared by two live threads;
        # a thread that starts after another ended may take over its ident and connection.
        # A Python thread's connection is closed when the thread ends (`_ThreadEnd`, kept in
        # `_thread_ends`): else it stayed open until another thread took over the ident.
        self._by_thread: dict[int, apsw.Connection] = {}
        self._thread_ends = threading.local()
        self._connections: list[apsw.Connection] = []
        self._connections_lock = threading.Lock()
        self._damage: str | None = None
        self._damage_lock = threading.Lock()
        self._checked = threading.Event()
        self._check_thread: threading.Thread | None = None
        self._check_conn: apsw.Connection | None = None
        self._damage_listeners: list[Callable[[str], None]] = []
        self._check = DamageCheck(check)
        self._before_migration = before_migration
        self._closed_because: str | None = None  # set while the file is being swapped
        # The file's FTS5 tables, found at the first write that changes rows (and again
        # after a migration); those whose 'usermerge' is already set.
        self._text_indexes: tuple[str, ...] | None = None
        self._merge_set: set[str] = set()
        try:
            self._open(self._check, before_migration)
        except BaseException:
            self.close()
            raise

    # -- opening -----------------------------------------------------------------------

    def _open(self, check: DamageCheck, before_migration: BeforeMigration | None) -> None:
        """Check first, touch nothing until the file is known to be ours, sound and not newer."""
        latest = len(self.migrations)
        make_folder(self.path.parent)
        header = read_header(self.path)
        if header and not header.startswith(SQLITE_HEADER):
            raise StoreError(
                f"{self.path} is damaged or is not a Timothy database; it was left untouched."
            )
        # The header's copy of the version can lag behind the log (WAL); SQLite's answer
        # below is the real one, and both come before anything could be written.
        if header_schema_version(header) > latest:
            raise StoreError(newer_message(self.path, header_schema_version(header), latest))
        version = self.schema_version()
        if version > latest:
            raise StoreError(newer_message(self.path, version, latest))
        existing = bool(header)
        if existing and version == 0:
            # Schema 0 with tables: another program's database (every Timothy migration
            # commits with its version bump, so a Timothy file at 0 holds no table).
            foreign = self._tables()
            if foreign:
                shown = ", ".join(foreign[:5]) + (", ..." if len(foreign) > 5 else "")
                raise StoreError(
                    f"{self.path} is not a Timothy database (it holds other tables: {shown}); "
                    "it was left untouched."
                )
        # Opening writes to the file itself only to switch it to WAL or to migrate it: then
        # the check must have answered first. Otherwise it may run beside the app's start.
        must_write = version < latest or not header_in_wal_mode(header)
        if not existing or check is DamageCheck.OFF:
            self._checked.set()
        elif check is DamageCheck.NOW or must_write:
            self._checked.set()
            self.quick_check()
        else:
            self._start_background_check()
        if self.damaged:
            if version < latest:
                raise DamagedStoreError(damaged_message(self.path))
            return
        if not header_in_wal_mode(header):
            with self.read() as conn:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchall()[0][0]
            if str(mode).lower() != "wal":
                log.warning("journal mode is %s, not wal", mode)
        if existing and version < latest and before_migration is not None:
            before_migration(self, version, latest)
        self._migrate(self.connection())

    # -- damage ------------------------------------------------------------------------

    @property
    def damage(self) -> str | None:
        """What is known to be wrong with the file (SQLite's words), or None."""
        return self._damage

    @property
    def damaged(self) -> bool:
        return self._damage is not None

    def mark_damaged(self, detail: str) -> None:
        """From now on: read only, refuse every write, never checkpoint into the file."""
        with self._damage_lock:
            if self._damage is not None:
                return
            self._damage = detail
            listeners = list(self._damage_listeners)
        log.error("%s is damaged: %s; it is read only from now on", self.path, detail)
        for listener in listeners:
            self._tell(listener, detail)

    def on_damage(self, listener: Callable[[str], None]) -> None:
        """Call `listener` once with what is wrong, on whichever thread finds the damage (at
        once when it is already known): the app shows its banner from here."""
        with self._damage_lock:
            self._damage_listeners.append(listener)
            known = self._damage
        if known is not None:
            self._tell(listener, known)

    @staticmethod
    def _tell(listener: Callable[[str], None], detail: str) -> None:
        try:
            listener(detail)
        except Exception:  # a listener must not stop the refusal
            log.exception("damage listener failed")

    def damaged_error(self) -> DamagedStoreError:
        return DamagedStoreError(damaged_message(self.path))

    def read_only_connection(self) -> apsw.Connection:
        """A read-only connection that can never write to the file, not even on close."""
        self._refuse_while_closed()
        conn = apsw.Connection(str(self.path), flags=apsw.SQLITE_OPEN_READONLY)
        conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
        conn.set_busy_timeout(self.busy_timeout_ms)
        return conn

    def _run_check(self, pragma: str, conn: apsw.Connection | None = None) -> str | None:
        """Run `quick_check` or `integrity_check`; the first problem found, or None."""
        own = conn is None
        try:
            with sqlite_errors(self.path, lambda words: self.mark_damaged(f"{pragma}: {words}")):
                if conn is None:
                    conn = self.read_only_connection()
                rows = conn.execute(f"PRAGMA {pragma}(10)").fetchall()
        except DamagedStoreError:
            return self._damage
        finally:
            if own and conn is not None:
                with contextlib.suppress(apsw.Error):
                    conn.close()
        problems = [str(row[0]) for row in rows if str(row[0]) != "ok"]
        if not problems:
            return None
        detail = f"{pragma}: {first_problem(problems)}"
        self.mark_damaged(detail)
        return detail

    def quick_check(self) -> str | None:
        """SQLite's quick_check of the whole file (every page read, indexes not matched
        against their tables): what is wrong, or None when it is sound."""
        return self._run_check("quick_check")

    def integrity_check(self) -> str | None:
        """SQLite's full integrity_check (also every index against its table)."""
        return self._run_check("integrity_check")

    def _start_background_check(self) -> None:
        conn = self.read_only_connection()
        self._check_conn = conn

        def run() -> None:
            try:
                self._run_check("quick_check", conn)
            except StoreError as exc:  # busy, unreadable: not known to be damaged
                log.warning("the start-up check of %s did not finish: %s", self.path, exc)
            except apsw.InterruptError:
                pass  # closed while checking
            except Exception:
                log.exception("the start-up check of %s failed", self.path)
            finally:
                self._check_conn = None
                with contextlib.suppress(apsw.Error):
                    conn.close()
                self._checked.set()

        self._check_thread = threading.Thread(target=run, name="timothy-store-check", daemon=True)
        self._check_thread.start()

    def wait_for_check(self, timeout: float | None = None) -> str | None:
        """Wait for the open-time check; what is known to be wrong, or None."""
        self._checked.wait(timeout)
        return self._damage

    # -- connections -------------------------------------------------------------------

    def connect(self) -> apsw.Connection:
        """A new connection with sqlite-vec loaded and the pragmas every connection needs
        (read-only, and never checkpointing on close, once the file is known damaged)."""
        self._refuse_while_closed()
        make_folder(self.path.parent)
        with sqlite_errors(self.path, self.mark_damaged):
            if self.damaged:
                conn = apsw.Connection(str(self.path), flags=apsw.SQLITE_OPEN_READONLY)
                conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
            else:
                conn = apsw.Connection(str(self.path))
            conn.set_busy_timeout(self.busy_timeout_ms)
            conn.enable_load_extension(True)
            conn.load_extension(vec_extension_path())
            conn.enable_load_extension(False)
            # FULL: a commit that returned survives a crash of this process or the machine.
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
        with self._connections_lock:
            self._connections.append(conn)
        return conn

    def connection(self) -> apsw.Connection:
        """This thread's connection (made on first use)."""
        thread = threading.get_ident()
        conn = self._by_thread.get(thread)
        if conn is None:
            conn = self.connect()
            with self._connections_lock:
                self._by_thread[thread] = conn
            self._close_at_thread_end(thread, conn)
        return conn

    def _close_at_thread_end(self, thread: int, conn: apsw.Connection) -> None:
        """Have `conn` closed when the calling thread ends, if Python can see that end.

        A thread Python did not start (Qt's pool threads) runs each task under a new Python
        thread state, which drops its locals after every task: watched that way, its
        connection would be closed and made again for every task. Such a thread keeps its
        connection by ident until the database closes (the app's pool never retires one).
        """
        if isinstance(threading.current_thread(), threading._DummyThread):
            return
        self._thread_ends.watch = _ThreadEnd(self, thread, conn)

    def _thread_ended(self, thread: int, conn: apsw.Connection) -> None:
        """The Python thread `thread` has ended: close the connection it opened, unless the
        database has closed it meanwhile."""
        with self._connections_lock:
            if self._by_thread.get(thread) is conn:
                del self._by_thread[thread]
            if conn not in self._connections:
                return
            self._connections.remove(conn)
        self._close_connection(conn)

    def _close_connection(self, conn: apsw.Connection) -> None:
        with contextlib.suppress(apsw.Error):
            if self.damaged:
                # The last connection to close would copy the log into the damaged file.
                conn.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
            conn.close()

    def close(self) -> None:
        checking = self._check_conn
        if checking is not None:
            with contextlib.suppress(apsw.Error):
                checking.interrupt()
        if self._check_thread is not None:
            self._check_thread.join()
            self._check_thread = None
        self._checked.set()
        with self._connections_lock:
            connections, self._connections = self._connections, []
            self._by_thread = {}
        for conn in connections:
            self._close_connection(conn)

    def _refuse_while_closed(self) -> None:
        if self._closed_because is not None:
            raise StoreError(self._closed_because)

    @contextlib.contextmanager
    def closed_for(self, reason: str) -> Iterator[None]:
        """Close every connection, run the block (which may replace the file), then open the
        file at `path` again as at first: checked, migrated, damage forgotten if it is gone.

        Meanwhile any thread asking for a connection gets a StoreError saying `reason`, so
        nothing holds the file open or writes to it. The file is opened again even when the
        block fails (then it is the file that was there before, when the block put it back).
        """
        self._closed_because = reason
        try:
            self.close()
            yield
        finally:
            self._reopen()

    def _reopen(self) -> None:
        with self._damage_lock:
            self._damage = None
        self._checked = threading.Event()
        self._check_thread = None
        self._check_conn = None
        with self._connections_lock:
            self._by_thread = {}
        self._closed_because = None
        try:
            self._open(self._check, self._before_migration)
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- transactions ------------------------------------------------------------------

    @contextlib.contextmanager
    def write(self) -> Iterator[apsw.Connection]:
        """A write transaction on this thread's connection (a savepoint when nested).

        BEGIN IMMEDIATE takes the write lock up front, so a busy database waits on the busy
        timeout instead of failing half-way through. The first write waits for the
        open-time check, and no write starts on a file known to be damaged.
        """
        conn = self.connection()
        if not conn.in_transaction:
            self._checked.wait()
        if self.damaged:
            raise self.damaged_error()
        with sqlite_errors(self.path, self.mark_damaged):
            if conn.in_transaction:
                with conn:  # apsw: a savepoint, released or rolled back
                    yield conn
                return
            changes = conn.total_changes()
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                if conn.total_changes() != changes and not self.damaged:
                    self._merge_text_indexes(conn)
            except BaseException:
                if conn.in_transaction:
                    with contextlib.suppress(apsw.Error):
                        conn.execute("ROLLBACK")
                raise
            if self.damaged:  # found by a read inside this transaction, or by the check
                conn.execute("ROLLBACK")
                raise self.damaged_error()
            conn.execute("COMMIT")

    def _text_index_names(self, conn: apsw.Connection) -> tuple[str, ...]:
        """The file's FTS5 tables (found once, and again after a migration)."""
        tables = self._text_indexes
        if tables is None:
            tables = self._text_indexes = tuple(
                str(row[0])
                for row in conn.execute(
                    "SELECT name FROM sqlite_schema WHERE type = 'table' "
                    "AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts5%'"
                )
            )
        return tables

    def compact_text_indexes(self) -> None:
        """Rewrite each text index as one segment (FTS5's 'optimize'), after a bulk write
        has left it in many: 0.1 s for the stemmed index of 100k memories, 0.6 s for the
        words Browse searches as you type."""
        with self.write() as conn:
            for table in self._text_index_names(conn):
                conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")

    def _merge_text_indexes(self, conn: apsw.Connection) -> None:
        """Inside a write that changed rows: merge a little of each text index's segments
        (see TEXT_INDEX_MERGE_PAGES); nothing to do costs a read of its structure. Only an
        upkeep: an index it cannot merge (gone, say) never fails the write."""
        try:
            with conn:  # a savepoint: a failed merge leaves the write as it was
                self._merge_each(conn)
        except apsw.SQLError as exc:
            log.warning("could not merge the text indexes of %s: %s", self.path, exc)
            self._text_indexes = None
            self._merge_set = set()

    def _merge_each(self, conn: apsw.Connection) -> None:
        for table in self._text_index_names(conn):
            if table not in self._merge_set:
                # Kept in the index's own config: set once per file (older Timothys keep it).
                current = scalar(conn, f"SELECT v FROM {table}_config WHERE k = 'usermerge'")
                if current != TEXT_INDEX_MERGE_LEAST:
                    conn.execute(
                        f"INSERT INTO {table} ({table}, rank) VALUES ('usermerge', ?)",
                        (TEXT_INDEX_MERGE_LEAST,),
                    )
                self._merge_set.add(table)
            conn.execute(
                f"INSERT INTO {table} ({table}, rank) VALUES ('merge', ?)",
                (TEXT_INDEX_MERGE_PAGES,),
            )

    @contextlib.contextmanager
    def read(self) -> Iterator[apsw.Connection]:
        """This thread's connection, with SQLite errors turned into StoreErrors."""
        conn = self.connection()
        with sqlite_errors(self.path, self.mark_damaged):
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

    def meta_items(self) -> list[tuple[str, str]]:
        """Every meta key and value, by key (what copying a store carries over)."""
        with self.read() as conn:
            return [
                (str(key), str(value))
                for key, value in conn.execute("SELECT key, value FROM meta ORDER BY key")
            ]

    # -- migrations --------------------------------------------------------------------

    def schema_version(self) -> int:
        with self.read() as conn:
            return int(scalar(conn, "PRAGMA user_version"))

    def _tables(self) -> list[str]:
        """The file's own tables and views, by name (SQLite's internal ones left out)."""
        with self.read() as conn:
            return [
                str(row[0])
                for row in conn.execute(
                    "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') "
                    "AND name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY name"
                )
            ]

    def _migrate(self, conn: apsw.Connection) -> None:
        """Run the migrations the file has not had yet, in order, each in its own write
        transaction with its user_version bump: a migration that fails leaves the file as
        the one before it left it."""
        latest = len(self.migrations)
        version = self.schema_version()
        if version > latest:
            raise StoreError(newer_message(self.path, version, latest))
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
        # A migration may have made or remade a text index (with its config afresh).
        self._text_indexes = None
        self._merge_set = set()
