"""How long a machine's conversation mirror takes to catch up with a forget made on another
machine (`MirroredSessions.catch_up_forgets`: every conversation read again from the server,
then the mirror file rebuilt), and how many statements it sends the server.

    python bench/forget_catch_up.py                      # a throwaway pgserver, 500 conversations
    python bench/forget_catch_up.py --conversations 2000 --store postgresql://me@nas/timothy

Statements are counted as the server's committed transactions in the database while the
catch-up runs (each statement in autocommit is one); nothing else uses the schema meanwhile.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg

from bench.server_store import LOCAL_SERVER, open_schema, schema_url, server_url
from timothy.store.ids import new_id
from timothy.store.postgres import PostgresStore
from timothy.store.postgres.forget import FORGETS_KEY
from timothy.store.records import Message, MessageRole, Session

SCHEMA = "bench_forget_catch_up"


def fill(store: PostgresStore, conversations: int, messages: int) -> None:
    """`conversations` conversations of `messages` messages each, imported as one would be."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    for number in range(conversations):
        when = start + timedelta(minutes=number)
        said: list[Message] = []
        parent: str | None = None
        session_id = new_id(when)
        for turn in range(messages):
            message = Message(
                id=new_id(when + timedelta(seconds=turn)),
                session_id=session_id,
                role=MessageRole.USER if turn % 2 == 0 else MessageRole.ASSISTANT,
                content=f"Message {turn} of conversation {number}: " + "words to keep " * 20,
                created_at=when + timedelta(seconds=turn),
                parent_id=parent,
            )
            said.append(message)
            parent = message.id
        session = Session(
            id=session_id,
            title=f"Conversation {number}",
            title_source="owner",
            provider=None,
            model=None,
            created_at=when,
            updated_at=when + timedelta(seconds=messages),
            active_leaf=parent,
        )
        store.sessions.import_conversation(session, said)


def commits(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        ).fetchone()
        conn.execute("SELECT pg_stat_clear_snapshot()")
    return 0 if row is None else int(row[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default=LOCAL_SERVER)
    parser.add_argument("--conversations", type=int, default=500)
    parser.add_argument("--messages", type=int, default=6)
    args = parser.parse_args()
    with server_url(args.store) as url:
        with open_schema(url, SCHEMA, fresh=True) as writer:
            began = time.perf_counter()
            fill(writer, args.conversations, args.messages)
            print(
                f"filled {args.conversations} conversations x {args.messages} messages "
                f"in {time.perf_counter() - began:.1f} s"
            )
        with tempfile.TemporaryDirectory() as folder:
            address = schema_url(url, SCHEMA)
            with PostgresStore(address, follow_changes=False, outbox_dir=Path(folder)) as laptop:
                laptop.sessions.refresh(every=True)  # the mirror holds every conversation
                laptop.db.set_meta(FORGETS_KEY, uuid.uuid4().hex)  # a forget elsewhere
                time.sleep(1.0)  # the statistics collector's view settles (not a sync point)
                before = commits(url)
                began = time.perf_counter()
                rebuilt = laptop.sessions.catch_up_forgets()
                took = time.perf_counter() - began
                time.sleep(1.0)
                sent = commits(url) - before - 1  # less the first count's own statement
            print(
                f"catch_up_forgets: {took * 1000:.0f} ms, about {sent} statements on the "
                f"server, mirror rebuilt: {rebuilt}"
            )


if __name__ == "__main__":
    main()
