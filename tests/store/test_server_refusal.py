"""A server that answers but turns this machine away (a wrong or missing password, an unknown
user or database) is said to be that, with what to do, never "did not answer ... check that
it is running": it is running, and retrying alone will not mend it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from tests.fakes.embedder import HashingEmbedder
from tests.fakes.postgres import PgServer, password_role
from timothy import secrets
from timothy.assistant import embedding_state
from timothy.errors import StoreError, StoreUnreachableError
from timothy.store.location import StoreSettings, check_server, open_store, store_password_key
from timothy.store.postgres import PostgresStore
from timothy.store.postgres.changes import REFUSED_PAUSES_SECONDS
from timothy.store.postgres.migrations import SCHEMA_VERSION

BACK_SECONDS = 20.0  # well under the 30 s a second refusal waits: only a try at once meets it


def refusal(address: str, folder: Path) -> str:
    with pytest.raises(StoreUnreachableError) as caught:
        PostgresStore(address, follow_changes=False, outbox_dir=folder)
    return str(caught.value)


def test_a_wrong_password_is_said_to_be_one(pg_server: PgServer, tmp_path: Path) -> None:
    address = password_role(pg_server, "owner_with_password", "right")
    message = refusal(make_conninfo(address, password="wrong"), tmp_path)
    assert "did not answer" not in message and "running" not in message
    assert (
        'refused this machine: password authentication failed for user "owner_with_password"'
        in message
    )
    assert "`timothy store password " in message


def test_no_password_at_all_is_said_to_be_missing(pg_server: PgServer, tmp_path: Path) -> None:
    address = password_role(pg_server, "owner_with_password", "right")
    message = refusal(address, tmp_path)
    assert "refused this machine: it asks for a password and none is stored" in message
    assert "`timothy store password " in message


def test_an_unknown_database_is_said_to_be_one(pg_server: PgServer, tmp_path: Path) -> None:
    message = refusal(make_conninfo(pg_server.uri, dbname="timothyy"), tmp_path)
    assert 'refused this machine: database "timothyy" does not exist' in message
    assert "Check the user and the database in the address" in message


def test_the_window_is_told_why_it_works_from_this_machine(
    pg_server: PgServer, tmp_path: Path
) -> None:
    """The app's store opens without the server (nothing kept here is lost) and says why."""
    address = password_role(pg_server, "owner_with_password", "right")
    wrong = make_conninfo(address, password="wrong")
    with PostgresStore(wrong, outbox_dir=tmp_path, start_offline=True) as store:
        assert not store.reachable
        assert store.refused is not None
        assert 'password authentication failed for user "owner_with_password"' in store.refused


def test_a_database_without_pgvector_that_this_user_cannot_add_is_not_called_ready(
    pg_server: PgServer, tmp_path: Path
) -> None:
    """Settings ▸ Storage's test: a server that has pgvector to install, in a database
    without it, for a user who may not install it, would fail at the first use."""
    with psycopg.connect(pg_server.uri, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = 'plain_owner'").fetchone() is None:
            conn.execute("CREATE ROLE plain_owner LOGIN")
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = 'no_vector'").fetchone() is None:
            conn.execute("CREATE DATABASE no_vector OWNER plain_owner")
    address = make_conninfo(pg_server.uri, user="plain_owner", dbname="no_vector")
    with pytest.raises(StoreError) as caught:
        check_server(address)
    assert "CREATE EXTENSION vector" in str(caught.value)
    # What opening it then says (unchanged): the same advice.
    with pytest.raises(StoreError) as opening:
        PostgresStore(address, follow_changes=False, outbox_dir=tmp_path)
    assert "CREATE EXTENSION vector" in str(opening.value)


def feed_waits(caplog: pytest.LogCaptureFixture) -> list[float]:
    """The pauses the change feed announced after each refused login, in order."""
    marker = "trying again in "
    return [
        float(record.getMessage().rsplit(marker, 1)[1].removesuffix(" s"))
        for record in caplog.records
        if marker in record.getMessage()
    ]


def wait_for(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        threading.Event().wait(0.05)  # polling another thread's state, bounded
    return True


def owned_database(server: PgServer) -> str:
    """A database with pgvector that the password role owns, and its address as the owner
    types it in Settings ▸ Storage (no password)."""
    address = password_role(server, "owner_with_password", "right")
    with psycopg.connect(server.uri, autocommit=True) as conn:
        name = "owned_by_password_owner"
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            conn.execute(f"CREATE DATABASE {name} OWNER owner_with_password")
            with psycopg.connect(make_conninfo(server.uri, dbname=name), autocommit=True) as db:
                db.execute("CREATE EXTENSION IF NOT EXISTS vector")
    host = str(conninfo_to_dict(address).get("host") or "")
    return f"postgresql://owner_with_password@/owned_by_password_owner?host={host}"


@pytest.fixture
def wrong_password_store(pg_server: PgServer, tmp_path: Path) -> Iterator[PostgresStore]:
    """The app's store, as the app opens it (the password from the keyring), with the
    keyring holding a wrong one."""
    address = owned_database(pg_server)
    secrets.set_secret(store_password_key(address), "wrong")
    opened = open_store(settings=StoreSettings(engine="postgres", url=address), data_dir=tmp_path)
    assert isinstance(opened, PostgresStore)
    with opened:
        yield opened


def test_a_refused_login_is_tried_less_and_less_often(
    wrong_password_store: PostgresStore, caplog: pytest.LogCaptureFixture
) -> None:
    """10 s, 30 s, 60 s, then every 5 minutes: a refusal will not mend by waiting, and each
    try is a failed login in the server's log. The owner's "try again" is tried at once."""
    store = wrong_password_store
    assert store.changes is not None and store.refused is not None
    caplog.set_level(logging.WARNING, logger="timothy.store.postgres.changes")
    expected = [*REFUSED_PAUSES_SECONDS, REFUSED_PAUSES_SECONDS[-1]]
    assert expected == [10.0, 30.0, 60.0, 300.0, 300.0]
    for tries in range(1, len(expected) + 1):
        assert wait_for(lambda tries=tries: len(feed_waits(caplog)) >= tries, BACK_SECONDS)
        if tries < len(expected):
            store.retry_now()
    assert feed_waits(caplog) == expected
    assert not store.reachable


def test_a_password_put_right_is_used_at_once_without_a_restart(
    wrong_password_store: PostgresStore, pg_server: PgServer, caplog: pytest.LogCaptureFixture
) -> None:
    store = wrong_password_store
    assert store.changes is not None
    caplog.set_level(logging.WARNING, logger="timothy.store.postgres.changes")
    assert wait_for(lambda: len(feed_waits(caplog)) >= 1, BACK_SECONDS)
    store.retry_now()  # still wrong: the next try waits 30 s
    assert wait_for(lambda: len(feed_waits(caplog)) >= 2, BACK_SECONDS)
    secrets.set_secret(
        store_password_key(owned_database(pg_server)), "right"
    )  # `timothy store password`
    store.retry_now()
    # Calls go through first, the refusal is cleared once what was kept here is handed over.
    assert wait_for(lambda: store.reachable and store.refused is None, BACK_SECONDS)
    assert store.memories.add("Reached with the new password").content


def test_a_server_that_only_does_not_answer_keeps_the_quick_retry(
    wrong_password_store: PostgresStore, pg_server: PgServer, caplog: pytest.LogCaptureFixture
) -> None:
    """The refusals' slow pace ends when the server stops answering at all (it will mend)."""
    store = wrong_password_store
    assert store.changes is not None
    caplog.set_level(logging.WARNING, logger="timothy.store.postgres.changes")
    assert wait_for(lambda: store.changes is not None and store.changes.refusals == 1, 20)
    pg_server.kill()
    try:
        store.retry_now()
        assert wait_for(
            lambda: any("lost the change feed" in r.getMessage() for r in caplog.records), 20
        )
        assert store.changes.refusals == 0
    finally:
        pg_server.start()


def test_vector_search_waits_for_a_server_that_refused_the_login_and_says_why(
    pg_server: PgServer, tmp_path: Path
) -> None:
    """The status bar's reason for vector search being off is the refusal, not an outage."""
    address = password_role(pg_server, "owner_with_password", "right")
    wrong = make_conninfo(address, password="wrong")
    with PostgresStore(wrong, outbox_dir=tmp_path, start_offline=True) as store:
        state = embedding_state(store, HashingEmbedder())
    assert state.problem is not None and "out of reach" not in state.problem
    assert state.problem == (
        "the memory server refused this computer's login (password authentication failed "
        'for user "owner_with_password")'
    )


def not_owner_database(server: PgServer) -> str:
    """A database with pgvector that the password role may log into but not create tables
    in (PostgreSQL 15 and later no longer let everyone create in `public`), and its address
    with the password, as a machine whose keyring holds the right one connects."""
    address = password_role(server, "owner_with_password", "right")
    with psycopg.connect(server.uri, autocommit=True) as conn:
        name = "owned_by_someone_else"
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            conn.execute(f"CREATE DATABASE {name}")
            with psycopg.connect(make_conninfo(server.uri, dbname=name), autocommit=True) as db:
                db.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return make_conninfo(address, dbname="owned_by_someone_else", password="right")


def test_a_user_who_may_not_create_tables_is_told_so_not_called_ready(
    pg_server: PgServer, tmp_path: Path
) -> None:
    """Settings ▸ Storage's test said "ready for Timothy", and opening the store then said
    to run CREATE EXTENSION vector (installed already): the missing right is the tables'."""
    address = not_owner_database(pg_server)
    with pytest.raises(StoreError) as caught:
        check_server(address)
    said = str(caught.value)
    assert "ready" not in said and "CREATE EXTENSION" not in said
    assert "may not create tables" in said
    assert "ALTER DATABASE owned_by_someone_else OWNER TO owner_with_password" in said
    with pytest.raises(StoreError) as opening:
        PostgresStore(address, follow_changes=False, outbox_dir=tmp_path)
    said = str(opening.value)
    assert "CREATE EXTENSION" not in said and "may not create tables" in said
    assert "ALTER DATABASE owned_by_someone_else OWNER TO owner_with_password" in said


def test_a_server_set_up_by_a_newer_timothy_is_not_called_usable(pg_url: str) -> None:
    """The test said "✓ … holds 1 memories (schema 99)"; the store then refuses it."""
    with PostgresStore(pg_url, follow_changes=False) as server:
        server.memories.add("Kept by a newer Timothy")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE timothy_schema SET version = 99")
    with pytest.raises(StoreError) as caught:
        check_server(pg_url)
    assert "set up by a newer Timothy (schema 99" in str(caught.value)
    assert "Update Timothy on this machine" in str(caught.value)


def test_one_memory_is_said_as_one(pg_url: str) -> None:
    with PostgresStore(pg_url, follow_changes=False) as server:
        server.memories.add("Only this")
    assert check_server(pg_url).endswith(f"holds 1 memory (schema {SCHEMA_VERSION}).")
