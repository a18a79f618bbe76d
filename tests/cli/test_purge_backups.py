"""`timothy memories forget ID --purge-backups` and `timothy memories purge-backups ID`, run as
the owner runs them: afterwards no backup file holds a byte of the text."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_timothy
from timothy.store.backup_folder import backup_files

SECRET = "wombatqueue"


def added(*args: str) -> str:
    result = run_timothy("memories", "add", *args, "--json")
    assert result.returncode == 0, result.stderr
    return str(json.loads(result.stdout)["id"])


def backed_up(data_dir: Path, when: str) -> Path:
    result = run_timothy("backup", "--now", when, "--json")
    assert result.returncode == 0, result.stderr
    return Path(json.loads(result.stdout)["path"])


def backups_bytes(data_dir: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted((data_dir / "backups").iterdir()))


def test_forget_with_purge_backups_takes_it_out_of_every_backup(data_dir: Path) -> None:
    added("The owner likes tea")
    untouched = backed_up(data_dir, "2026-11-28T09:00:00Z")
    secret = added(f"The owner's alarm code is {SECRET} 2468", "--entity", "Alarm")
    backed_up(data_dir, "2026-11-29T09:00:00Z")
    backed_up(data_dir, "2026-11-30T09:00:00Z")
    assert SECRET.encode() in backups_bytes(data_dir)
    before = untouched.read_bytes()

    result = run_timothy("memories", "forget", secret, "--purge-backups")

    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "Forgot 1 memory for good.\nRemoved it from 2 backups (1 other backup did not hold it).\n"
    )
    assert result.stderr == ""
    assert SECRET.encode() not in backups_bytes(data_dir)
    assert untouched.read_bytes() == before  # held none of it: not rewritten
    assert len(backup_files(data_dir / "backups")) == 3
    listed = run_timothy("backup", "--list", "--json")
    counts = [json.loads(line)["memories"] for line in listed.stdout.splitlines()]
    assert counts == [1, 1, 1]


def test_purge_backups_for_a_memory_forgotten_earlier(data_dir: Path) -> None:
    secret = added(f"The owner's alarm code is {SECRET} 2468")
    backed_up(data_dir, "2026-11-29T09:00:00Z")
    forgot = run_timothy("memories", "forget", secret)
    assert forgot.returncode == 0, forgot.stderr
    assert "Older backups may still hold this text." in forgot.stdout
    assert SECRET.encode() in backups_bytes(data_dir)

    result = run_timothy("memories", "purge-backups", secret, "--json")

    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert len(report["purged"]) == 1 and report["memories"] == 1 and report["failed"] == []
    assert SECRET.encode() not in backups_bytes(data_dir)
    again = run_timothy("memories", "purge-backups", secret)
    assert again.returncode == 0 and again.stdout == "No backup holds it.\n"


def test_a_backup_that_cannot_be_purged_is_named_and_the_exit_status_says_so(
    data_dir: Path,
) -> None:
    secret = added(f"The owner's alarm code is {SECRET} 2468")
    backup = backed_up(data_dir, "2026-11-29T09:00:00Z")
    data = bytearray(backup.read_bytes())
    data[len(data) // 2 :] = b"\xff" * (len(data) - len(data) // 2)  # its second half gone
    backup.write_bytes(bytes(data))

    result = run_timothy("memories", "forget", secret, "--purge-backups")

    assert result.returncode == 1
    assert f"{backup} could not be purged and still holds it" in result.stdout
    assert "1 backup still holds the text" in result.stderr
    assert backup.read_bytes() == bytes(data)
