"""Backups: online and consistent, verified, rotated 7 daily + 4 weekly, restorable; made
before migrations and merges."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import apsw
import numpy as np
import pytest

from tests.fakes.openai_server import OpenAIServer
from tests.store.damaged import add_then_crash, damage, digest, filled_store
from timothy.errors import DamagedStoreError, DatabaseLockedError, InvalidInputError
from timothy.memory.consolidation import consolidate
from timothy.providers.factory import chat_provider
from timothy.settings import Settings
from timothy.store import DamageCheck, Store
from timothy.store.backup_folder import BackupReason, backup_files, backups_dir
from timothy.store.backups import (
    backup_if_due,
    list_backups,
    make_backup,
    restore,
    rotate,
)
from timothy.store.migrations import MIGRATIONS, SCHEMA_VERSION

NOW = datetime(2026, 3, 5, 9, 0, tzinfo=UTC)


def memory_count(path: Path) -> int:
    conn = apsw.Connection(
        f"file:{path}?immutable=1", flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI
    )
    try:
        return int(conn.execute("SELECT count(*) FROM memories").fetchall()[0][0])
    finally:
        conn.close()


def test_a_backup_is_a_verified_self_contained_copy_in_the_backups_folder(
    store: Store, data_dir: Path
) -> None:
    for n in range(5):
        store.memories.add(f"fact {n}")
    made = make_backup(store, now=NOW)
    assert made.parent == data_dir / "backups"
    assert made.name == "timothy-20260305T090000Z-manual.db"
    assert made.read_bytes()[18:20] == b"\x01\x01"  # no log needed beside it
    assert memory_count(made) == 5
    assert [p.name for p in made.parent.iterdir()] == [made.name]  # no partial file left
    (listed,) = list_backups(data_dir)
    assert (listed.path, listed.reason, listed.memories, listed.active) == (
        made,
        BackupReason.MANUAL,
        5,
        5,
    )


def test_a_backup_is_one_moment_of_the_store_while_another_writer_is_busy(
    store: Store, data_dir: Path
) -> None:
    store.memories.add("committed")
    writer = apsw.Connection(str(data_dir / "timothy.db"))
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("DELETE FROM memories")  # not committed while the backup runs
    try:
        made = make_backup(store, now=NOW)
    finally:
        writer.execute("COMMIT")
        writer.close()
    assert memory_count(made) == 1
    assert store.memories.count() == 0


def test_a_damaged_store_is_not_backed_up_and_no_file_is_left(data_dir: Path) -> None:
    filled_store(data_dir)
    damage(data_dir / "timothy.db")
    # The store does not know yet (no open-time check): the copy's integrity_check finds it.
    with Store.open(data_dir, check=DamageCheck.OFF) as store:
        with pytest.raises(DamagedStoreError, match="damaged"):
            make_backup(store, now=NOW)
        assert store.damaged
    assert list((data_dir / "backups").iterdir()) == []


def test_the_daily_backup_is_made_once_a_day(store: Store, data_dir: Path) -> None:
    first = backup_if_due(store, NOW)
    assert first is not None and first.name.endswith("-daily.db")
    assert backup_if_due(store, NOW + timedelta(hours=12)) is None
    second = backup_if_due(store, NOW + timedelta(hours=21))
    assert second is not None and second != first


def test_rotation_keeps_seven_daily_and_four_weekly(store: Store, data_dir: Path) -> None:
    start = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)  # a Monday
    manual = make_backup(store, now=start - timedelta(days=30))
    for day in range(60):  # up to Thursday 5 March
        assert backup_if_due(store, start + timedelta(days=day)) is not None
    kept = backup_files(backups_dir(store.path))
    daily = [date(2026, 3, d) for d in (5, 4, 3, 2, 1)] + [date(2026, 2, 28), date(2026, 2, 27)]
    # The newest of each of the four weeks before those days: Thursday 26 February (its
    # week's Friday to Sunday are daily ones), then three Sundays.
    weekly = [date(2026, 2, 26), date(2026, 2, 22), date(2026, 2, 15), date(2026, 2, 8)]
    rotated = [b.made_at.date() for b in kept if b.reason is BackupReason.DAILY]
    assert rotated == daily + weekly
    assert manual in [b.path for b in kept]  # made by hand: never rotated away
    # Rotating again changes nothing.
    assert rotate(backups_dir(store.path), now=start + timedelta(days=59)) == []


def test_files_that_are_not_timothys_backups_are_never_touched(
    store: Store, data_dir: Path
) -> None:
    folder = data_dir / "backups"
    folder.mkdir()
    mine = folder / "my-own-copy.db"
    mine.write_bytes(b"the owner's")
    for day in range(20):
        backup_if_due(store, NOW + timedelta(days=day))
    assert mine.read_bytes() == b"the owner's"


def test_a_store_that_needs_a_migration_is_backed_up_first(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    path = data_dir / "timothy.db"
    conn = apsw.Connection(str(path))
    for migration in MIGRATIONS[:4]:
        conn.execute(migration)
    conn.execute("PRAGMA user_version = 4")
    conn.execute(
        "INSERT INTO memories (id, type, content, status, confidence, source, created_at) "
        "VALUES ('01OLD', 'semantic', 'kept from schema 4', 'active', 1.0, 'manual', "
        "'2026-01-01T00:00:00Z')"
    )
    conn.close()
    with Store.open(data_dir) as store:
        assert store.db.schema_version() == SCHEMA_VERSION
    (backup,) = backup_files(data_dir / "backups")
    assert backup.reason is BackupReason.MIGRATION
    old = apsw.Connection(str(backup.path), flags=apsw.SQLITE_OPEN_READONLY)
    assert old.execute("PRAGMA user_version").fetchall() == [(4,)]
    assert old.execute("SELECT content FROM memories").fetchall() == [("kept from schema 4",)]
    old.close()


def test_consolidation_backs_up_before_it_merges(
    store: Store, data_dir: Path, openai_server: OpenAIServer
) -> None:
    a = store.memories.add("I like green tea", now=NOW - timedelta(days=2))
    b = store.memories.add("I really like green tea", now=NOW - timedelta(days=1))
    model = store.vectors.ensure_model("test/embedder", 4)
    store.vectors.put_many(model, [(a.id, [1.0, 0, 0, 0]), (b.id, [0.999, 0.01, 0, 0])])
    store.vectors.set_active_model(model.name)
    openai_server.reply(json.dumps({"same_fact": True, "content": "I really like green tea"}))
    chat = chat_provider(Settings(chat_provider="openai", openai=openai_server.settings()))

    report = consolidate(store, chat, now=NOW)

    assert len(report.merged) == 1
    (backup,) = backup_files(data_dir / "backups")
    assert backup.reason is BackupReason.MERGE
    assert memory_count(backup.path) == 2  # both members, before the merge added a third
    assert store.memories.count() == 3


def test_no_merge_no_backup(store: Store, data_dir: Path) -> None:
    store.memories.add("a lonely fact")
    consolidate(store, None, now=NOW)
    assert not (data_dir / "backups").exists()


# -- restore ---------------------------------------------------------------------------


def test_restore_puts_the_backup_in_place_and_keeps_the_damaged_file_aside(
    data_dir: Path,
) -> None:
    ids = filled_store(data_dir)
    with Store.open(data_dir) as store:
        backup = make_backup(store, now=NOW)
    logged = add_then_crash(data_dir, 2)  # committed after the backup, still in the log
    path = data_dir / "timothy.db"
    damage(path)
    damaged = digest(path)
    log_bytes = Path(f"{path}-wal").read_bytes()

    result = restore(data_dir, backup, now=NOW + timedelta(hours=1))

    assert result.memories == 3003
    aside = result.kept_aside
    assert aside == data_dir / "timothy.db.before-restore-20260305T100000Z"
    assert digest(aside) == damaged  # moved, not rewritten
    assert Path(f"{aside}-wal").read_bytes() == log_bytes  # its log went with it
    assert not Path(f"{path}-wal").exists() or Path(f"{path}-wal").stat().st_size == 0
    with Store.open(data_dir) as store:
        assert store.wait_for_check() is None
        assert store.memories.count() == 3003
        assert all(store.memories.get(i) for i in ids)
        store.memories.add("written after the restore")
    # The old file and its log still hold what was written after the backup.
    old = apsw.Connection(str(aside), flags=apsw.SQLITE_OPEN_READONLY)
    old.config(apsw.SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1)
    found = old.execute(
        "SELECT id FROM memories WHERE id IN (?, ?)", (logged[0], logged[1])
    ).fetchall()
    old.close()
    assert sorted(row[0] for row in found) == sorted(logged)


def test_restore_refuses_a_damaged_backup_and_changes_nothing(data_dir: Path) -> None:
    filled_store(data_dir)
    with Store.open(data_dir) as store:
        backup = make_backup(store, now=NOW)
    damage(backup)
    backup_digest = digest(backup)
    current = digest(data_dir / "timothy.db")
    with pytest.raises(InvalidInputError, match=r"is damaged.*nothing was restored") as refused:
        restore(data_dir, backup, now=NOW)
    # One line for the owner: SQLite's "*** in database main ***" and page list left out.
    assert "\n" not in str(refused.value) and "***" not in str(refused.value)
    assert digest(backup) == backup_digest
    assert digest(data_dir / "timothy.db") == current
    assert sorted(p.name for p in data_dir.iterdir()) == ["backups", "timothy.db"]


def test_restore_refuses_a_backup_from_a_newer_timothy(store: Store, data_dir: Path) -> None:
    store.memories.add("today's")
    backup = make_backup(store, now=NOW)
    conn = apsw.Connection(str(backup))
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    store.close()
    with pytest.raises(InvalidInputError, match=r"newer Timothy.*nothing was restored"):
        restore(data_dir, backup, now=NOW)


def test_restore_refuses_while_the_store_is_open(store: Store, data_dir: Path) -> None:
    store.memories.add("in use")
    backup = make_backup(store, now=NOW)
    with pytest.raises(DatabaseLockedError, match="in use"):
        restore(data_dir, backup, now=NOW)
    assert store.memories.count() == 1
    assert not list(data_dir.glob("*before-restore*"))


def test_restore_refuses_what_is_not_a_timothy_database(data_dir: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    conn = apsw.Connection(str(other))
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    for wrong in (other, text, tmp_path / "missing.db"):
        with pytest.raises(InvalidInputError, match="nothing was restored"):
            restore(data_dir, wrong, now=NOW)


def test_list_backups_is_empty_without_a_folder(data_dir: Path) -> None:
    assert list_backups(data_dir) == []


def test_a_vector_store_survives_backup_and_restore(store: Store, data_dir: Path) -> None:
    memory = store.memories.add("with a vector")
    model = store.vectors.ensure_model("test/embedder", 4)
    store.vectors.put(memory.id, model, [0.5, 0.5, 0.5, 0.5])
    backup = make_backup(store, now=NOW)
    store.close()
    restore(data_dir, backup, now=NOW)
    with Store.open(data_dir) as again:
        vector = again.vectors.get(memory.id, model)
        assert vector is not None and np.allclose(vector, 0.5)


def test_a_damaged_store_makes_no_daily_backup_and_rotates_none_away(data_dir: Path) -> None:
    filled_store(data_dir)
    with Store.open(data_dir) as store:
        for day in range(3):
            backup_if_due(store, NOW + timedelta(days=day))
    good = backup_files(data_dir / "backups")
    damage(data_dir / "timothy.db")
    with (
        Store.open(data_dir) as store,
        pytest.raises(DamagedStoreError, match="was not backed up"),
    ):
        backup_if_due(store, NOW + timedelta(days=40))
    assert backup_files(data_dir / "backups") == good
