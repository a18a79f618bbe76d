"""Full text knows the day each memory was made: a question naming a date finds that day."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import apsw
import pytest

from timothy.store import Store
from timothy.store.migrations import MIGRATIONS, SCHEMA_VERSION, apply_migration

NOON_7_MAY_2023 = datetime(2023, 5, 7, 12, tzinfo=UTC)
NOON_20_JUNE_2023 = datetime(2023, 6, 20, 12, tzinfo=UTC)
NOON_7_MAY_2024 = datetime(2024, 5, 7, 12, tzinfo=UTC)


@pytest.fixture(autouse=True)
def zone(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    """The process's local time zone (SQLite's 'localtime' follows it): UTC unless a test
    sets another, so the days above are the days wherever the tests run."""

    def set_zone(name: str) -> None:
        monkeypatch.setenv("TZ", name)
        time.tzset()

    set_zone("UTC")
    yield set_zone
    monkeypatch.undo()
    time.tzset()


def test_a_date_in_the_question_finds_what_was_said_that_day(store: Store) -> None:
    hike = store.memories.add("Went hiking with the kids", now=NOON_7_MAY_2023)
    store.memories.add("Bought a new bike", now=NOON_20_JUNE_2023)
    store.memories.add("Painted the fence", now=NOON_7_MAY_2024)
    assert store.search.text("What did I do on 7 May, 2023?", 30)[0] == hike.id
    found = store.search.text("What happened in June 2023?", 30)
    assert store.memories.get(found[0]).created_at == NOON_20_JUNE_2023


def test_the_entity_leg_ranks_a_named_day_first(store: Store) -> None:
    june = store.memories.add("Started a pottery class", entities=["Zoë"], now=NOON_20_JUNE_2023)
    may = store.memories.add("Ran a charity race", entities=["Zoë"], now=NOON_7_MAY_2023)
    store.memories.add("Adopted a puppy", entities=["Max"], now=NOON_7_MAY_2023)
    # Without the day, the most recently confirmed would come first: June.
    assert store.search.entity("What did Zoë do in May 2023?", 30) == [may.id, june.id]


def test_the_day_is_the_owners_local_day(data_dir: Path, zone: Callable[[str], None]) -> None:
    evening_in_utc = datetime(2023, 5, 7, 20, tzinfo=UTC)
    zone("Pacific/Auckland")  # 8 May, 08:00
    with Store.open(data_dir) as store:
        kiwi = store.memories.add("Breakfast by the harbour", now=evening_in_utc)
    zone("America/Los_Angeles")  # 7 May, 13:00
    with Store.open(data_dir) as store:
        californian = store.memories.add("Lunch on the pier", now=evening_in_utc)
        assert store.search.text("8", 30) == [kiwi.id]
        assert store.search.text("7", 30) == [californian.id]
        # Each row keeps the day it was written with: removing one is still clean.
        store.memories.supersede(kiwi.id, "Breakfast by the harbour, with Zoë")
        store.db.connection().execute(
            "INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)"
        )


def test_browsing_matches_what_memories_say_not_their_day(store: Store) -> None:
    hiking = store.memories.add("Went hiking", now=NOON_7_MAY_2023)
    maybe = store.memories.add("Maybe buy a kayak", now=NOON_20_JUNE_2023)
    # ("may" may find "Maybe" as a prefix, by the engine's stemming; never the May hike.)
    assert hiking.id not in [m.id for m in store.memories.list(text="may")]
    assert [m.id for m in store.memories.list(text="ma")] == [maybe.id]
    assert store.search.text("May", 30) != []  # recall does look at the day


@pytest.mark.sqlite_only
def test_the_index_follows_raw_updates_and_deletes(store: Store) -> None:
    memory = store.memories.add("Sailing lesson", now=NOON_7_MAY_2023)
    conn = store.db.connection()
    conn.execute(
        "UPDATE memories SET content = 'Rowing lesson', created_at = ? WHERE id = ?",
        ("2023-06-20T12:00:00.000000Z", memory.id),
    )
    assert store.search.text("sailing", 30) == []
    assert store.search.text("rowing june", 30) == [memory.id]
    assert store.search.text("may", 30) == []
    conn.execute("DELETE FROM memories WHERE id = ?", (memory.id,))
    assert store.search.text("rowing june", 30) == []
    conn.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)")


def test_a_store_from_before_indexes_its_memories_days(data_dir: Path) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    conn = apsw.Connection(str(data_dir / "timothy.db"))
    before = 4  # the schema before full text knew days (migration 5 taught it)
    for migration in MIGRATIONS[:before]:
        apply_migration(conn, migration)
    conn.execute(f"PRAGMA user_version = {before}")
    conn.execute(
        "INSERT INTO memories (id, type, content, status, confidence, source, created_at) "
        "VALUES ('01OLD', 'episodic', 'Went hiking', 'active', 1.0, 'manual', ?)",
        ("2023-05-07T12:00:00.000000Z",),
    )
    conn.close()
    with Store.open(data_dir) as store:
        assert store.db.schema_version() == SCHEMA_VERSION
        assert store.search.text("hiking", 30) == ["01OLD"]
        assert store.search.text("May 2023", 30) == ["01OLD"]
        store.memories.add("Went sailing", now=NOON_20_JUNE_2023)
        assert len(store.search.text("went", 30)) == 2
