"""The note of changes whose outcome could not be learned (timothy/store/postgres/unsure.py),
kept by two processes at once: the app and the `timothy` command on one data folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from timothy.store.postgres.unsure import UnsureChanges

REPO = Path(__file__).resolve().parents[2]
EACH = 150  # changes each process notes


def test_two_processes_noting_at_once_lose_none_of_each_others_notes(tmp_path: Path) -> None:
    path = tmp_path / "unsure-for-server-0123456789abcdef.json"
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.store.unsure_noter", str(path), name, str(EACH)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        for name in ("app", "cli")
    ]
    try:
        for child in children:
            assert child.stdout is not None and child.stdout.readline() == "ready\n"
        for child in children:  # both start together
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        errors = [child.communicate(timeout=60)[1] for child in children]
    finally:
        for child in children:
            child.kill()
            child.wait()
    assert [child.returncode for child in children] == [0, 0], errors
    noted = {key for (_, key), _ in UnsureChanges(path).unsettled()}
    assert noted == {f"{name}-{n}" for name in ("app", "cli") for n in range(EACH)}
    assert not path.with_name(path.name + ".unreadable").exists()
