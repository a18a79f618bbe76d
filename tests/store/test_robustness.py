"""Bad input and bad files: clear errors, graceful waits, and nothing saved is ever lost."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from timothy.errors import DatabaseLockedError, InvalidInputError, StoreError
from timothy.store import Store
from timothy.store.migrations import SCHEMA_VERSION
from timothy.text import strip_invisible


@pytest.mark.parametrize("text", ["", "   ", "\n\t \u3000", "\x00", " \x00\x1b\u200b\u2060 "])
def test_empty_text_is_refused(store: Store, text: str) -> None:
    with pytest.raises(InvalidInputError, match="empty"):
        store.memories.add(text)
    with pytest.raises(InvalidInputError, match="empty"):
        store.memories.stage(text)
    memory = store.memories.add("something")
    with pytest.raises(InvalidInputError, match="empty"):
        store.memories.supersede(memory.id, text)
    assert store.memories.count() == 1


def test_text_over_the_limit_is_refused_with_the_limit_named(store: Store) -> None:
    store.memories.add("x" * 20_000)
    with pytest.raises(InvalidInputError, match="20,000"):
        store.memories.add("x" * 20_001)
    assert store.memories.count() == 1


@pytest.mark.parametrize(
    "text",
    [
        "I love 🍣 and 👩‍👩‍👧‍👦 emoji",
        "שלום, my neighbour is مريم",
        "nul\x00inside",
        "zero\u200bwidth and \u202eRTL override",
        "combining é vs é",
        "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 math letters",
    ],
)
def test_any_unicode_is_stored_and_returned_intact(store: Store, text: str) -> None:
    memory = store.memories.add(text, entities=[text[:10]])
    again = store.memories.get(memory.id)
    assert again.content == text
    assert again.entities == (text[:10].strip(),)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.characters(exclude_categories=["Cs"]), min_size=1, max_size=300))
def test_round_trip_of_arbitrary_text(store: Store, text: str) -> None:
    # Nothing that shows (white space, control and zero-width characters only): refused.
    if not re.search(r"[^\s\x00-\x1f\x7f-\x9f]", strip_invisible(text)):
        with pytest.raises(InvalidInputError):
            store.memories.add(text)
        return
    memory = store.memories.add(text)
    assert store.memories.get(memory.id).content == text.strip()
    # Searching for it never raises, whatever the text holds.
    store.memories.list(text=text)


def test_lone_surrogates_get_a_clear_error(store: Store) -> None:
    with pytest.raises(InvalidInputError, match="broken characters"):
        store.memories.add("half \ud800 a character")


def test_corrupt_file_is_refused_and_left_untouched(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    path = data_dir / "timothy.db"
    garbage = os.urandom(64 * 1024)
    path.write_bytes(garbage)
    with pytest.raises(StoreError, match="damaged or is not a Timothy database"):
        Store.open(data_dir)
    assert path.read_bytes() == garbage
    assert not (data_dir / "timothy.db-wal").exists()


def test_damaged_sqlite_file_gives_a_clear_error_and_is_left_untouched(data_dir: Path) -> None:
    with Store.open(data_dir) as store:
        for i in range(200):
            store.memories.add(f"memory {i} " + "padding " * 40)
        conn = store.db.connection()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    path = data_dir / "timothy.db"
    damaged = bytearray(path.read_bytes())
    # Keep the header, wreck the pages behind it (the schema page included).
    damaged[100:] = os.urandom(len(damaged) - 100)
    path.write_bytes(bytes(damaged))
    with pytest.raises(StoreError, match="damaged"), Store.open(data_dir) as store:
        store.memories.list()
    assert path.read_bytes() == bytes(damaged)


def test_database_from_a_newer_version_is_refused(data_dir: Path) -> None:
    with Store.open(data_dir):
        pass
    path = data_dir / "timothy.db"
    conn = apsw.Connection(str(path))
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="newer Timothy"):
        Store.open(data_dir)
    assert path.read_bytes() == before


def test_locked_database_waits_then_errors_cleanly(data_dir: Path) -> None:
    with Store.open(data_dir) as store:
        kept = store.memories.add("written before the lock")
    blocker = apsw.Connection(str(data_dir / "timothy.db"))
    blocker.execute("BEGIN EXCLUSIVE")
    try:
        with Store.open(data_dir, busy_timeout_ms=300) as store:
            started = time.monotonic()
            with pytest.raises(DatabaseLockedError, match="in use by another program"):
                store.memories.add("blocked")
            assert time.monotonic() - started >= 0.25  # it waited for the lock first
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    with Store.open(data_dir) as store:
        assert [m.content for m in store.memories.list()] == [kept.content]
        store.memories.add("after the lock")
        assert store.memories.count() == 2


def test_another_programs_database_is_refused_and_left_untouched(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    path = data_dir / "timothy.db"
    conn = apsw.Connection(str(path))
    conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    conn.execute("INSERT INTO notes (body) VALUES ('not a memory')")
    conn.close()
    before = path.read_bytes()
    foreign = r"not a Timothy database \(it holds other tables: notes\)"
    with pytest.raises(StoreError, match=foreign):
        Store.open(data_dir)
    assert path.read_bytes() == before
    assert not (data_dir / "timothy.db-wal").exists()


def test_an_empty_sqlite_file_becomes_a_store(data_dir: Path) -> None:
    data_dir.mkdir(parents=True)
    path = data_dir / "timothy.db"
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA user_version = 0")
    conn.execute("CREATE TABLE t (x)")
    conn.execute("DROP TABLE t")  # a header and a schema page, no table
    conn.close()
    with Store.open(data_dir) as store:
        store.memories.add("a first memory")
        assert store.memories.count() == 1
