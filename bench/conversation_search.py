"""Benchmark: searching conversations, which matches their active branches only.

Run: .venv/bin/python bench/conversation_search.py [--conversations N] [--turns T]
Builds N conversations of T turns (every fifth with an edited message, so it branches),
then times `sessions.list(search=...)` for a rare word, a common one and two words, and
opening one conversation's active branch. Prints the figures; asserts nothing about speed.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from timothy.store import Store
from timothy.store.ids import new_id
from timothy.store.records import format_time, utc_now


def fill(store: Store, conversations: int, turns: int) -> str:
    """Write the conversations in one transaction (as rows, quickly); returns one id."""
    now = utc_now()
    stamp = format_time(now)
    last = ""
    with store.db.write() as conn:
        for number in range(conversations):
            session = new_id(now)
            parent: str | None = None
            leaf = ""
            conn.execute(
                "INSERT INTO sessions (id, title, created_at, updated_at) VALUES (?, ?, ?, ?)",
                (session, f"Conversation {number}", stamp, stamp),
            )
            for turn in range(turns):
                for role, text in (
                    ("user", f"question {turn} about topic{number % 50} and the weather"),
                    ("assistant", f"answer {turn} on topic{number % 50}, sunny mostly"),
                ):
                    message = new_id(now)
                    conn.execute(
                        "INSERT INTO messages (id, session_id, role, content, created_at, "
                        "parent_id) VALUES (?, ?, ?, ?, ?, ?)",
                        (message, session, role, text, stamp, parent),
                    )
                    if number % 5 == 0 and turn == turns // 2 and role == "user":
                        # an edit: a sibling of this question, answered; the branch goes on
                        edited = new_id(now)
                        conn.execute(
                            "INSERT INTO messages (id, session_id, role, content, created_at, "
                            "parent_id) VALUES (?, ?, ?, ?, ?, ?)",
                            (edited, session, "user", "an edited question, rainbow", stamp, parent),
                        )
                        message = edited
                    parent = leaf = message
            conn.execute(
                "UPDATE sessions SET active_leaf = ?, branched = ? WHERE id = ?",
                (leaf, int(number % 5 == 0), session),
            )
            last = session
    return last


def timed(what: str, call: object, repeat: int = 5) -> None:
    assert callable(call)
    best = float("inf")
    found = None
    for _ in range(repeat):
        started = time.perf_counter()
        found = call()
        best = min(best, time.perf_counter() - started)
    count = len(found) if isinstance(found, list) else "-"
    print(f"{what}: {best * 1000:.1f} ms (best of {repeat}; {count} found)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=2_000)
    parser.add_argument("--turns", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, Store.open(Path(folder)) as store:
        started = time.perf_counter()
        one = fill(store, args.conversations, args.turns)
        messages = args.conversations * args.turns * 2
        print(f"{args.conversations} conversations, {messages:,} messages on their branches")
        print(f"written in {time.perf_counter() - started:.1f} s")
        sessions = store.sessions
        conn = store.db.connection()
        every = (
            "SELECT DISTINCT m.session_id FROM messages_fts f JOIN messages m "
            "ON m.seq = f.rowid WHERE messages_fts MATCH ?"
        )
        timed(
            "for scale, the full-text match alone over every message (weather)",
            lambda: conn.execute(every, ('"weather"',)).fetchall(),
        )
        timed("rare word (topic7)", lambda: sessions.list(search="topic7", limit=500))
        timed("common word (weather)", lambda: sessions.list(search="weather", limit=500))
        timed("two words (sunny topic3)", lambda: sessions.list(search="sunny topic3", limit=500))
        timed("only on a left branch (rainbow)", lambda: sessions.list(search="rainbow"))
        timed("one conversation's active branch", lambda: sessions.branch(one))


if __name__ == "__main__":
    main()
