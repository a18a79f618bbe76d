"""Numbered migrations: SQL or Python, each applied once, in order, whole or not at all."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from timothy.errors import StoreError
from timothy.store import Store
from timothy.store.db import Database
from timothy.store.memories import MemoryRepository
from timothy.store.migrations import MIGRATIONS, SCHEMA_VERSION, Migration, apply_migration
from timothy.store.postgres import PostgresStore
from timothy.store.postgres.database import PgDatabase
from timothy.store.postgres.migrations import MIGRATIONS as PG_MIGRATIONS


def user_version(path: Path) -> int:
    conn = apsw.Connection(str(path))
    try:
        return int(conn.execute("PRAGMA user_version").fetchall()[0][0])
    finally:
        conn.close()


def contents(path: Path) -> list[str]:
    conn = apsw.Connection(str(path))
    try:
        return [row[0] for row in conn.execute("SELECT content FROM memories ORDER BY seq")]
    finally:
        conn.close()


@pytest.fixture
def shipped(data_dir: Path) -> Path:
    """A database at today's schema holding two memories."""
    with Store.open(data_dir) as store:
        store.memories.add("first fact")
        store.memories.add("second fact")
    return data_dir / "timothy.db"


def misnumbered(migrations: list[Migration]) -> list[str]:
    """Python migrations not named for their number (`m006_...` for the sixth), like llm's."""
    return [
        migration.__name__
        for number, migration in enumerate(migrations, start=1)
        if not isinstance(migration, str) and not migration.__name__.startswith(f"m{number:03d}_")
    ]


def test_the_shipped_migrations_are_numbered_in_order() -> None:
    assert SCHEMA_VERSION == len(MIGRATIONS) >= 5
    assert misnumbered(MIGRATIONS) == []

    def m007_one_too_far(conn: apsw.Connection) -> None: ...

    assert misnumbered([*MIGRATIONS[:5], m007_one_too_far]) == ["m007_one_too_far"]


def test_a_python_migration_rewrites_data_once_and_in_order(shipped: Path) -> None:
    calls: list[str] = []

    def mark_facts(conn: apsw.Connection) -> None:
        assert conn.in_transaction  # its own transaction, shared with the version bump
        calls.append("mark_facts")
        rows = conn.execute("SELECT seq, content FROM memories").fetchall()
        for seq, content in rows:
            conn.execute("UPDATE memories SET content = ? WHERE seq = ?", (content + "!", seq))

    note_sql = "INSERT INTO meta (key, value) VALUES ('note_sql', 'ran');"

    def check_order(conn: apsw.Connection) -> None:
        calls.append("check_order")
        # the two before it have run, and it has not yet: the order is the list's
        assert conn.execute("PRAGMA user_version").fetchall()[0][0] == SCHEMA_VERSION + 2
        assert conn.execute("SELECT value FROM meta WHERE key = 'note_sql'").fetchall() == [
            ("ran",)
        ]

    later: list[Migration] = [*MIGRATIONS, mark_facts, note_sql, check_order]
    with Database(shipped, migrations=later) as db:
        assert db.schema_version() == len(later) == SCHEMA_VERSION + 3
    assert calls == ["mark_facts", "check_order"]
    assert contents(shipped) == ["first fact!", "second fact!"]

    with Database(shipped, migrations=later) as db:  # opened again: nothing runs twice
        assert db.schema_version() == SCHEMA_VERSION + 3
    assert calls == ["mark_facts", "check_order"]
    assert contents(shipped) == ["first fact!", "second fact!"]


def test_a_new_file_runs_every_migration_sql_and_python_in_order(data_dir: Path) -> None:
    seen: list[int] = []

    def note_version(conn: apsw.Connection) -> None:
        seen.append(int(conn.execute("PRAGMA user_version").fetchall()[0][0]))

    data_dir.mkdir(parents=True)
    with Database(data_dir / "timothy.db", migrations=[*MIGRATIONS, note_version]) as db:
        assert db.schema_version() == SCHEMA_VERSION + 1
    assert seen == [SCHEMA_VERSION]  # after every shipped migration, before its own bump


@pytest.mark.parametrize("failure", ["exception", "sql error"])
def test_a_failing_migration_rolls_back_whole(shipped: Path, failure: str) -> None:
    ran: list[str] = []

    def half_done(conn: apsw.Connection) -> None:
        conn.execute("UPDATE memories SET content = 'rewritten'")
        conn.execute("INSERT INTO meta (key, value) VALUES ('half', 'done')")
        if failure == "exception":
            raise ValueError("bad row")
        conn.execute("SELECT * FROM no_such_table")

    def never(conn: apsw.Connection) -> None:
        ran.append("never")

    with pytest.raises(
        StoreError,
        match=rf"to schema {SCHEMA_VERSION + 1} failed .* left at schema {SCHEMA_VERSION}\.",
    ) as raised:
        Database(shipped, migrations=[*MIGRATIONS, half_done, never])
    assert isinstance(raised.value.__cause__, ValueError | apsw.SQLError)
    assert user_version(shipped) == SCHEMA_VERSION
    assert contents(shipped) == ["first fact", "second fact"]
    assert ran == []
    with Store.open(shipped.parent) as store:  # the file still opens as it was
        assert store.db.get_meta("half") is None
        assert store.memories.count() == 2


def test_a_migration_may_not_end_its_transaction(shipped: Path) -> None:
    def commits(conn: apsw.Connection) -> None:
        conn.execute("COMMIT")

    with pytest.raises(StoreError, match="ended the transaction"):
        Database(shipped, migrations=[*MIGRATIONS, commits])
    assert user_version(shipped) == SCHEMA_VERSION


def test_a_fixed_migration_runs_after_a_failed_one(shipped: Path) -> None:
    def failing(conn: apsw.Connection) -> None:
        conn.execute("UPDATE memories SET content = 'lost'")
        raise RuntimeError("not yet")

    def fixed(conn: apsw.Connection) -> None:
        conn.execute("UPDATE memories SET content = upper(content)")

    with pytest.raises(StoreError):
        Database(shipped, migrations=[*MIGRATIONS, failing])
    with Database(shipped, migrations=[*MIGRATIONS, fixed]) as db:
        assert db.schema_version() == SCHEMA_VERSION + 1
    assert contents(shipped) == ["FIRST FACT", "SECOND FACT"]


# -- 8 (the file) and 6 (the server): the words memories say as written ------------------

OLD_MEMORIES = ["I went running", "Buy a shopping list", "She likes tea"]


def test_a_file_from_before_gets_the_words_as_written_for_search_as_you_type(
    data_dir: Path,
) -> None:
    path = data_dir / "timothy.db"
    data_dir.mkdir(parents=True)
    old = Database(path, migrations=MIGRATIONS[:7])
    with old.write() as conn:
        for seq, text in enumerate([*OLD_MEMORIES, "A memory removed by hand"], start=1):
            conn.execute(
                "INSERT INTO memories (seq, id, type, content, status, confidence, source, "
                "created_at) VALUES (?, ?, 'semantic', ?, 'active', 1.0, 'manual', "
                "'2025-01-01T00:00:00Z')",
                (seq, f"m{seq}", text),
            )
        conn.execute("DELETE FROM memories WHERE seq = 4")
    old.close()

    with Store.open(data_dir) as store:
        assert store.db.schema_version() == SCHEMA_VERSION
        assert [m.id for m in store.memories.list(text="runn")] == ["m1"]
        assert [m.id for m in store.memories.list(text="lis")] == ["m2"]
        assert store.memories.list(text="remov") == []
        # Kept up to date from then on, as memories come and change.
        new = store.memories.add("Runner beans in the garden")
        assert {m.id for m in store.memories.list(text="runn")} == {"m1", new.id}
        edited = store.memories.supersede(new.id, "Broad beans in the garden")
        store.memories.archive(edited.id)
        assert {m.id for m in store.memories.list(text="runn")} == {"m1", new.id}
        with store.db.read() as conn:
            conn.execute(
                "INSERT INTO memory_words (memory_words, rank) VALUES ('integrity-check', 1)"
            )
            assert conn.execute("SELECT count(*) FROM memory_words").fetchall() == [(5,)]
    assert contents(path)[:3] == OLD_MEMORIES  # the memories themselves untouched


def test_the_words_migration_run_again_makes_the_same_index(shipped: Path) -> None:
    """Migration 8 on a file that has it already (a copy restored mid-upgrade, say): the
    index is made afresh, one row per memory, and nothing else changes."""
    with Database(shipped) as db:
        with db.write() as conn:
            apply_migration(conn, MIGRATIONS[7])
            apply_migration(conn, MIGRATIONS[7])
        with db.read() as conn:
            assert conn.execute("SELECT count(*) FROM memory_words").fetchall() == [(2,)]
            conn.execute(
                "INSERT INTO memory_words (memory_words, rank) VALUES ('integrity-check', 1)"
            )
        repository = MemoryRepository(db)
        assert len(repository.list(text="fir")) == 1
        repository.add("third fact")
        assert len(repository.list(text="fac")) == 3
    assert contents(shipped) == ["first fact", "second fact", "third fact"]


def test_a_server_from_before_gets_the_words_as_written_for_search_as_you_type(
    pg_url: str,
) -> None:
    old = PgDatabase(pg_url, migrations=PG_MIGRATIONS[:5])
    try:
        with old.write() as conn:
            for place, text in enumerate(OLD_MEMORIES, start=1):
                conn.execute(
                    "INSERT INTO memories (id, type, content, day, status, confidence, "
                    "source, created_at) VALUES (%s, 'semantic', %s, '1 May 2025', 'active', "
                    "1, 'manual', now())",
                    (f"m{place}", text),
                )
    finally:
        old.close()
    with PostgresStore(pg_url, follow_changes=False) as store:
        assert store.db.schema_version() == len(PG_MIGRATIONS)
        assert [m.id for m in store.memories.list(text="runn")] == ["m1"]
        assert [m.id for m in store.memories.list(text="lis")] == ["m2"]
        new = store.memories.add("Runner beans in the garden")
        assert {m.id for m in store.memories.list(text="runn")} == {"m1", new.id}


OLD_ENTITIES = [("m1", ["José", "Jose"]), ("m2", ["Müller", "Anna"]), ("m3", ["Zoë"])]


def test_a_file_from_before_finds_its_names_with_or_without_accents(data_dir: Path) -> None:
    path = data_dir / "timothy.db"
    data_dir.mkdir(parents=True)
    old = Database(path, migrations=MIGRATIONS[:8])
    with old.write() as conn:
        for seq, (memory_id, names) in enumerate(OLD_ENTITIES, start=1):
            conn.execute(
                "INSERT INTO memories (seq, id, type, content, status, confidence, source, "
                "created_at) VALUES (?, ?, 'semantic', 'a fact', 'active', 1.0, 'manual', "
                "'2025-01-01T00:00:00Z')",
                (seq, memory_id),
            )
            for position, name in enumerate(names):
                conn.execute(
                    "INSERT INTO memory_entities (memory_seq, position, name, norm) "
                    "VALUES (?, ?, ?, ?)",
                    (seq, position, name, name.casefold()),
                )
    old.close()

    with Store.open(data_dir) as store:
        assert store.db.schema_version() == SCHEMA_VERSION
        assert store.search.entity("Jose", 30) == ["m1"]
        assert store.search.entity("muller and anna", 30) == ["m2"]
        assert store.search.entity("ZOE", 30) == ["m3"]
        assert store.memories.get("m1").entities == ("José", "Jose")  # both kept as written
        new = store.memories.add("Moved away", entities=["Zoe"])
        assert set(store.search.entity("Zoë", 30)) == {"m3", new.id}


def test_a_server_from_before_finds_its_names_with_or_without_accents(pg_url: str) -> None:
    old = PgDatabase(pg_url, migrations=PG_MIGRATIONS[:6])
    try:
        with old.write() as conn:
            for memory_id, names in OLD_ENTITIES:
                row = conn.execute(
                    "INSERT INTO memories (id, type, content, day, status, confidence, "
                    "source, created_at) VALUES (%s, 'semantic', 'a fact', '1 May 2025', "
                    "'active', 1, 'manual', now()) RETURNING seq",
                    (memory_id,),
                ).fetchone()
                assert row is not None
                for position, name in enumerate(names):
                    conn.execute(
                        "INSERT INTO memory_entities (memory_seq, position, name, norm) "
                        "VALUES (%s, %s, %s, %s)",
                        (row[0], position, name, name.casefold()),
                    )
    finally:
        old.close()
    with PostgresStore(pg_url, follow_changes=False) as store:
        assert store.db.schema_version() == len(PG_MIGRATIONS)
        assert store.search.entity("Jose", 30) == ["m1"]
        assert store.search.entity("muller and anna", 30) == ["m2"]
        assert store.search.entity("ZOE", 30) == ["m3"]
        assert store.memories.get("m1").entities == ("José", "Jose")
        new = store.memories.add("Moved away", entities=["Zoe"])
        assert set(store.search.entity("Zoë", 30)) == {"m3", new.id}
