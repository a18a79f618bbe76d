"""A server that answers but turns this machine away (a wrong or missing password, an unknown
user or database) is said to be that, with what to do, never "did not answer ... check that
it is running": it is running, and retrying alone will not mend it."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from tests.fakes.postgres import PgServer, password_role
from timothy.errors import StoreError, StoreUnreachableError
from timothy.store.location import check_server
from timothy.store.postgres import PostgresStore


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
