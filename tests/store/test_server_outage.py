"""When the memory server goes away: nothing acknowledged is lost, new memories wait on this
machine and reach the server when it answers again, and the store recovers by itself."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from tests.fakes.postgres import PgServer, refuse_memories_saying
from timothy.errors import StoreUnreachableError
from timothy.store import Store
from timothy.store.location import open_store
from timothy.store.postgres import PostgresStore
from timothy.store.postgres.outbox import Outbox
from timothy.store.records import Memory


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


def test_what_the_server_refuses_at_the_hand_over_stays_here_and_is_counted(
    pg_server: PgServer, pg_url: str
) -> None:
    """A hand-over the server refuses loses nothing: the memory stays in this machine's
    outbox, `kept_here` says how many changes wait (the window tells the owner), and the
    next reconnection offers them again."""
    with PostgresStore(pg_url, connect_timeout=2) as laptop:
        assert laptop.changes is not None and laptop.changes.wait_connected(0, 10)
        refuse_memories_saying(pg_url, "refuse me")
        assert laptop.kept_here == 0
        before = laptop.changes.connections
        pg_server.kill()
        try:
            refused = laptop.memories.add("Please refuse me, server", source="remember")
            taken = laptop.memories.add("I am allergic to cats", source="remember")
        finally:
            pg_server.start()
        assert laptop.changes.wait_connected(before, 60)
        assert laptop.reachable
        # One write holds the batch: the refusal keeps both here, nothing is half taken.
        assert [m.id for m in laptop.outbox.pending()] == [refused.id, taken.id]
        assert laptop.kept_here == 2
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("DROP TRIGGER refuse_memory ON memories")
        before = laptop.changes.connections
        pg_server.kill()
        pg_server.start()
        assert laptop.changes.wait_connected(before, 60)
        assert laptop.outbox.pending() == [] and laptop.kept_here == 0
        assert {refused.id, taken.id} <= {m.id for m in laptop.memories.list()}


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


def test_conversations_go_on_while_the_server_is_down_and_reach_it_when_it_returns(
    pg_server: PgServer, pg_url: str, tmp_path: Path
) -> None:
    with PostgresStore(pg_url, connect_timeout=2) as laptop:
        assert laptop.changes is not None and laptop.changes.wait_connected(0, 10)
        trip = laptop.sessions.create(title="Trip planning")
        first = laptop.sessions.add_message(trip.id, "user", "Where should we go in May?")
        before = laptop.changes.connections
        pg_server.kill()
        try:
            # Reads come from this machine's mirror, writes are kept there.
            assert [s.id for s in laptop.sessions.list()] == [trip.id]
            assert not laptop.reachable
            asked = laptop.sessions.add_message(trip.id, "user", "What about Lisbon?")
            reply = laptop.sessions.add_message(trip.id, "assistant", "", status="streaming")
            laptop.sessions.update_message(
                reply.id, content="Lisbon is lovely in May.", status="complete"
            )
            offline = laptop.sessions.create()
            laptop.sessions.set_title(offline.id, "Written on the train")
            hello = laptop.sessions.add_message(offline.id, "user", "Hello while offline")
            branch = laptop.sessions.branch(trip.id)
            assert [m.id for m in branch] == [first.id, asked.id, reply.id]
            assert [s.title for s in laptop.sessions.list(search="Lisbon")] == ["Trip planning"]
        finally:
            pg_server.start()
        assert laptop.changes.wait_connected(before, 60)
        assert laptop.reachable and laptop.sessions.pending_count() == 0
        kept = {m.id: m for m in laptop.sessions.messages(trip.id)}
    with PostgresStore(pg_url, follow_changes=False, outbox_dir=tmp_path / "desktop") as desktop:
        on_server = {m.id: m for m in desktop.sessions.messages(trip.id)}
        assert on_server == kept
        assert on_server[reply.id].content == "Lisbon is lovely in May."
        assert desktop.sessions.get(trip.id).active_leaf == reply.id
        assert desktop.sessions.get(offline.id).title == "Written on the train"
        assert [m.id for m in desktop.sessions.branch(offline.id)] == [hello.id]


def test_handing_conversations_over_twice_doubles_nothing(
    pg_server: PgServer, pg_url: str, tmp_path: Path
) -> None:
    """A hand-over cut off after the server took it but before this machine unmarked it is
    simply done again."""
    with PostgresStore(pg_url, connect_timeout=2) as laptop:
        assert laptop.changes is not None and laptop.changes.wait_connected(0, 10)
        talk = laptop.sessions.create(title="Talk")
        before = laptop.changes.connections
        pg_server.kill()
        try:
            said = laptop.sessions.add_message(talk.id, "user", "Kept while away")
        finally:
            pg_server.start()
        assert laptop.changes.wait_connected(before, 60)
        assert laptop.sessions.pending_count() == 0
        # As if the crash came between the server's commit and the unmarking:
        laptop.sessions.mirror.mark("message", said.id, talk.id)
        laptop.sessions.mirror.mark("session", talk.id, talk.id)
        assert laptop.sessions.hand_over_pending() == 1
    with PostgresStore(pg_url, follow_changes=False, outbox_dir=tmp_path / "desktop") as desktop:
        assert [m.id for m in desktop.sessions.messages(talk.id)] == [said.id]


def test_the_store_opens_without_the_server_and_recovers_by_itself(
    pg_server: PgServer, pg_url: str
) -> None:
    with PostgresStore(pg_url) as earlier:
        talk = earlier.sessions.create(title="Before the outage")
        said = earlier.sessions.add_message(talk.id, "user", "Remember the milk")
    heard: list[bool] = []
    pg_server.kill()
    try:
        with PostgresStore(pg_url, connect_timeout=2, start_offline=True) as laptop:
            laptop.on_reachability(heard.append)
            assert not laptop.reachable
            assert [s.id for s in laptop.sessions.list()] == [talk.id]
            assert [m.id for m in laptop.sessions.branch(talk.id)] == [said.id]
            kept = laptop.memories.add("I am allergic to cats", source="remember")
            pg_server.start()
            assert laptop.changes is not None and laptop.changes.wait_connected(0, 60)
            assert laptop.reachable and heard == [True]
            assert laptop.memories.get(kept.id) == kept
            assert laptop.sessions.get(talk.id).title == "Before the outage"
    finally:
        pg_server.start()


def test_the_app_opens_a_store_whose_server_is_away_and_a_command_is_told_plainly(
    pg_server: PgServer, pg_url: str, tmp_path: Path
) -> None:
    pg_server.kill()
    try:
        opened = open_store(pg_url, data_dir=tmp_path)  # the app's way
        try:
            assert not opened.reachable
        finally:
            opened.close()
        with pytest.raises(StoreUnreachableError, match="did not answer"):
            open_store(pg_url, data_dir=tmp_path, follow_changes=False)  # a command's way
    finally:
        pg_server.start()


def test_a_reply_taken_back_while_the_server_is_away_is_gone_there_too(
    pg_server: PgServer, pg_url: str, tmp_path: Path
) -> None:
    """A reply that failed before any text came is deleted (the turn's own clean-up); one
    made and deleted while the server was away never reaches it, and one the server had is
    deleted there when it answers."""
    with PostgresStore(pg_url, connect_timeout=2) as laptop:
        assert laptop.changes is not None and laptop.changes.wait_connected(0, 10)
        talk = laptop.sessions.create(title="Talk")
        asked = laptop.sessions.add_message(talk.id, "user", "First question")
        answered = laptop.sessions.add_message(talk.id, "assistant", "A reply to take back")
        before = laptop.changes.connections
        pg_server.kill()
        try:
            laptop.sessions.delete_messages_from(answered.id)
            again = laptop.sessions.add_message(talk.id, "user", "Second question")
            failed = laptop.sessions.add_message(talk.id, "assistant", "", status="streaming")
            laptop.sessions.delete_messages_from(failed.id)
        finally:
            pg_server.start()
        assert laptop.changes.wait_connected(before, 60)
        assert laptop.sessions.pending_count() == 0
    with PostgresStore(pg_url, follow_changes=False, outbox_dir=tmp_path / "desktop") as desktop:
        assert [m.id for m in desktop.sessions.messages(talk.id)] == [asked.id, again.id]
        assert desktop.sessions.get(talk.id).active_leaf == again.id


@pytest.fixture
def silent_url() -> Iterator[str]:
    """A server host that takes no connection and refuses none, as one behind a firewall
    that drops packets: a listening socket whose queue of waiting connections is full, so
    the kernel drops every further attempt and a client waits out its connect timeout."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    fillers = []
    for _ in range(3):
        filler = socket.socket()
        filler.setblocking(False)
        filler.connect_ex(("127.0.0.1", port))
        fillers.append(filler)
    yield f"postgresql://timothy@127.0.0.1:{port}/timothy"
    for sock in (*fillers, listener):
        sock.close()


def test_a_server_host_that_never_answers_does_not_hold_the_app_s_opening(
    silent_url: str, tmp_path: Path
) -> None:
    """The app opens its store before the window shows: a host that never answers must not
    hold it for the whole connect timeout (5 s); the store opens from this machine."""
    began = time.monotonic()
    with PostgresStore(
        silent_url, connect_timeout=5, outbox_dir=tmp_path, start_offline=True
    ) as laptop:
        assert time.monotonic() - began < 2.5
        assert not laptop.reachable
        assert laptop.sessions.list() == []
        talk = laptop.sessions.create(title="While the server is away")
        assert [s.id for s in laptop.sessions.list()] == [talk.id]
        laptop.memories.add("I am allergic to cats", source="remember")  # kept for later
    # A short command (no change feed, no mirror to work from) is still told plainly.
    with pytest.raises(StoreUnreachableError):
        PostgresStore(silent_url, connect_timeout=1, follow_changes=False, outbox_dir=tmp_path)


def test_a_pending_line_damaged_out_of_utf8_is_kept_byte_for_byte(tmp_path: Path) -> None:
    with Store.open(tmp_path / "data") as store:
        memory = store.memories.add("I am allergic to cats")
    outbox = Outbox(tmp_path / "pending.jsonl")
    outbox.keep(memory)
    damaged = b'{"id": "caf\xe9", "content": "half a line'
    with outbox.path.open("ab") as out:
        out.write(damaged + b"\n")
    assert [m.id for m in outbox.pending()] == [memory.id]
    assert outbox.waiting() == 2
    handed: list[Memory] = []
    assert outbox.hand_over(handed.extend) == 1
    assert [m.content for m in handed] == ["I am allergic to cats"]
    assert outbox.path.read_bytes() == damaged + b"\n"  # left for the owner, untouched
