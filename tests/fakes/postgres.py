"""A real PostgreSQL 16 server with pgvector for the tests, from the `pgserver` wheel.

One server per test session, in a temporary folder, listening on a Unix socket only; each
test gets a schema of its own (the URL's `search_path`), so tests never see each other's
rows and nothing needs dropping. `PgServer.stop()` / `start()` let a test take the server
away and bring it back (the offline and server-kill tests).
"""

from __future__ import annotations

import contextlib
import itertools
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pgserver
import psycopg
from pgserver._commands import pg_ctl
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

_schemas = itertools.count(1)
START_SECONDS = 180.0


class PgServer:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._server = pgserver.get_server(folder, cleanup_mode="stop")
        self.uri = self._server.get_uri()
        with psycopg.connect(self.uri, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")

    def fresh_url(self, prefix: str = "t") -> str:
        """The address of a new, empty schema on the server."""
        schema = f"{prefix}{next(_schemas)}"
        with psycopg.connect(self.uri, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        separator = "&" if "?" in self.uri else "?"
        return f"{self.uri}{separator}options={quote(f'-c search_path={schema},public')}"

    def kill(self) -> None:
        """Stop the server at once, as a crash or a pulled cable would (no clean shutdown)."""
        pg_ctl(
            ["-w", "-m", "immediate", "stop"],
            pgdata=self._server.pgdata,
            user=self._server.system_user,
        )

    def start(self) -> None:
        """Start the server again (same folder, same socket) after `kill`, and return once
        it takes connections. Crash recovery on a loaded machine can outlast pgserver's own
        10 s wait for pg_ctl; the server goes on starting, so this waits longer for it."""
        deadline = time.monotonic() + START_SECONDS
        while True:
            try:
                self._server.ensure_postgres_running()
                break
            except (subprocess.TimeoutExpired, AssertionError):
                # pg_ctl stopped waiting, or the server it left recovering is not ready yet
                # (pgserver asserts it is): ask again until it is.
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)  # polling another process's start-up: nothing to wait on
        while True:
            try:
                with psycopg.connect(self.uri, connect_timeout=5):
                    return
            except psycopg.OperationalError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)  # polling another process's start-up: nothing to wait on

    def close(self) -> None:
        self._server.cleanup()

    @classmethod
    @contextlib.contextmanager
    def temporary(cls) -> Iterator[PgServer]:
        """A server in a new folder, stopped and removed afterwards. The folder is readable
        by all: run as root, pgserver runs PostgreSQL as a user of its own."""
        folder = Path(tempfile.mkdtemp(prefix="timothy-pg-"))
        folder.chmod(0o755)
        server = cls(folder / "data")
        try:
            yield server
        finally:
            server.close()
            shutil.rmtree(folder, ignore_errors=True)


def refuse_memories_saying(url: str, words: str) -> None:
    """Make the server refuse (raise on) new memories whose content holds `words`."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE FUNCTION refuse_memory() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            "IF NEW.content LIKE '%" + words + "%' THEN RAISE EXCEPTION 'refused by policy'; "
            "END IF; RETURN NEW; END $$"
        )
        conn.execute(
            "CREATE TRIGGER refuse_memory BEFORE INSERT ON memories "
            "FOR EACH ROW EXECUTE FUNCTION refuse_memory()"
        )


def password_role(server: PgServer, name: str, password: str) -> str:
    """A role on `server` that must give its password (scram; every other role is trusted),
    and the server's address for it without the password, as the owner writes it."""
    parts = {key: value for key, value in conninfo_to_dict(server.uri).items() if key != "password"}
    with psycopg.connect(server.uri, autocommit=True) as conn:
        found = conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (name,)).fetchone()
        if found is None:
            conn.execute(
                sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(
                    sql.Identifier(name), sql.Literal(password)
                )
            )
        hba = Path(server._server.pgdata) / "pg_hba.conf"
        rule = f"local all {name} scram-sha-256\n"
        if rule not in hba.read_text():
            hba.write_text(rule + hba.read_text())
            conn.execute("SELECT pg_reload_conf()")
    address = f"postgresql://{name}@/{parts['dbname']}?host={quote(parts['host'])}"
    while True:  # the server reads its rules again on a signal: until then it trusts anyone
        try:
            psycopg.connect(address, connect_timeout=5).close()
        except psycopg.OperationalError:
            return address
        time.sleep(0.05)  # polling another process's reload: nothing to wait on
