"""A damaged store is found, read only, and never written to; odd files are left untouched."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest

from tests.store.damaged import add_then_crash, damage, digest, filled_store
from timothy.errors import DamagedStoreError, NotFoundError, StoreError
from timothy.store import DamageCheck, Store
from timothy.store.db import first_problem
from timothy.store.migrations import SCHEMA_VERSION


def writes(store: Store, memory_id: str) -> dict[str, Callable[[], object]]:
    """One of each kind of write the store offers."""
    return {
        "add": lambda: store.memories.add("a new fact"),
        "stage": lambda: store.memories.stage("a staged fact"),
        "confirm": lambda: store.memories.confirm(memory_id),
        "archive": lambda: store.memories.archive(memory_id),
        "supersede": lambda: store.memories.supersede(memory_id, "an edit"),
        "reject": lambda: store.memories.reject(memory_id),
        "session": lambda: store.sessions.create(title="a conversation"),
        "meta": lambda: store.db.set_meta("key", "value"),
        "model": lambda: store.vectors.ensure_model("test/model", 4),
    }


def test_the_open_time_check_finds_the_damage_and_every_write_is_refused(
    data_dir: Path,
) -> None:
    ids = filled_store(data_dir)
    path = data_dir / "timothy.db"
    damage(path)
    before = digest(path)
    with Store.open(data_dir) as store:
        found = store.wait_for_check()
        assert found is not None and store.damaged and store.damage == found
        for name, write in writes(store, ids[0]).items():
            with pytest.raises(DamagedStoreError, match="is damaged, so nothing was written") as e:
                write()
            assert "timothy memories export" in str(e.value), name  # no backup exists yet
    assert digest(path) == before


def test_the_first_write_waits_for_the_check_rather_than_racing_it(data_dir: Path) -> None:
    filled_store(data_dir)
    damage(data_dir / "timothy.db")
    before = digest(data_dir / "timothy.db")
    with Store.open(data_dir) as store, pytest.raises(DamagedStoreError):
        store.memories.add("written the moment the store opened")
    assert digest(data_dir / "timothy.db") == before


def test_a_corruption_error_met_while_reading_makes_the_store_read_only(data_dir: Path) -> None:
    ids = filled_store(data_dir)
    damage(data_dir / "timothy.db", table="memories")
    before = digest(data_dir / "timothy.db")
    with Store.open(data_dir, check=DamageCheck.OFF) as store:
        assert not store.damaged
        with pytest.raises(DamagedStoreError, match="damaged"):
            store.memories.list()  # the scan reaches the garbage
        assert store.damaged and "malformed" in (store.damage or "")
        with pytest.raises(DamagedStoreError):
            store.memories.archive(ids[0])
        # Reads that do not reach the garbage still answer.
        assert store.memories.get(ids[0]).content == "hand-made fact 0"
    assert digest(data_dir / "timothy.db") == before


def test_damage_listeners_are_told(data_dir: Path) -> None:
    filled_store(data_dir)
    damage(data_dir / "timothy.db")
    heard: list[str] = []
    late: list[str] = []
    with Store.open(data_dir, check=DamageCheck.OFF) as store:
        store.on_damage(heard.append)
        assert store.db.quick_check() is not None
        assert store.db.integrity_check() is not None  # found again: told once
        store.on_damage(late.append)  # added after the damage was found: told at once
    assert len(heard) == 1 and heard[0].startswith("quick_check: ")
    assert late == heard


def test_closing_a_damaged_store_never_folds_its_log_into_the_file(data_dir: Path) -> None:
    """The last connection to close normally checkpoints the log into the file; on a damaged
    file it must not, so the file stays byte for byte as it was found."""
    filled_store(data_dir)
    logged = add_then_crash(data_dir, 3)
    path = data_dir / "timothy.db"
    assert Path(f"{path}-wal").stat().st_size > 0
    damage(path)
    before = digest(path)
    with Store.open(data_dir) as store:
        assert store.wait_for_check() is not None
        # What the log holds is still read.
        assert store.memories.get(logged[0]).content == "written just before the crash 0"
    assert digest(path) == before
    assert Path(f"{path}-wal").stat().st_size > 0


def test_a_sound_store_is_checked_and_works(data_dir: Path) -> None:
    filled_store(data_dir, count=500)
    with Store.open(data_dir) as store:
        assert store.wait_for_check() is None
        assert not store.damaged
        store.memories.add("still writable")
        assert store.db.integrity_check() is None


def newer_in_rollback_mode(data_dir: Path) -> Path:
    with Store.open(data_dir) as store:
        store.memories.add("from the future")
    path = data_dir / "timothy.db"
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA journal_mode = DELETE")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 3}")
    conn.close()
    header = path.read_bytes()[:100]
    assert header[18:20] == b"\x01\x01"  # rollback journal, not WAL
    return path


def test_a_newer_file_in_rollback_mode_is_refused_before_anything_touches_it(
    data_dir: Path,
) -> None:
    path = newer_in_rollback_mode(data_dir)
    before = path.read_bytes()
    files = sorted(os.listdir(data_dir))
    for check in DamageCheck:
        with pytest.raises(StoreError, match=r"newer Timothy.*left untouched"):
            Store.open(data_dir, check=check)
    after = path.read_bytes()
    assert after[18:20] == b"\x01\x01"  # not switched to WAL
    assert after[24:28] == before[24:28]  # the change counter
    assert after == before
    assert sorted(os.listdir(data_dir)) == files  # no -wal, -shm or -journal made


def test_a_data_folder_that_cannot_be_made_is_named_with_the_reason(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError) as refused:
        Store.open(blocker / "data")
    assert str(refused.value) == (
        f"Cannot create the data folder {blocker / 'data'}: {blocker} is a file, not a folder."
    )
    with pytest.raises(StoreError, match="is a file, not a folder"):
        Store.open(blocker)


@pytest.mark.parametrize("bad", ["abc\udcff", "\udce9t\udce9", "01M8\ud800"])
def test_ids_no_store_could_hold_are_simply_not_found(store: Store, bad: str) -> None:
    store.memories.add("a fact")
    for look_up in (
        store.memories.get,
        store.memories.chain,
        store.memories.archive,
        store.memories.confirm,
        store.sessions.get,
    ):
        with pytest.raises(NotFoundError, match=r"No (memory|conversation) has the id"):
            look_up(bad)


def test_a_check_problem_is_told_on_one_line() -> None:
    found = (
        "*** in database main ***\n"
        "Tree 36 page 212: btreeInitPage() returns error code 11\n"
        "Tree 2 page 215: free space corruption"
    )
    assert first_problem([found, "row 3 missing"]) == (
        "Tree 36 page 212: btreeInitPage() returns error code 11"
    )
    assert first_problem(["database disk image is malformed"]) == (
        "database disk image is malformed"
    )
    assert first_problem([]) == "no answer"
