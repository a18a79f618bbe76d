"""Purging a forgotten memory from the backups: each backup that holds it is changed on a
copy (forgotten there as in the store, rebuilt, checked) that then replaces it; afterwards
no byte of the text is left in any file of the backups folder. A backup that cannot be
purged is left exactly as it was and named."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import apsw
import pytest

from tests.store.damaged import damage, digest, filled_store
from tests.store.test_forget import recorded_turn, traces
from timothy.memory.forget import backups_holding, forget, purge_backups
from timothy.retrieval.render import render_block, render_item
from timothy.store import Store
from timothy.store.backup_folder import BackupReason, backup_files, backup_name, backups_dir
from timothy.store.backups import make_backup, problem_with
from timothy.store.migrations import MIGRATIONS, SCHEMA_VERSION

SECRET = "quokkaburrow"
LOCKER = f"The owner's gym locker code is {SECRET} 4471"
NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def folder_bytes(folder: Path) -> dict[str, bytes]:
    """Every file in the backups folder (logs and leftovers included), lowercased."""
    return {p.name: p.read_bytes().lower() for p in sorted(folder.iterdir()) if p.is_file()}


def read(path: Path, sql: str) -> list[tuple[object, ...]]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [tuple(row) for row in conn.execute(sql)]
    finally:
        conn.close()


def test_forget_then_purge_leaves_no_byte_of_the_text_in_any_backup(store: Store) -> None:
    other = store.memories.add("The owner's gym is open until 22:00", now=NOW)
    before_it = make_backup(store, now=NOW, reason=BackupReason.DAILY)
    locker = store.memories.add(LOCKER, entities=["Quokkaburrow Gym"], now=NOW)
    reply = recorded_turn(store, render_block([locker, other]))
    daily = make_backup(store, now=NOW + timedelta(days=1), reason=BackupReason.DAILY)
    store.memories.supersede(locker.id, f"{LOCKER} (new lock)", now=NOW + timedelta(days=2))
    by_hand = make_backup(store, now=NOW + timedelta(days=2, hours=1))
    folder = backups_dir(store.path)
    assert all(SECRET.encode() in folder_bytes(folder)[p.name] for p in (daily, by_hand))
    assert backups_holding(store, [locker.id]) == [by_hand, daily]

    report = forget(store, [locker.id], chain=True)
    purged = purge_backups(store, report.forgotten, chain=True)

    assert set(purged.purged) == {daily, by_hand}
    assert purged.memories == 3  # one in the daily backup, both versions in the other
    assert purged.unchanged == 1 and purged.failed == ()
    for name, data in folder_bytes(folder).items():
        assert traces(data, SECRET) == [], name
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        p.name for p in (before_it, daily, by_hand)
    )
    for backup in (before_it, daily, by_hand):
        assert problem_with(backup) is None  # sound, restorable
        assert read(backup, "PRAGMA journal_mode") == [("delete",)]  # self-contained
        assert read(backup, "SELECT id FROM memories") == [(other.id,)]
    # A recorded turn's block keeps its shape in the backup; the line says "[forgotten]".
    [(block,)] = read(daily, f"SELECT memory_block FROM messages WHERE id = '{reply}'")
    assert block == render_block([locker, other]).replace(
        render_item("semantic", LOCKER), render_item("semantic", "[forgotten]")
    )
    assert backups_holding(store, [locker.id]) == []


def test_an_older_backup_is_purged_on_a_migrated_copy(data_dir: Path) -> None:
    folder = data_dir / "backups"
    folder.mkdir(parents=True)
    old = folder / backup_name(NOW, BackupReason.MIGRATION)
    conn = apsw.Connection(str(old))
    for migration in MIGRATIONS[:4]:
        conn.execute(migration)
    conn.execute("PRAGMA user_version = 4")
    for memory_id, text in (("01OLDGONE", LOCKER), ("01OLDKEPT", "kept from schema 4")):
        conn.execute(
            "INSERT INTO memories (id, type, content, status, confidence, source, created_at) "
            "VALUES (?, 'semantic', ?, 'active', 1.0, 'manual', '2026-01-01T00:00:00Z')",
            (memory_id, text),
        )
    conn.close()

    purged = purge_backups(data_dir / "timothy.db", ["01OLDGONE"])

    assert purged.purged == (old,) and purged.memories == 1
    assert traces(old.read_bytes().lower(), SECRET) == []
    assert read(old, "PRAGMA user_version") == [(SCHEMA_VERSION,)]
    assert read(old, "SELECT content FROM memories") == [("kept from schema 4",)]
    assert problem_with(old) is None
    assert not (data_dir / "timothy.db").exists()  # no store was opened or made
    assert [p.name for p in folder.iterdir()] == [old.name]


def test_a_damaged_or_newer_backup_is_left_exactly_as_it_was(data_dir: Path) -> None:
    ids = filled_store(data_dir)
    with Store.open(data_dir) as store:
        damaged = make_backup(store, now=NOW, reason=BackupReason.DAILY)
        newer = make_backup(store, now=NOW + timedelta(days=1), reason=BackupReason.DAILY)
        sound = make_backup(store, now=NOW + timedelta(days=2), reason=BackupReason.DAILY)
    damage(damaged)
    conn = apsw.Connection(str(newer))
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    left = {p: digest(p) for p in (damaged, newer)}

    purged = purge_backups(data_dir / "timothy.db", [ids[0]])

    assert purged.purged == (sound,)
    reasons = dict(purged.failed)
    assert set(reasons) == {damaged, newer}
    assert "damaged" in reasons[damaged]
    assert "newer Timothy" in reasons[newer]
    assert {p: digest(p) for p in (damaged, newer)} == left
    assert read(sound, f"SELECT count(*) FROM memories WHERE id = '{ids[0]}'") == [(0,)]
    assert len(backup_files(data_dir / "backups")) == 3
    assert sorted(p.name for p in (data_dir / "backups").iterdir()) == sorted(
        p.name for p in (damaged, newer, sound)
    )


def test_naming_nothing_is_refused(data_dir: Path) -> None:
    with pytest.raises(Exception, match="Name at least one memory"):
        purge_backups(data_dir / "timothy.db", [])
