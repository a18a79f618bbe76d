"""Restoring a backup into a store this program has open (the app's Settings > Backups): the
store closes, the file is swapped, and the same Store object reads the restored file."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import apsw
import pytest

from tests.store.damaged import damage, digest, filled_store
from timothy.errors import DatabaseLockedError, InvalidInputError, StoreError
from timothy.store import Store
from timothy.store.backups import RESTORING, aside_path, make_backup, restore_open

NOW = datetime(2026, 3, 5, 9, 0, tzinfo=UTC)


def test_the_open_store_reads_the_restored_file(store: Store, data_dir: Path) -> None:
    kept = store.memories.add("The owner's passport expires in May 2031")
    backup = make_backup(store, now=NOW)
    later = store.memories.add("written after the backup")
    store.memories.archive(kept.id)
    heard: list[str] = []
    store.memories.listeners.append(lambda event, memory: heard.append(event))

    promised = aside_path(store.path, NOW + timedelta(hours=1))  # what the question names

    result = restore_open(store, backup, now=NOW + timedelta(hours=1))

    assert result.memories == 1
    assert result.kept_aside == promised
    assert store.memories.get(kept.id).status.value == "active"  # as it was in the backup
    assert store.memories.count() == 1
    # The same object writes to the restored file, and its listeners still hear.
    store.memories.add("written after the restore")
    assert heard == ["added"]
    assert store.memories.count() == 2
    # The replaced file is kept whole, with what was written after the backup.
    assert result.kept_aside is not None
    old = apsw.Connection(str(result.kept_aside), flags=apsw.SQLITE_OPEN_READONLY)
    assert old.execute("SELECT count(*) FROM memories WHERE id = ?", (later.id,)).fetchall() == [
        (1,)
    ]
    old.close()


def test_a_damaged_backup_is_refused_and_the_store_stays_open_as_it_was(data_dir: Path) -> None:
    filled_store(data_dir)
    with Store.open(data_dir) as store:
        backup = make_backup(store, now=NOW)
        damage(backup)
        store.memories.add("after the backup")
        with pytest.raises(InvalidInputError, match=r"is damaged.*nothing was restored"):
            restore_open(store, backup, now=NOW)
        assert store.memories.count() == 3004
        store.memories.add("still writable")
    assert not list(data_dir.glob("*before-restore*"))


def test_a_damaged_store_is_replaced_and_no_longer_refuses_writes(data_dir: Path) -> None:
    ids = filled_store(data_dir)
    with Store.open(data_dir) as store:
        backup = make_backup(store, now=NOW)
    path = data_dir / "timothy.db"
    damage(path)
    damaged = digest(path)
    with Store.open(data_dir) as store:
        assert store.wait_for_check(30) is not None
        result = restore_open(store, backup, now=NOW)
        assert store.wait_for_check(30) is None
        assert not store.damaged
        assert all(store.memories.get(i) for i in ids)
        store.memories.add("written after the restore")
    assert result.kept_aside is not None and digest(result.kept_aside) == damaged


def test_another_program_holding_the_file_makes_it_refuse(store: Store, data_dir: Path) -> None:
    store.memories.add("in use")
    backup = make_backup(store, now=NOW)
    store.memories.add("after the backup")
    other = Store.open(data_dir)
    other.memories.count()
    try:
        with pytest.raises(DatabaseLockedError, match=r"still in use.*Nothing was restored"):
            restore_open(store, backup, now=NOW)
    finally:
        other.close()
    assert store.memories.count() == 2  # reopened on the file it had
    assert not list(data_dir.glob("*before-restore*"))


def test_while_it_restores_other_threads_are_told_plainly(store: Store) -> None:
    store.memories.add("before")
    told: list[str] = []

    def other_thread() -> None:
        try:
            store.memories.add("from another thread")
        except StoreError as exc:
            told.append(str(exc))

    with store.db.closed_for(RESTORING):
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
        with pytest.raises(StoreError, match="being restored"):
            store.memories.count()
    assert told == [RESTORING]
    assert store.memories.count() == 1  # open again afterwards


def test_vector_search_forgets_the_replaced_files_vectors(store: Store) -> None:
    model = store.vectors.ensure_model("test/embedder", 4)
    kept = store.memories.add("in the backup")
    store.vectors.put(kept.id, model, [1.0, 0.0, 0.0, 0.0])
    backup = make_backup(store, now=NOW)
    later = store.memories.add("after the backup")
    store.vectors.put(later.id, model, [0.0, 1.0, 0.0, 0.0])
    assert store.search.vector(model, [0.0, 1.0, 0.0, 0.0], 5)[0] == later.id  # copy made

    restore_open(store, backup, now=NOW)

    # Written before any search: it may reuse the gone memory's row and change counter.
    new = store.memories.add("after the restore")
    store.vectors.put(new.id, model, [0.0, 0.0, 1.0, 0.0])
    hits = dict(store.search.vector_hits(model, [0.0, 1.0, 0.0, 0.0], 5))
    assert set(hits) == {kept.id, new.id}
    assert max(hits.values()) < 0.5  # nothing like the gone memory's vector is left
    best, score = store.search.vector_hits(model, [0.0, 0.0, 1.0, 0.0], 5)[0]
    assert best == new.id and score == pytest.approx(1.0)
