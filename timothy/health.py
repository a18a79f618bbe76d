"""Checks that Timothy's parts work on this machine, for `timothy doctor` and `--self-check`."""

from __future__ import annotations

import contextlib
import socket
import struct
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
import sqlite_vec

from timothy import paths


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str

    def line(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'}  {self.name}: {self.detail}"


def _run(name: str, probe: Callable[[], str]) -> Check:
    try:
        return Check(name, True, probe())
    except Exception as exc:  # a check reports, it never raises
        return Check(name, False, str(exc) or type(exc).__name__)


@contextlib.contextmanager
def no_network() -> Iterator[None]:
    """Make any attempt to open a network connection in this process fail loudly."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OSError("network access attempted while checking offline operation")

    saved = (socket.socket.connect, socket.getaddrinfo, socket.create_connection)
    socket.socket.connect = refuse  # type: ignore[method-assign]
    socket.getaddrinfo = refuse
    socket.create_connection = refuse
    try:
        yield
    finally:
        socket.socket.connect, socket.getaddrinfo, socket.create_connection = saved  # type: ignore[method-assign]


def _probe_sqlite_vec() -> str:
    conn = apsw.Connection(":memory:")
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    version = conn.execute("SELECT vec_version()").fetchall()[0][0]
    conn.execute("CREATE VIRTUAL TABLE v USING vec0 (e float[3] distance_metric=cosine)")
    for rowid, vector in ((1, (1, 0, 0)), (2, (0, 1, 0)), (3, (0, 0, 1))):
        conn.execute("INSERT INTO v (rowid, e) VALUES (?, ?)", (rowid, struct.pack("3f", *vector)))
    rows = conn.execute(
        "SELECT rowid FROM v WHERE e MATCH ? AND k = 1", (struct.pack("3f", 0.1, 0.9, 0.1),)
    ).fetchall()
    if rows != [(2,)]:
        raise RuntimeError(f"k-NN answered {rows}, expected [(2,)]")
    return f"{version} loaded, k-NN answered"


def _probe_fts5() -> str:
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5 (c, tokenize = 'porter unicode61')")
    conn.execute("INSERT INTO t (c) VALUES ('I prefer aisle seats on long flights')")
    rows = conn.execute('SELECT count(*) FROM t WHERE t MATCH \'"seat" OR "birthday"\'')
    if rows.fetchall()[0][0] != 1:
        raise RuntimeError("a porter-stemmed OR query found nothing")
    return f"SQLite {apsw.sqlite_lib_version()}, porter unicode61"


def _probe_encoding() -> str:
    from timothy import tokens

    with no_network():
        count = tokens.count_tokens("Timothy remembers, offline.")
    return f"{tokens.ENCODING_NAME} loaded offline ({count} tokens in a test sentence)"


def _probe_data_dir(folder: Path) -> Callable[[], str]:
    def probe() -> str:
        folder.mkdir(parents=True, exist_ok=True)
        probe_file = folder / f".write-check-{uuid.uuid4().hex}"
        probe_file.write_bytes(b"ok")
        probe_file.unlink()
        return f"{folder} is writable"

    return probe


def _probe_database(folder: Path) -> Callable[[], str]:
    def probe() -> str:
        from timothy.store import Store

        with Store.open(folder) as store:
            total = store.memories.count()
            active = store.memories.count(status="active")
            version = store.db.schema_version()
        return f"{store.path} (schema {version}, {total} memories, {active} active)"

    return probe


def _probe_keyring() -> str:
    import keyring
    from keyring.backends import fail

    backend = keyring.get_keyring()
    if isinstance(backend, fail.Keyring):
        raise RuntimeError("no keyring backend: API keys cannot be stored safely")
    return f"{type(backend).__module__}.{type(backend).__name__}"


def self_checks(data: Path | None = None) -> list[Check]:
    """The checks that need no provider: storage, search, tokens, folders, keyring."""
    folder = data if data is not None else paths.data_dir()
    return [
        _run("sqlite-vec", _probe_sqlite_vec),
        _run("FTS5", _probe_fts5),
        _run("token encoding", _probe_encoding),
        _run("data folder", _probe_data_dir(folder)),
        _run("database", _probe_database(folder)),
        _run("keyring", _probe_keyring),
    ]
