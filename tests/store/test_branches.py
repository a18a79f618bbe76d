"""Conversations branch: edited messages and regenerated replies are siblings, one branch is
active, summaries apply to the branches that hold what they replaced, old rows read as one."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from timothy.store import Store
from timothy.store.db import Database
from timothy.store.engine import StoreEngine
from timothy.store.migrations import MIGRATIONS
from timothy.store.postgres import PostgresStore
from timothy.store.postgres.database import PgDatabase
from timothy.store.postgres.migrations import MIGRATIONS as PG_MIGRATIONS
from timothy.store.records import Message, MessageRole


def contents(messages: Sequence[Message]) -> list[str]:
    return [m.content for m in messages]


def test_messages_follow_the_active_branch_and_an_edit_starts_a_new_one(store: StoreEngine) -> None:
    session = store.sessions.create()
    q1 = store.sessions.add_message(session.id, "user", "first question")
    a1 = store.sessions.add_message(session.id, "assistant", "first answer")
    q2 = store.sessions.add_message(session.id, "user", "second question")
    store.sessions.add_message(session.id, "assistant", "second answer")
    assert (a1.parent_id, q2.parent_id) == (q1.id, a1.id)

    edited = store.sessions.add_message(
        session.id, "user", "second question, better", parent_id=q2.parent_id
    )
    store.sessions.add_message(session.id, "assistant", "a better answer")
    assert contents(store.sessions.branch(session.id)) == [
        "first question",
        "first answer",
        "second question, better",
        "a better answer",
    ]
    # every message is kept; switching back shows the first branch whole
    assert len(store.sessions.messages(session.id)) == 6
    leaf = store.sessions.select_branch(session.id, q2.id)
    assert contents(store.sessions.branch(session.id))[-2:] == [
        "second question",
        "second answer",
    ]
    assert leaf == store.sessions.get(session.id).active_leaf
    store.sessions.select_branch(session.id, edited.id)
    assert contents(store.sessions.branch(session.id))[-1] == "a better answer"


def test_a_reply_that_failed_empty_goes_and_the_earlier_version_is_shown_again(
    store: StoreEngine,
) -> None:
    session = store.sessions.create()
    question = store.sessions.add_message(session.id, "user", "question")
    store.sessions.add_message(session.id, "assistant", "the first reply")
    store.sessions.set_active_leaf(session.id, question.id)
    broken = store.sessions.add_message(session.id, "assistant", "")
    store.sessions.add_message(session.id, "tool", "{}")
    assert store.sessions.delete_messages_from(broken.id) == 2
    assert contents(store.sessions.branch(session.id)) == ["question", "the first reply"]


def test_a_summary_applies_only_to_branches_holding_everything_it_replaced(
    store: StoreEngine,
) -> None:
    session = store.sessions.create()
    q1 = store.sessions.add_message(session.id, "user", "old question")
    a1 = store.sessions.add_message(session.id, "assistant", "old answer")
    q2 = store.sessions.add_message(session.id, "user", "newer question")
    summary = store.sessions.add_message(session.id, MessageRole.SUMMARY, "they talked")
    assert summary.parent_id is None
    assert store.sessions.get(session.id).active_leaf == q2.id  # a summary moves nothing
    store.sessions.mark_compacted([q1.id, a1.id], summary.id)
    assert contents(store.sessions.branch(session.id, include_compacted=False)) == [
        "newer question",
        "they talked",
    ]
    # an edit of the first question: the summary covers turns this branch does not hold
    store.sessions.add_message(session.id, "user", "old question, edited", parent_id=None)
    assert contents(store.sessions.branch(session.id, include_compacted=False)) == [
        "old question, edited"
    ]


def test_search_finds_words_on_the_active_branch_only(store: StoreEngine) -> None:
    session = store.sessions.create(title="Trip")
    question = store.sessions.add_message(session.id, "user", "book a flight to Lisbon")
    store.sessions.add_message(
        session.id, "user", "book a train to Porto", parent_id=question.parent_id
    )
    assert [s.id for s in store.sessions.list(search="Porto")] == [session.id]
    assert store.sessions.list(search="Lisbon") == []
    store.sessions.select_branch(session.id, question.id)
    assert [s.id for s in store.sessions.list(search="Lisbon")] == [session.id]
    assert store.sessions.list(search="Porto") == []


def test_conversations_written_before_branches_read_as_one_branch(data_dir: Path) -> None:
    path = data_dir / "timothy.db"
    old = Database(path, migrations=MIGRATIONS[:5])
    with old.write() as conn:
        conn.execute(
            "INSERT INTO sessions (id, title, created_at, updated_at) "
            "VALUES ('s1', 'Old', '2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z')"
        )
        for seq, (mid, role, text) in enumerate(
            [
                ("m1", "user", "hello"),
                ("m2", "assistant", "hi there"),
                ("m3", "summary", "an old summary"),
                ("m4", "user", "how are you"),
                ("m5", "assistant", "well"),
            ],
            start=1,
        ):
            conn.execute(
                "INSERT INTO messages (seq, id, session_id, role, content, created_at) "
                "VALUES (?, ?, 's1', ?, ?, '2025-01-01T00:00:00Z')",
                (seq, mid, role, text),
            )
    old.close()
    with Store.open(data_dir) as store:
        messages = {m.id: m for m in store.sessions.messages("s1")}
        assert [messages[m].parent_id for m in ("m1", "m2", "m3", "m4", "m5")] == [
            None,
            "m1",
            None,
            "m2",
            "m4",
        ]
        assert store.sessions.get("s1").active_leaf == "m5"
        assert contents(store.sessions.branch("s1")) == [
            "hello",
            "hi there",
            "how are you",
            "well",
        ]


def test_conversations_on_a_server_written_before_branches_read_as_one_branch(
    pg_url: str,
) -> None:
    old = PgDatabase(pg_url, migrations=PG_MIGRATIONS[:2])
    try:
        with old.write() as conn:
            conn.execute(
                "INSERT INTO sessions (id, title, created_at, updated_at) "
                "VALUES ('s1', 'Old', '2025-01-01T00:00:00Z', '2025-01-01T00:00:00Z')"
            )
            for seq, (mid, role, text) in enumerate(
                [
                    ("m1", "user", "hello"),
                    ("m2", "assistant", "hi there"),
                    ("m3", "summary", "an old summary"),
                    ("m4", "user", "how are you"),
                    ("m5", "assistant", "well"),
                ],
                start=1,
            ):
                conn.execute(
                    "INSERT INTO messages (seq, id, session_id, role, content, created_at) "
                    "VALUES (%s, %s, 's1', %s, %s, '2025-01-01T00:00:00Z')",
                    (seq, mid, role, text),
                )
    finally:
        old.close()
    with PostgresStore(pg_url, follow_changes=False) as store:
        assert store.db.schema_version() == len(PG_MIGRATIONS)
        messages = {m.id: m for m in store.sessions.messages("s1")}
        assert [messages[m].parent_id for m in ("m1", "m2", "m3", "m4", "m5")] == [
            None,
            "m1",
            None,
            "m2",
            "m4",
        ]
        assert store.sessions.get("s1").active_leaf == "m5"
        assert store.sessions.get("s1").instructions == ""
        assert contents(store.sessions.branch("s1")) == [
            "hello",
            "hi there",
            "how are you",
            "well",
        ]
