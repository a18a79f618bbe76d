"""Bench stores on a PostgreSQL + pgvector server (`--store URL` of bench/recall.py and
bench/locomo.py): a schema per store on a named server, or a throwaway server started from
the pgserver wheel (`--store pgserver`), listening on a Unix socket only."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import psycopg

from timothy.store.postgres import PostgresStore

# `--store pgserver`: start a server from the pgserver wheel instead of naming one.
LOCAL_SERVER = "pgserver"


def schema_url(url: str, schema: str) -> str:
    """`url` with `schema` first on the search path."""
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}options={quote(f'-c search_path={schema},public')}"


def open_schema(url: str, schema: str, *, fresh: bool = False) -> PostgresStore:
    """The store in `schema` on the server at `url` (emptied first when `fresh`)."""
    with psycopg.connect(url, autocommit=True) as conn:
        if fresh:
            conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    return PostgresStore(schema_url(url, schema), follow_changes=False)


@contextlib.contextmanager
def server_url(store: str, folder: Path | None = None) -> Iterator[str]:
    """The server to measure: `store` itself, or for `pgserver` a PostgreSQL 16 + pgvector
    started from the wheel (in `folder`, kept for the next run, or a temporary one)."""
    if store != LOCAL_SERVER:
        yield store
        return
    import pgserver

    scratch = folder is None
    root = Path(tempfile.mkdtemp(prefix="bench-pg-")) if folder is None else folder
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o755)  # run as root, pgserver runs PostgreSQL as a user of its own
    server = pgserver.get_server(root / "pg", cleanup_mode="delete" if scratch else "stop")
    try:
        with psycopg.connect(server.get_uri(), autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        yield str(server.get_uri())
    finally:
        server.cleanup()
