"""A process killed mid-write leaves an intact database holding every acknowledged write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import apsw

from tests.conftest import REPO
from timothy.store import Store


def test_sigkill_mid_write_loses_no_acknowledged_memory(data_dir: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.store.crash_writer", str(data_dir)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert child.stdout is not None
    acknowledged: list[str] = []
    try:
        for line in child.stdout:
            acknowledged.append(line.strip())
            if len(acknowledged) >= 300:
                break
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert len(acknowledged) == 300

    conn = apsw.Connection(str(data_dir / "timothy.db"))
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    conn.close()
    with Store.open(data_dir) as store:
        present = store.memories.get_many(acknowledged)
        assert set(present) == set(acknowledged)
        # The text index is consistent with the table too.
        fts = store.db.connection()
        fts.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)")
