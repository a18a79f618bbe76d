"""`timothy memories forget --purge-backups`, `memories purge-backups`, `backup` and `restore`
with the memory on a server: each says that the server's backups are its own job, and
forgetting with --purge-backups refuses before anything is forgotten."""

from __future__ import annotations

from pathlib import Path

import pytest

from timothy.cli import main
from timothy.store.postgres import PostgresStore


def test_the_command_line_refuses_purging_a_server_store_before_forgetting(
    pg_url: str, data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with PostgresStore(pg_url, follow_changes=False) as store:
        memory = store.memories.add("The owner's locker code is 4471")
    assert main(["--store", pg_url, "memories", "forget", memory.id, "--purge-backups"]) != 0
    said = capsys.readouterr().err
    assert "backups are the server's job" in said
    assert "password" not in said
    with PostgresStore(pg_url, follow_changes=False) as store:
        assert store.memories.get(memory.id).content == "The owner's locker code is 4471"

    assert main(["--store", pg_url, "memories", "purge-backups", memory.id]) != 0
    assert "backups are the server's job" in capsys.readouterr().err
    assert main(["--store", pg_url, "backup"]) != 0
    assert "backups are the server's" in capsys.readouterr().err
    assert main(["--store", pg_url, "restore", str(data_dir / "backups" / "any.db")]) != 0
    assert "backups are the server's job" in capsys.readouterr().err

    # forgetting alone works as ever
    assert main(["--store", pg_url, "memories", "forget", memory.id]) == 0
    with PostgresStore(pg_url, follow_changes=False) as store:
        assert store.memories.list(text="locker") == []
