"""The command line on a damaged store: writes refused with one sentence and the file's bytes
unchanged, reads warn and exit 1, doctor says damaged and names the restore command; then a
restore brings back every write acknowledged before the backup."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_timothy
from tests.store.damaged import damage, digest, filled_store

HAND_MADE = 0  # the index of the memory the commands act on


@pytest.fixture
def damaged(data_dir: Path) -> tuple[Path, list[str]]:
    ids = filled_store(data_dir)
    damage(data_dir / "timothy.db")
    return data_dir / "timothy.db", ids


def write_commands(memory_id: str, import_file: Path) -> dict[str, tuple[str, ...]]:
    return {
        "add": ("memories", "add", "a new fact"),
        "add --staged": ("memories", "add", "--staged", "a staged fact"),
        "confirm": ("memories", "confirm", memory_id),
        "reject": ("memories", "reject", memory_id),
        "archive": ("memories", "archive", memory_id),
        "edit": ("memories", "edit", memory_id, "an edited fact"),
        "import": ("memories", "import", str(import_file)),
        "consolidate": ("consolidate",),
        "embed": ("embed", "--model", "local"),
        "backup": ("backup",),
    }


def test_every_write_command_is_refused_and_the_file_is_unchanged(
    damaged: tuple[Path, list[str]], tmp_path: Path
) -> None:
    path, ids = damaged
    import_file = tmp_path / "import.jsonl"
    import_file.write_text(json.dumps({"content": "imported fact"}) + "\n", encoding="utf-8")
    before = digest(path)
    for name, args in write_commands(ids[HAND_MADE], import_file).items():
        result = run_timothy(*args)
        assert result.returncode == 1, (name, result.stdout, result.stderr)
        lines = result.stderr.splitlines()
        assert len(lines) == 1, (name, result.stderr)
        assert lines[0] == (
            f"timothy: The memory database {path} is damaged, so nothing was written to it; "
            "there is no backup of it yet, so save what can still be read with "
            "`timothy memories export FILE`."
        ), name
        assert result.stdout == "", name
        assert digest(path) == before, f"{name} changed the damaged file"


def test_reads_warn_first_and_exit_1(damaged: tuple[Path, list[str]]) -> None:
    path, ids = damaged
    before = digest(path)
    reads = {
        "show": ("memories", "show", ids[HAND_MADE]),
        "chain": ("memories", "chain", ids[HAND_MADE]),
        "sessions list": ("sessions", "list"),
        "embed --status": ("embed", "--status"),
    }
    for name, args in reads.items():
        result = run_timothy(*args)
        assert result.returncode == 1, (name, result.stdout, result.stderr)
        first = result.stderr.splitlines()[0]
        assert first.startswith(f"timothy: warning: {path} is damaged, so what follows may be "), (
            name
        )
        assert "unexpected error" not in result.stderr
        assert digest(path) == before, name
    shown = run_timothy("memories", "show", ids[HAND_MADE])
    assert "hand-made fact 0" in shown.stdout  # what is still readable is shown


def test_doctor_reports_the_damage_with_the_restore_command(
    damaged: tuple[Path, list[str]],
) -> None:
    path, _ = damaged
    before = digest(path)
    made = run_timothy("backup", "--list")  # none yet: doctor says how to save what is left
    assert made.returncode == 0
    result = run_timothy("doctor")
    assert result.returncode == 1
    (line,) = [x for x in result.stdout.splitlines() if x.startswith("FAIL  database:")]
    assert f"{path} is DAMAGED" in line
    assert "`timothy memories export FILE`" in line
    assert digest(path) == before


def test_restore_brings_back_every_write_acknowledged_before_the_backup(
    data_dir: Path,
) -> None:
    acknowledged = []
    for n in range(20):
        result = run_timothy("memories", "add", f"acknowledged fact {n}", "--json")
        assert result.returncode == 0, result.stderr
        acknowledged.append(json.loads(result.stdout)["id"])
    acknowledged += filled_store(data_dir)  # and enough pages to damage in the middle
    total = 3000 + len(acknowledged)
    backup = run_timothy("backup", "--json", "--now", "2026-12-01T09:00:00Z")
    assert backup.returncode == 0, backup.stderr
    backup_path = Path(json.loads(backup.stdout)["path"])
    assert backup_path.parent == data_dir / "backups"

    path = data_dir / "timothy.db"
    damage(path)
    damaged_digest = digest(path)
    doctor = run_timothy("doctor")
    assert f"`timothy restore {backup_path}`" in doctor.stdout
    refused = run_timothy("memories", "add", "after the damage")
    assert f"`timothy restore {backup_path}`" in refused.stderr

    restored = run_timothy("restore", str(backup_path), "--now", "2026-12-01T10:00:00Z")
    assert restored.returncode == 0, restored.stderr
    aside = data_dir / "timothy.db.before-restore-20261201T100000Z"
    assert restored.stdout == (
        f"Restored {total} memories from {backup_path}.\nThe file it replaced is kept at {aside}.\n"
    )
    assert digest(aside) == damaged_digest

    after = run_timothy("memories", "list", "--json")
    assert after.returncode == 0, after.stderr
    assert after.stderr == ""
    ids = {json.loads(line)["id"] for line in after.stdout.splitlines()}
    assert len(ids) == total
    assert set(acknowledged) <= ids
    added = run_timothy("memories", "add", "written after the restore")
    assert added.returncode == 0, added.stderr
    doctor = run_timothy("doctor")
    assert [x for x in doctor.stdout.splitlines() if x.startswith("ok    database:")]


def test_restore_refuses_a_damaged_backup(data_dir: Path) -> None:
    filled_store(data_dir)
    made = run_timothy("backup", "--json")
    backup = Path(json.loads(made.stdout)["path"])
    damage(backup)
    current = digest(data_dir / "timothy.db")
    result = run_timothy("restore", str(backup))
    assert result.returncode == 1
    assert result.stderr.startswith(f"timothy: {backup} is damaged (")
    assert result.stderr.endswith("nothing was restored: choose an older backup.\n")
    assert digest(data_dir / "timothy.db") == current
    assert not [p for p in os.listdir(data_dir) if "before-restore" in p]


def test_export_saves_what_a_damaged_store_can_still_give(data_dir: Path, tmp_path: Path) -> None:
    """With no backup, export is the advice: it must get past the damaged pages."""
    ids = filled_store(data_dir)
    path = data_dir / "timothy.db"
    damage(path, table="memories")  # pages of memories themselves: some are lost
    before = digest(path)
    saved = tmp_path / "saved.jsonl"
    result = run_timothy("memories", "export", str(saved))
    assert result.returncode == 1, result.stderr  # the store is damaged, even though it saved
    lines = saved.read_text(encoding="utf-8").splitlines()
    # 16 KiB is 4 of the ~350 pages, each of a few dozen memories: the rest are saved.
    assert 2800 <= len(lines) < 3003
    assert f"Exported {len(lines)} memories to {saved}" in result.stderr
    assert {json.loads(line)["id"] for line in lines} >= set(ids)
    assert digest(path) == before

    fresh = tmp_path / "fresh"
    imported = run_timothy("memories", "import", str(saved), "--data-dir", str(fresh))
    assert imported.returncode == 0, imported.stderr
    assert imported.stderr == f"Imported {len(lines)} memories\n"
