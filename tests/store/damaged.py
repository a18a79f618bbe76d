"""Real damaged stores for the tests: a store of a few hundred pages, 16 KiB of garbage in
the middle (it fails `PRAGMA integrity_check`), the header left intact."""

from __future__ import annotations

import hashlib
import random
import subprocess
import sys
from pathlib import Path

import apsw

from tests.app.many_memories import add_many
from timothy.store import Store

GARBAGE = 16 * 1024


def filled_store(data: Path, count: int = 3000) -> list[str]:
    """A store of `count` memories (about 1.4 MB, 350 pages), its log folded into the file;
    returns the ids of three memories added by hand, after the bulk."""
    with Store.open(data) as store:
        add_many(store, count)
        ids = [store.memories.add(f"hand-made fact {n}").id for n in range(3)]
        store.db.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return ids


def damage(path: Path, seed: int = 14, *, table: str | None = None) -> None:
    """Overwrite 16 KiB in the middle of the file with (seeded, so repeatable) garbage; with
    `table`, around the middle one of its leaf pages, so that reading the table meets it
    (which table the middle of the file holds depends on the schema's every index)."""
    middle = None if table is None else _middle_leaf(path, table)
    data = bytearray(path.read_bytes())
    assert len(data) > 8 * GARBAGE, "the store is too small to damage in the middle"
    start = (len(data) // 2 if middle is None else middle) - GARBAGE // 2
    data[start : start + GARBAGE] = random.Random(seed).randbytes(GARBAGE)
    path.write_bytes(bytes(data))


def _middle_leaf(path: Path, table: str) -> int:
    """The offset of the middle of the middle leaf page of `table` in the file."""
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        size = int(conn.execute("PRAGMA page_size").fetchall()[0][0])
        leaves = sorted(
            int(row[0])
            for row in conn.execute(
                "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf'", (table,)
            )
        )
    finally:
        conn.close()
    assert leaves, f"{table} has no leaf pages"
    return (leaves[len(leaves) // 2] - 1) * size + size // 2


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


CRASHING_WRITER = """
import os, sys
from pathlib import Path
from timothy.store import Store
store = Store.open(Path(sys.argv[1]))
for n in range(int(sys.argv[2])):
    print(store.memories.add(f"written just before the crash {n}").id, flush=True)
os._exit(0)  # no close: the log keeps what was committed, as after a crash
"""


def add_then_crash(data: Path, count: int) -> list[str]:
    """Add `count` memories in a process that then dies without closing the store, so they
    are committed in the log (`-wal`) and not yet in the file; returns their ids."""
    done = subprocess.run(
        [sys.executable, "-c", CRASHING_WRITER, str(data), str(count)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return done.stdout.split()
