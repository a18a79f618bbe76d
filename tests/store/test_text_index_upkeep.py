"""The file's text indexes stay in few segments however they are written: FTS5 leaves each
small write's terms in a segment of its own, and every query term is looked up in each."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from timothy.memory.consolidation import consolidate
from timothy.store import Store
from timothy.store.copy import BULK_COPY, copy_store
from timothy.store.db import TEXT_INDEX_MERGE_LEAST
from timothy.store.transfer import BULK_IMPORT, export_to_file, import_from_file

TEXT_INDEXES = ("memories_fts", "memory_words", "messages_fts")


def segments(store: Store, table: str) -> int:
    with store.db.read() as conn:
        return int(conn.execute(f"SELECT count(DISTINCT segid) FROM {table}_idx").fetchall()[0][0])


def test_a_store_written_a_memory_at_a_time_keeps_its_text_indexes_in_few_segments(
    data_dir: Path,
) -> None:
    with Store.open(data_dir) as store:
        session = store.sessions.create()
        made = []
        most = dict.fromkeys(TEXT_INDEXES, 0)
        for number in range(150):
            made.append(store.memories.add(f"Fact {number}: the word marker{number}z, a garden"))
            store.sessions.add_message(
                session.id, "user", f"message {number} about quince{number}z"
            )
            if number % 3 == 0:
                store.memories.archive(made[-1].id)  # a status change rewrites its index rows
            if number % 25 == 24:
                for table in TEXT_INDEXES:
                    most[table] = max(most[table], segments(store, table))
        # Without the merging the indexes held 12-15 segments along the way.
        assert all(count <= 4 for count in most.values()), most
        for table in TEXT_INDEXES:
            with store.db.read() as conn:
                least = conn.execute(
                    f"SELECT v FROM {table}_config WHERE k = 'usermerge'"
                ).fetchall()
            assert least == [(TEXT_INDEX_MERGE_LEAST,)]
        # Merged, the indexes still find every memory and message by its own word.
        for number in (0, 1, 41, 79, 149):
            memory = made[number]
            found = store.memories.list(text=f"marker{number}z")
            assert [m.id for m in found] == [memory.id]
            assert [s.id for s in store.sessions.list(search=f"quince{number}z")] == [session.id]
        active = store.search.text("garden", 100)
        assert sorted(active) == sorted(m.id for i, m in enumerate(made) if i % 3)


def test_a_read_only_transaction_writes_nothing_to_the_text_indexes(data_dir: Path) -> None:
    with Store.open(data_dir) as store:
        store.memories.add("The first memory")
        with store.db.read() as conn:
            before = conn.execute("PRAGMA data_version").fetchall()
            changes = conn.total_changes()
        with store.db.write():
            pass  # nothing changed: no merge, no config written
        with store.db.read() as conn:
            assert conn.total_changes() == changes
            assert conn.execute("PRAGMA data_version").fetchall() == before


def test_a_large_import_leaves_the_text_indexes_in_one_piece(
    data_dir: Path, tmp_path: Path
) -> None:
    exported = tmp_path / "memories.jsonl"
    with Store.open(tmp_path / "source") as source:
        with source.db.write():
            for number in range(BULK_IMPORT):
                source.memories.add(f"Imported fact {number} about word{number}z")
        assert export_to_file(source, exported) == BULK_IMPORT
    with Store.open(data_dir) as store:
        for number in range(40):  # written one at a time: a few pieces merging
            store.memories.add(f"Already here before the import, number {number}")
        assert import_from_file(store, exported) == BULK_IMPORT
        assert segments(store, "memories_fts") == 1
        assert segments(store, "memory_words") == 1
        assert [m.content for m in store.memories.list(text="word499z")] == [
            "Imported fact 499 about word499z"
        ]


def test_a_large_copy_leaves_the_target_text_indexes_in_one_piece(
    data_dir: Path, tmp_path: Path
) -> None:
    with Store.open(tmp_path / "source") as source, Store.open(data_dir) as target:
        with source.db.write():
            for number in range(BULK_COPY):
                source.memories.add(f"Copied fact {number} about word{number}z")
        for number in range(40):  # written one at a time: a few pieces merging
            target.memories.add(f"Already here before the copy, number {number}")
        assert copy_store(source, target).memories_copied == BULK_COPY
        assert segments(target, "memories_fts") == 1
        assert segments(target, "memory_words") == 1
        assert len(target.memories.list(text="word499z")) == 1


def test_the_daily_tidy_up_leaves_the_text_indexes_in_one_piece(data_dir: Path) -> None:
    with Store.open(data_dir) as store:
        with store.db.write():  # a large piece, and the day's small ones beside it
            for number in range(300):
                store.memories.add(f"A fact from before, number {number}")
        for number in range(5):
            store.memories.add(f"A fact written today, number {number}")
        now = datetime.now(UTC)
        consolidate(store, None, now=now, dry_run=True)  # a dry run writes nothing
        pieces = segments(store, "memory_words")
        assert pieces > 1
        consolidate(store, None, now=now)
        assert segments(store, "memories_fts") == 1
        assert segments(store, "memory_words") == 1


def test_an_index_the_merge_cannot_reach_never_fails_a_write(data_dir: Path) -> None:
    with Store.open(data_dir) as store:
        session = store.sessions.create()
        store.memories.add("Written while every index was there")  # the indexes are known
        store.db.connection().execute("DROP TABLE memories_fts")  # gone, as a test may do
        message = store.sessions.add_message(session.id, "user", "saved all the same")
        assert [m.id for m in store.sessions.messages(session.id)] == [message.id]
        assert segments(store, "messages_fts") == 1
