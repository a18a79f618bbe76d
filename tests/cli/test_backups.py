"""`timothy backup [FILE]`, `timothy backup --list` and `timothy restore FILE`."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_timothy


def test_backup_to_a_file_then_restore_it(data_dir: Path, tmp_path: Path) -> None:
    for text in ("first fact", "second fact"):
        assert run_timothy("memories", "add", text).returncode == 0
    target = tmp_path / "copy.db"
    made = run_timothy("backup", str(target))
    assert made.returncode == 0, made.stderr
    assert made.stdout == f"Backed up 2 memories to {target} (integrity checked).\n"

    again = run_timothy("backup", str(target))  # never overwrites
    assert again.returncode == 1
    assert again.stderr == (
        f"timothy: {target} already exists; choose a new file for the backup.\n"
    )

    assert run_timothy("memories", "add", "third fact").returncode == 0
    restored = run_timothy("restore", str(target), "--json", "--now", "2026-12-01T08:00:00Z")
    assert restored.returncode == 0, restored.stderr
    result = json.loads(restored.stdout)
    assert result["memories"] == 2
    assert result["kept_aside"] == str(data_dir / "timothy.db.before-restore-20261201T080000Z")
    listed = run_timothy("memories", "list", "--json")
    assert sorted(json.loads(x)["content"] for x in listed.stdout.splitlines()) == [
        "first fact",
        "second fact",
    ]
    assert target.exists()  # the backup is read, not moved


def test_backup_into_a_folder_and_list(data_dir: Path, tmp_path: Path) -> None:
    empty = run_timothy("backup", "--list")
    assert empty.returncode == 0
    assert empty.stderr == f"No backups in {data_dir / 'backups'} yet.\n"
    assert run_timothy("memories", "add", "a fact").returncode == 0
    made = run_timothy("backup", "--now", "2026-12-01T09:30:00Z")
    assert made.returncode == 0, made.stderr
    path = data_dir / "backups" / "timothy-20261201T093000Z-manual.db"
    assert made.stdout == f"Backed up 1 memories to {path} (integrity checked).\n"
    listed = run_timothy("backup", "--list")
    assert listed.stdout == f"2026-12-01 09:30 UTC  manual          1 memories  {path}\n"
    as_json = json.loads(run_timothy("backup", "--list", "--json").stdout)
    assert as_json["memories"] == 1 and as_json["reason"] == "manual"
    into = run_timothy("backup", str(tmp_path), "--now", "2026-12-01T10:00:00Z")
    assert into.returncode == 0, into.stderr
    assert (tmp_path / "timothy-20261201T100000Z-manual.db").is_file()


def test_doctor_names_the_latest_backup(data_dir: Path) -> None:
    none = run_timothy("doctor")
    assert f"ok    backups: none yet in {data_dir / 'backups'}" in none.stdout
    run_timothy("backup", "--now", "2026-12-01T09:30:00Z")
    result = run_timothy("doctor")
    path = data_dir / "backups" / "timothy-20261201T093000Z-manual.db"
    assert (
        f"ok    backups: 1 in {data_dir / 'backups'}; the latest 2026-12-01 09:30 UTC "
        f"(manual, 0 memories): `timothy restore {path}`"
    ) in result.stdout
    assert "integrity check passed" in result.stdout


def test_restore_of_a_missing_file_is_one_plain_line(data_dir: Path, tmp_path: Path) -> None:
    result = run_timothy("restore", str(tmp_path / "nope.db"))
    assert result.returncode == 1
    assert (
        result.stderr == f"timothy: {tmp_path / 'nope.db'} is not a file; nothing was restored.\n"
    )
