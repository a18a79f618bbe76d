"""Which store to open: the SQLite file in the data folder (the default), or a PostgreSQL
server that several machines share.

The choice comes, first found wins, from `--store URL`, `TIMOTHY_STORE_URL`, or the
settings file's `store` section. A server's password is never in settings.json: it lives in
the OS keyring (`store_password_key`), or the owner puts it in the URL given on the command
line or in the environment. TLS settings (`sslmode`, `sslrootcert`: the CA file) go to the
server's driver as they are, from the URL or the section.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from timothy import paths, secrets
from timothy.errors import InvalidInputError, StoreError, StoreUnreachableError
from timothy.store import DamageCheck, Store
from timothy.store.engine import StoreEngine

if TYPE_CHECKING:
    from timothy.store.postgres import PostgresStore

# psycopg and the server engine take over half a second to import: the SQLite file, the
# usual store, opens without them, so they are imported only when a server is named.

STORE_URL_ENV = "TIMOTHY_STORE_URL"
SERVER_SCHEMES = ("postgresql://", "postgres://")
SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")


@dataclass(frozen=True, slots=True)
class StoreSettings:
    """The settings file's `store` section: where the memory lives."""

    engine: str = "sqlite"  # "sqlite" (the data folder's file) | "postgres"
    url: str = ""  # postgresql://user@host:5432/dbname (never with a password)
    sslmode: str = ""  # "" (the driver's default), or one of SSL_MODES
    ca_file: str = ""  # the CA certificate that signs the server's (verify-ca, verify-full)

    def check(self) -> None:
        if self.engine not in ("sqlite", "postgres"):
            raise InvalidInputError(f"Unknown store engine {self.engine!r}.")
        if self.sslmode and self.sslmode not in SSL_MODES:
            raise InvalidInputError(f"Unknown sslmode {self.sslmode!r}.")
        if self.url and password_in(self.url):
            raise InvalidInputError(
                "The store's URL in the settings holds a password; passwords belong in the "
                "keyring (Settings ▸ Storage), never in settings.json."
            )


def is_server_url(location: str) -> bool:
    return location.strip().lower().startswith(SERVER_SCHEMES)


def _parts(url: str) -> dict[str, str]:
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict

    try:
        return {key: str(value) for key, value in conninfo_to_dict(url).items()}
    except ProgrammingError as exc:
        raise InvalidInputError(f"This is not a usable PostgreSQL address: {exc}") from None


def password_in(url: str) -> bool:
    return bool(_parts(url).get("password"))


def store_password_key(url: str) -> str:
    """The keyring entry that holds the password for this server, user and database."""
    parts = _parts(url)
    user = parts.get("user") or os.environ.get("PGUSER") or "postgres"
    host = parts.get("host") or "localhost"
    port = parts.get("port") or "5432"
    return f"postgres:{user}@{host}:{port}/{parts.get('dbname', '')}"


def server_conninfo(url: str, *, sslmode: str = "", ca_file: str = "") -> str:
    """The driver's connection string: the URL, TLS options, and the keyring's password when
    the URL has none."""
    extra: dict[str, str] = {}
    parts = _parts(url)
    if sslmode and "sslmode" not in parts:
        extra["sslmode"] = sslmode
    if ca_file and "sslrootcert" not in parts:
        extra["sslrootcert"] = str(Path(ca_file).expanduser())
    if not parts.get("password"):
        password = secrets.get_secret(store_password_key(url))
        if password:
            extra["password"] = password
    if not extra:
        return url
    from psycopg.conninfo import make_conninfo

    return make_conninfo(url, **extra)


def chosen_location(override: str | None, settings: StoreSettings | None) -> str | None:
    """The server URL to use (None: the data folder's SQLite file)."""
    for candidate in (override, os.environ.get(STORE_URL_ENV)):
        if candidate and candidate.strip():
            if not is_server_url(candidate):
                raise InvalidInputError(
                    f"--store / {STORE_URL_ENV} takes a postgresql:// address, not "
                    f"{candidate!r}; for a data folder, use --data-dir."
                )
            return candidate.strip()
    if settings is not None and settings.engine == "postgres":
        if not settings.url.strip():
            raise InvalidInputError(
                "The settings choose a PostgreSQL store but give no address; set one in "
                "Settings ▸ Storage."
            )
        return settings.url.strip()
    return None


def open_store(
    location: str | None = None,
    *,
    data_dir: Path | None = None,
    settings: StoreSettings | None = None,
    check: DamageCheck | str = DamageCheck.BACKGROUND,
    follow_changes: bool = True,
) -> StoreEngine:
    """The store a location names: a postgresql:// URL opens the server, anything else (or
    nothing) the SQLite file in `data_dir` (default: the configured data folder). A command
    that lives briefly does not `follow_changes` made on other machines; a store that does
    (the app's) opens even while its server is out of reach (see postgres/offline.py)."""
    url = chosen_location(location, settings)
    if url is None:
        return Store.open(data_dir if data_dir is not None else paths.data_dir(), check=check)
    from timothy.store.postgres import PostgresStore

    sslmode = settings.sslmode if settings is not None else ""
    ca_file = settings.ca_file if settings is not None else ""
    return PostgresStore(
        server_conninfo(url, sslmode=sslmode, ca_file=ca_file),
        follow_changes=follow_changes,
        outbox_dir=data_dir,
        start_offline=follow_changes,  # the app opens, and works from this machine meanwhile
        # A password stored after a refused login is read again, not only at the next start.
        conninfo_source=lambda: server_conninfo(url, sslmode=sslmode, ca_file=ca_file),
    )


def open_server(
    settings: StoreSettings, *, password: str = "", data_dir: Path | None = None
) -> PostgresStore:
    """The server a `store` section names (not necessarily the one in use), for a short job
    such as copying a store onto it: the keyring's password unless one is `password` typed."""
    from psycopg.conninfo import make_conninfo

    from timothy.store.postgres import PostgresStore

    conninfo = server_conninfo(settings.url, sslmode=settings.sslmode, ca_file=settings.ca_file)
    if password:
        conninfo = make_conninfo(conninfo, password=password)
    return PostgresStore(conninfo, follow_changes=False, outbox_dir=data_dir)


MIN_SERVER_VERSION = 150000  # PostgreSQL 15


def check_server(url: str, *, sslmode: str = "", ca_file: str = "", password: str = "") -> str:
    """What the server at `url` is, in one line for the owner (Settings ▸ Storage's test),
    without changing anything on it; a StoreError says what is missing."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    from timothy.store.postgres.database import login_refusal, newer_message, safe_location
    from timothy.store.postgres.migrations import SCHEMA_VERSION

    conninfo = server_conninfo(url, sslmode=sslmode, ca_file=ca_file)
    if password:
        conninfo = make_conninfo(conninfo, password=password)
    if "connect_timeout" not in _parts(url):
        conninfo = make_conninfo(conninfo, connect_timeout=5)
    where = safe_location(conninfo)
    try:
        with psycopg.connect(conninfo, autocommit=True) as conn:
            version = conn.info.server_version
            if version < MIN_SERVER_VERSION:
                raise StoreError(
                    f"{where} runs PostgreSQL {version // 10000}; Timothy needs 15 or newer."
                )
            installed = conn.execute(
                "SELECT extversion FROM pg_extension WHERE extname = 'vector'"
            ).fetchone()
            available = conn.execute(
                "SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"
            ).fetchone()
            if installed is None and available is None:
                raise StoreError(
                    f"{where} has no pgvector (the `vector` extension); its admin can install "
                    "it (e.g. the postgresql-NN-pgvector package)."
                )
            pgvector = str((installed or available or ("?",))[0])
            if installed is None and not _may_add_vector(conn):
                raise StoreError(
                    f"{where} has pgvector {pgvector} to install, but not in this database, "
                    "and this user may not add it: its admin can run CREATE EXTENSION vector "
                    "in this database."
                )
            held = conn.execute("SELECT to_regclass('timothy_schema') IS NOT NULL").fetchone()
            if held is not None and held[0]:
                row = conn.execute(
                    "SELECT (SELECT version FROM timothy_schema WHERE id = 1), "
                    "(SELECT count(*) FROM memories)"
                ).fetchone()
                assert row is not None
                schema, count = int(row[0] or 0), int(row[1])
                if schema > SCHEMA_VERSION:  # opening it would be refused: not usable here
                    raise StoreError(newer_message(where, schema, SCHEMA_VERSION))
                holds = f"holds {count} {'memory' if count == 1 else 'memories'} (schema {schema})"
            else:
                refusal = _no_create_refusal(conn)
                if refusal is not None:
                    raise StoreError(f"{where} {refusal}")
                holds = "ready for Timothy (nothing stored yet)"
    except psycopg.OperationalError as exc:
        refused = login_refusal(exc)
        if refused is not None:  # it answered: "did not answer" would send the owner astray
            raise StoreUnreachableError(f"{where} refused this machine: {refused}.") from exc
        first = (str(exc).strip() or type(exc).__name__).splitlines()[0]
        raise StoreUnreachableError(f"{where} did not answer: {first}") from exc
    except psycopg.Error as exc:
        raise StoreError(f"{where}: {exc}") from exc
    major, minor = version // 10000, version % 10000
    return f"PostgreSQL {major}.{minor} with pgvector {pgvector}: {holds}."


def _no_create_refusal(conn: Any) -> str | None:
    """Why this user cannot make Timothy's tables in the database's first schema (None when
    it can): from PostgreSQL 15 on, only the database's owner (or whom it grants) creates in
    `public`, so a user made by `createuser` alone logs in and can do nothing more."""
    row = conn.execute(
        "SELECT current_user, current_database(), current_schema(), "
        "current_schema() IS NOT NULL AND has_schema_privilege(current_schema(), 'CREATE')"
    ).fetchone()
    if row is None or row[3]:
        return None
    from timothy.store.postgres.database import privilege_advice

    return privilege_advice(str(row[0]), str(row[1]), str(row[2] or "public"))


def _may_add_vector(conn: Any) -> bool:
    """Whether this user can run CREATE EXTENSION vector here (what opening the store does):
    a superuser, or pgvector marked trusted and the user allowed to create in the database."""
    row = conn.execute(
        "SELECT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user), "
        "coalesce((SELECT trusted FROM pg_available_extension_versions v "
        "JOIN pg_available_extensions e ON e.name = v.name AND e.default_version = v.version "
        "WHERE v.name = 'vector'), false) "
        "AND has_database_privilege(current_database(), 'CREATE')"
    ).fetchone()
    return row is not None and bool(row[0] or row[1])
