"""One PostgreSQL database through psycopg 3: a connection pool, transactions, meta, migrations.

Each thread borrows its own pooled connection for a read or a write (the recall legs run side
by side, each on its own), and keeps it while the block runs, so a read inside a write sees
what the write has done and nested writes become savepoints. Connections are in autocommit
mode; `write()` opens a real transaction (`conn.transaction()`).

The server's schema is versioned like the SQLite file's (`timothy_schema.version`, numbered
migrations); a server whose schema is newer than this app is refused with a plain message and
left untouched, and migrations run under an advisory lock, so two machines starting at once
upgrade a server once.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

import psycopg
import psycopg.errors
from pgvector.psycopg import register_vector
from psycopg.abc import Buffer
from psycopg.conninfo import conninfo_to_dict, make_conninfo
from psycopg.types.string import StrBinaryDumper, StrDumperUnknown
from psycopg_pool import ConnectionPool, PoolTimeout

from timothy.errors import StoreError, StoreUnreachableError
from timothy.store.postgres.link import ServerLink
from timothy.store.postgres.migrations import MIGRATIONS, PgMigration

log = logging.getLogger(__name__)

T = TypeVar("T")

# pg_advisory_xact_lock key held while migrating ("timothy1" as a number).
MIGRATION_LOCK = 0x74696D6F74687931
DEFAULT_CONNECT_TIMEOUT_S = 5
POOL_SIZE = 8
# A store that may start without its server (the app's) waits this long for the first
# connection before it opens from this machine: a host that does not answer at all (no
# refusal) would otherwise hold the caller for the whole connect timeout, and the app's
# window with it. A server that answers later is reached by the change feed.
FIRST_ANSWER_WAIT_S = 0.5


def safe_location(conninfo: str, *, with_options: bool = True) -> str:
    """The server as the owner reads it: postgresql://user@host:port/db, never a password
    (with the connection's options after it, unless `with_options` is False: the address alone,
    as `timothy store password` takes it)."""
    try:
        parts = conninfo_to_dict(conninfo)
    except psycopg.ProgrammingError:
        return "postgresql://(unreadable address)"
    user = str(parts.get("user") or "")
    host = str(parts.get("host") or "localhost")
    port = str(parts.get("port") or "")
    dbname = str(parts.get("dbname") or "")
    where = f"{host}:{port}" if port else str(host)
    options = str(parts.get("options") or "")
    # A schema chosen in the options is part of where the memory is.
    suffix = f" ({options.strip()})" if options.strip() else ""
    address = f"postgresql://{user + '@' if user else ''}{where}/{dbname}"
    return address + suffix if with_options else address


# What a server says when it turns a login away: it answered, so "check that it is running"
# would mislead, and retrying alone will not mend it. (Its words: a server whose messages
# are in another language is reported as not answering, as before.)
PASSWORD_REFUSALS = ("password authentication failed",)
ACCESS_REFUSALS = ("does not exist", "no pg_hba.conf entry", "permission denied for database")
NO_PASSWORD = "no password supplied"


def login_refusal(exc: BaseException) -> str | None:
    """Why the server turned this machine's login away, in its words; None when it only did
    not answer (down, unreachable, starting up, too many clients)."""
    text = str(exc)
    if NO_PASSWORD in text:
        return "it asks for a password and none is stored"
    if any(known in text for known in PASSWORD_REFUSALS + ACCESS_REFUSALS):
        said = text.rsplit("FATAL:", 1)[-1].strip()
        return said.splitlines()[0].rstrip(".") if said else None
    return None


def refusal_message(conninfo: str, why: str) -> str:
    """The owner's words for a refused login, with what to do about it."""
    address = safe_location(conninfo, with_options=False)
    if any(known in why for known in ACCESS_REFUSALS):
        advice = (
            "Check the user and the database in the address (Settings ▸ Storage, or --store); "
            "the server's admin can give this user access."
        )
    else:
        advice = (
            "Store this machine's password for it with `timothy store password "
            f"{address}` (or in Settings ▸ Storage)."
        )
    return f"The memory server {safe_location(conninfo)} refused this machine: {why}. {advice}"


def newer_message(location: str, version: int, latest: int) -> str:
    return (
        f"The memory database at {location} was set up by a newer Timothy (schema {version}; "
        f"this version reads up to {latest}). Update Timothy on this machine to use it; the "
        "server was left untouched."
    )


# PostgreSQL's text cannot hold NUL (a SQLite file can): a NUL in any text sent to the
# server (a memory, a message, a title) becomes U+FFFD, shown where it stood, rather than
# an error that fails the write (and with it the turn).
NUL_STANDIN = "\ufffd"


class _NulSafeText(StrDumperUnknown):
    def dump(self, obj: str) -> Buffer | None:
        return super().dump(obj.replace("\x00", NUL_STANDIN) if "\x00" in obj else obj)


class _NulSafeBinaryText(StrBinaryDumper):
    def dump(self, obj: str) -> Buffer | None:
        return super().dump(obj.replace("\x00", NUL_STANDIN) if "\x00" in obj else obj)


def register_text(conn: psycopg.Connection[Any]) -> None:
    """Text parameters on `conn` without NUL (see NUL_STANDIN)."""
    conn.adapters.register_dumper(str, _NulSafeText)
    conn.adapters.register_dumper(str, _NulSafeBinaryText)


class PgDatabase:
    """The shared database: pooled connections, transactions, meta and the schema version."""

    def __init__(
        self,
        conninfo: str,
        *,
        connect_timeout: int = DEFAULT_CONNECT_TIMEOUT_S,
        migrations: Sequence[PgMigration] = MIGRATIONS,
        pool_size: int = POOL_SIZE,
        link: ServerLink | None = None,
        start_offline: bool = False,
    ) -> None:
        """Connect and migrate. With `start_offline`, a server that does not answer is not an
        error: the database opens unconnected (`ready` False, the link lost), and is migrated
        when `reconnected()` finds the server again."""
        self._connect_timeout = connect_timeout
        self.conninfo = self._with_defaults(conninfo)
        self.location = safe_location(self.conninfo)
        self.migrations = tuple(migrations)
        self._local = threading.local()
        self._backends: set[int] = set()
        self._backends_lock = threading.Lock()
        self.link = link if link is not None else ServerLink(latching=False)
        self.ready = False  # migrated: the server's schema is known to suit this app
        try:
            with self.errors():
                if start_offline:
                    self._migrate_in_time(FIRST_ANSWER_WAIT_S)
                else:
                    self._migrate()
            self.ready = True
        except StoreUnreachableError:
            if not start_offline:
                raise
        self.pool: ConnectionPool[psycopg.Connection[tuple[Any, ...]]] = ConnectionPool(
            lambda: self.conninfo,  # read at each connection: see renew_conninfo
            min_size=1,
            max_size=pool_size,
            kwargs={"autocommit": True},
            configure=self._configure,
            check=ConnectionPool.check_connection,
            timeout=max(connect_timeout, 2),
            open=False,
            name="timothy-store",
        )
        if not self.ready:
            self.pool.open(wait=False)  # it fills itself once the server answers
            return
        with self.errors():
            self.pool.open(wait=True, timeout=max(connect_timeout * 2, 5))

    def _with_defaults(self, conninfo: str) -> str:
        params: dict[str, Any] = {"application_name": "timothy"}
        if "connect_timeout" not in conninfo_to_dict(conninfo):
            params["connect_timeout"] = self._connect_timeout
        return make_conninfo(conninfo, **params)

    def renew_conninfo(self, conninfo: str) -> None:
        """The same server's address read again (the owner stored another password): every
        connection made from now on uses it. Another server is ignored (a new storage
        choice is opened at the next start)."""
        renewed = self._with_defaults(conninfo)
        if safe_location(renewed) != self.location:
            log.warning("ignored an address for another memory server than this store's")
            return
        self.conninfo = renewed

    def reconnected(self) -> None:
        """The server answers again (the change feed reached it): migrate it if this store
        opened without it, and let calls through again (the store tells its listeners
        once what was kept here is handed over: `ServerLink.regained`)."""
        if not self.ready:
            with self.errors(latch=False):
                self._migrate()
            self.ready = True
        if not self.link.reachable:
            # The pool's connections died with the server: replace them now, not one
            # failed borrow at a time.
            with contextlib.suppress(Exception):
                self.pool.check()
        self.link.let_through()

    # -- errors ------------------------------------------------------------------------

    @contextlib.contextmanager
    def errors(self, *, latch: bool = True) -> Iterator[None]:
        """The server's failures as StoreErrors that say what happened in plain words. A
        server that does not answer is noted on the link (see link.py)."""
        try:
            yield
        except (PoolTimeout, psycopg.OperationalError) as exc:
            if isinstance(exc, psycopg.errors.QueryCanceled):
                raise TimeoutError("stopped at the deadline") from exc
            refused = login_refusal(exc)
            if latch and self.link.latching:
                self.link.lost(_first_line(exc), refusal=refused)
            if refused is not None:
                raise StoreUnreachableError(refusal_message(self.conninfo, refused)) from exc
            raise StoreUnreachableError(
                f"The memory server {self.location} did not answer ({_first_line(exc)}). "
                "Check that it is running and reachable from this machine."
            ) from exc
        except psycopg.errors.InsufficientPrivilege as exc:
            raise StoreError(
                f"The memory server {self.location} refused this user: {_first_line(exc)}."
            ) from exc

    def _refuse_while_away(self) -> None:
        """Fail at once while the server is known to be away (the change feed retries)."""
        if self.link.latched and self.link.refusal is not None:
            raise StoreUnreachableError(
                f"{refusal_message(self.conninfo, self.link.refusal)} Retrying in the background."
            )
        if self.link.latched or not self.ready:
            raise StoreUnreachableError(
                f"The memory server {self.location} did not answer (out of reach; "
                "retrying in the background)."
            )

    # -- connections -------------------------------------------------------------------

    def _configure(self, conn: psycopg.Connection[Any]) -> None:
        register_vector(conn)
        register_text(conn)
        with self._backends_lock:
            self._backends.add(conn.info.backend_pid)

    def own_backends(self) -> set[int]:
        """The server processes serving this machine's pool (its own writes' announcers)."""
        with self._backends_lock:
            return set(self._backends)

    def schema(self) -> str:
        """The schema the store's tables live in (the first of the search path)."""
        with self.read() as conn:
            row = conn.execute("SELECT current_schema()").fetchone()
        return "public" if row is None or row[0] is None else str(row[0])

    def connect(self) -> psycopg.Connection[tuple[Any, ...]]:
        """A connection of its own, outside the pool (LISTEN, long-held locks)."""
        self._refuse_while_away()
        with self.errors():
            conn = psycopg.connect(self.conninfo, autocommit=True)
        register_vector(conn)
        register_text(conn)
        return conn

    def ask(self, question: Callable[[psycopg.Connection[tuple[Any, ...]]], T]) -> T:
        """`question` answered on a connection of its own, made now even while the link
        says the server is away (a write whose reply was lost asks whether it landed), and
        closed after. Leaves the link as it is: the change feed brings the store back."""
        with self.errors(latch=False), psycopg.connect(self.conninfo, autocommit=True) as conn:
            register_vector(conn)
            register_text(conn)
            return question(conn)

    @contextlib.contextmanager
    def _borrow(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        held: psycopg.Connection[tuple[Any, ...]] | None = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        self._refuse_while_away()
        with self.errors(), self.pool.connection() as conn:
            self._local.conn = conn
            try:
                yield conn
            finally:
                self._local.conn = None

    @contextlib.contextmanager
    def read(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        """This thread's connection (the write's own, inside a write)."""
        with self._borrow() as conn, self.errors():
            yield conn

    @contextlib.contextmanager
    def write(self) -> Iterator[psycopg.Connection[tuple[Any, ...]]]:
        """A transaction on this thread's connection (a savepoint when nested)."""
        with self._borrow() as conn, self.errors(), conn.transaction():
            yield conn

    @property
    def in_transaction(self) -> bool:
        held: psycopg.Connection[tuple[Any, ...]] | None = getattr(self._local, "conn", None)
        return held is not None and held.info.transaction_status != 0

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.pool.close()

    def __enter__(self) -> PgDatabase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def exclusive(self, name: str) -> Iterator[bool]:
        """Whether this machine got the server-wide lock `name` (an advisory lock held on a
        connection of its own for as long as the block runs; the server lets it go if this
        machine vanishes). Never waits: a lock another machine holds gives False."""
        key = f"timothy:{self.schema()}:{name}"
        conn = self.connect()
        try:
            row = conn.execute("SELECT pg_try_advisory_lock(hashtext(%s))", (key,)).fetchone()
            yield bool(row and row[0])
        finally:
            with contextlib.suppress(psycopg.Error):
                conn.close()  # ends the session, and with it the lock

    # -- meta --------------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        with self.read() as conn:
            row = conn.execute("SELECT value FROM meta WHERE key = %s", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str | None) -> None:
        with self.write() as conn:
            if value is None:
                conn.execute("DELETE FROM meta WHERE key = %s", (key,))
            else:
                conn.execute(
                    "INSERT INTO meta (key, value) VALUES (%s, %s) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (key, value),
                )

    def compact_text_indexes(self) -> None:
        """Nothing to do: the server's GIN indexes merge their pending entries themselves."""

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
            return _version(conn)

    def _migrate_in_time(self, seconds: float) -> None:
        """`_migrate` on a thread, waited for at most `seconds`. Past that the server counts
        as not answering; the attempt finishes on its own and its outcome is dropped (the
        change feed finds the server, and `reconnected()` migrates then)."""
        outcome: list[BaseException | None] = []
        done = threading.Event()

        def attempt() -> None:
            try:
                self._migrate()
                outcome.append(None)
            except BaseException as exc:  # handed to the caller below, if it still waits
                outcome.append(exc)
            finally:
                done.set()

        threading.Thread(target=attempt, name="timothy-store-first-answer", daemon=True).start()
        if not done.wait(seconds):
            raise psycopg.OperationalError(f"no answer within {seconds:g} s")
        if outcome[0] is not None:
            raise outcome[0]

    def _migrate(self) -> None:
        latest = len(self.migrations)
        with psycopg.connect(self.conninfo, autocommit=True) as conn:
            version = _version(conn)
            if version > latest:
                raise StoreError(newer_message(self.location, version, latest))
            while version < latest:
                try:
                    with conn.transaction():
                        conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
                        # Another machine may have migrated while we waited for the lock.
                        version = _version(conn)
                        if version > latest:
                            raise StoreError(newer_message(self.location, version, latest))
                        if version == latest:
                            break
                        migration = self.migrations[version]
                        if isinstance(migration, str):
                            conn.execute(migration)
                        else:
                            migration(conn)
                        conn.execute(
                            "INSERT INTO timothy_schema (id, version) VALUES (1, %s) "
                            "ON CONFLICT (id) DO UPDATE SET version = excluded.version",
                            (version + 1,),
                        )
                except (StoreError, psycopg.OperationalError):
                    raise
                except psycopg.errors.FeatureNotSupported as exc:
                    raise StoreError(_extension_advice(self.location, exc)) from exc
                except psycopg.errors.UndefinedFile as exc:
                    raise StoreError(_extension_advice(self.location, exc)) from exc
                except psycopg.errors.InsufficientPrivilege as exc:
                    raise StoreError(_refused_right_advice(self.location, conn, exc)) from exc
                except Exception as exc:
                    raise StoreError(
                        f"Upgrading the memory database at {self.location} to schema "
                        f"{version + 1} failed ({_first_line(exc)}); it was left at schema "
                        f"{version}. Please report this."
                    ) from exc
                log.info("migrated %s to schema %d", self.location, version + 1)
                version += 1


def _version(conn: psycopg.Connection[Any]) -> int:
    row = conn.execute("SELECT to_regclass('timothy_schema') IS NOT NULL").fetchone()
    if row is None or not row[0]:
        return 0
    found = conn.execute("SELECT version FROM timothy_schema WHERE id = 1").fetchone()
    return 0 if found is None else int(found[0])


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0].rstrip(".")


def privilege_advice(user: str, database: str, schema: str) -> str:
    """What to tell the owner when `user` may not create Timothy's tables (after the
    server's address)."""
    return (
        f"lets {user} in, but {user} may not create tables in database {database} (schema "
        f"{schema}): its admin can run ALTER DATABASE {database} OWNER TO {user} (or GRANT "
        f"CREATE ON SCHEMA {schema} TO {user})."
    )


def _refused_right_advice(location: str, conn: psycopg.Connection[Any], exc: BaseException) -> str:
    """A migration refused for want of a right: adding pgvector is its admin's; creating
    the tables wants the database's ownership (PostgreSQL 15 and later no longer let every
    user create in `public`)."""
    if "extension" in str(exc):
        return _extension_advice(location, exc)
    try:
        row = conn.execute(
            "SELECT current_user, current_database(), coalesce(current_schema(), 'public')"
        ).fetchone()
    except psycopg.Error:
        row = None
    if row is None:
        return f"The memory server {location} refused this user: {_first_line(exc)}."
    return f"The memory server {location} {privilege_advice(str(row[0]), str(row[1]), str(row[2]))}"


def _extension_advice(location: str, exc: BaseException) -> str:
    return (
        f"The memory server {location} cannot hold Timothy's memories: {_first_line(exc)}. "
        "It needs PostgreSQL 15 or newer with the pgvector extension installed; its admin "
        "can run CREATE EXTENSION vector in this database."
    )
