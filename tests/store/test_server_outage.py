"""When the memory server goes away: nothing acknowledged is lost, new memories wait on this
machine and reach the server when it answers again, and the store recovers by itself."""

from __future__ import annotations

import pytest

from tests.fakes.postgres import PgServer
from timothy.errors import StoreUnreachableError
from timothy.store.postgres import PostgresStore


def test_memories_made_while_the_server_is_down_are_handed_over_when_it_returns(
    pg_server: PgServer, pg_url: str
) -> None:
    with PostgresStore(pg_url, connect_timeout=2) as laptop:
        assert laptop.changes is not None and laptop.changes.wait_connected(0, 10)
        acknowledged = [laptop.memories.add(f"fact number {i}") for i in range(20)]
        before = laptop.changes.connections
        pg_server.kill()
        try:
            proposed = laptop.memories.stage("My sister lives in Lyon", entities=["Lyon"])
            remembered = laptop.memories.add("I am allergic to cats", source="remember")
            assert [m.id for m in laptop.outbox.pending()] == [proposed.id, remembered.id]
            with pytest.raises(StoreUnreachableError, match="did not answer"):
                laptop.memories.promote(acknowledged[0].id)
        finally:
            pg_server.start()
        # The change feed reconnects by itself and hands the kept memories over first.
        assert laptop.changes.wait_connected(before, 60)
        assert laptop.outbox.pending() == []
        assert laptop.memories.count() == 22  # the pool recovered too
    with PostgresStore(pg_url, follow_changes=False) as desktop:
        stored = {m.id: m for m in desktop.memories.list()}
        assert {m.id for m in acknowledged} <= set(stored)
        assert stored[proposed.id] == proposed and stored[remembered.id] == remembered


def test_a_write_cut_off_by_a_server_crash_is_not_acknowledged_and_loses_nothing_else(
    pg_server: PgServer, pg_url: str
) -> None:
    with PostgresStore(pg_url, connect_timeout=2, follow_changes=False) as store:
        acknowledged = [store.memories.add(f"fact number {i}") for i in range(10)]
        try:
            with pytest.raises(StoreUnreachableError), store.db.write() as conn:
                conn.execute("UPDATE memories SET confidence = 0.5")
                pg_server.kill()  # mid-transaction: its COMMIT never happens
                conn.execute("UPDATE memories SET confidence = 0.25")
        finally:
            pg_server.start()
        stored = store.memories.get_many(m.id for m in acknowledged)  # recovered
        assert stored == {m.id: m for m in acknowledged}
        assert {m.confidence for m in stored.values()} == {1.0}
