"""Odd input through the real command line: ids that are not UTF-8, a data folder that cannot
be made, a database from a newer Timothy. Each gets one plain line, never "unexpected error"."""

from __future__ import annotations

import os
from pathlib import Path

import apsw
import pytest

from tests.conftest import run_timothy
from timothy.store import Store
from timothy.store.migrations import SCHEMA_VERSION

# Bytes that are not UTF-8, as a shell would pass them; Python hands them to `timothy` as
# lone surrogates (surrogateescape), and they reach the child process as the raw bytes.
NOT_UTF8 = [os.fsdecode(b"\xff\xfe"), os.fsdecode(b"01M8\xc3("), os.fsdecode(b"caf\xe9")]


@pytest.mark.parametrize("raw", NOT_UTF8)
def test_ids_that_are_not_utf8_are_not_found(data_dir: Path, raw: str) -> None:
    assert run_timothy("memories", "add", "a fact").returncode == 0
    for args in (
        ("memories", "show", raw),
        ("memories", "chain", raw),
        ("memories", "archive", raw),
        ("sessions", "show", raw),
    ):
        result = run_timothy(*args)
        assert result.returncode == 1, (args, result.stderr)
        assert "unexpected error" not in result.stderr
        assert result.stderr.startswith("timothy: No ") and " has the id " in result.stderr
        assert len(result.stderr.splitlines()) == 1


def test_a_data_folder_under_a_file_is_named_with_the_reason(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    folder = blocker / "data"
    for args in (("memories", "list"), ("memories", "add", "x"), ("backup",)):
        result = run_timothy(*args, "--data-dir", str(folder))
        assert result.returncode == 1
        assert result.stderr == (
            f"timothy: Cannot create the data folder {folder}: {blocker} is a file, not a folder.\n"
        )
    assert blocker.read_text() == "not a folder"


def test_a_data_folder_in_a_folder_that_refuses_it_is_named(tmp_path: Path) -> None:
    """/proc refuses new folders even to root (who ignores permission bits)."""
    folder = Path("/proc/timothy-test/data")
    if not Path("/proc/self").exists():
        pytest.skip("no /proc here")
    result = run_timothy("memories", "list", "--data-dir", str(folder))
    assert result.returncode == 1
    assert result.stderr.startswith(f"timothy: Cannot create the data folder {folder} in /proc: ")
    assert "unexpected error" not in result.stderr


def test_a_newer_database_in_rollback_mode_is_left_byte_for_byte(data_dir: Path) -> None:
    with Store.open(data_dir) as store:
        store.memories.add("from a newer Timothy")
    path = data_dir / "timothy.db"
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = path.read_bytes()
    files = sorted(os.listdir(data_dir))
    for args in (("memories", "list"), ("memories", "add", "x"), ("doctor",), ("backup",)):
        result = run_timothy(*args)
        assert result.returncode == 1
        assert "was written by a newer Timothy" in result.stdout + result.stderr
        assert "the file was left untouched" in result.stdout + result.stderr
        assert path.read_bytes() == before, args
        assert sorted(os.listdir(data_dir)) == files, args
