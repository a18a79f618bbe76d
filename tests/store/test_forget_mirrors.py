"""Forgetting for good on a shared server reaches every machine's conversation mirror: the
words the server redacted from past turns leave each data folder's file too, whether the
machine heard the forget as it happened, was closed at the time, or made it itself."""

from __future__ import annotations

import json
import queue
from pathlib import Path

import pytest

from timothy.memory.forget import block_line, forget
from timothy.memory.remember import REMEMBER_TOOL
from timothy.store.postgres import PostgresStore, offline
from timothy.store.records import Memory, MessageRole, StoredToolCall

SECRET = "The door code is Quagmire-4711"
WORD = b"quagmire"  # as the text index keeps it too (folded to lower case)
HEARD_SECONDS = 10.0


def past_turns(store: PostgresStore, memory: Memory) -> str:
    """A conversation whose reply recalled the memory, and one that remembered it."""
    session = store.sessions.create(title="Codes")
    store.sessions.add_message(session.id, MessageRole.USER, "What is the door code?")
    reply = store.sessions.add_message(session.id, MessageRole.ASSISTANT, "It is on file.")
    line, _ = block_line(memory)
    store.sessions.update_message(reply.id, memory_block=f"<memories>\n{line}\n</memories>")
    call = StoredToolCall("call-1", REMEMBER_TOOL.name, json.dumps({"content": memory.content}))
    store.sessions.add_message(session.id, MessageRole.ASSISTANT, "", tool_calls=[call])
    result = {"saved": True, "id": memory.id, "content": memory.content, "status": "saved"}
    store.sessions.add_message(
        session.id, MessageRole.TOOL, json.dumps(result), tool_call_id="call-1"
    )
    return session.id


def holding(folder: Path) -> list[str]:
    """The files of a data folder whose bytes still hold the secret."""
    return sorted(
        path.name
        for path in folder.rglob("*")
        if path.is_file() and WORD in path.read_bytes().lower()
    )


def read_everything(store: PostgresStore, session_id: str) -> None:
    """What the window does when it shows a conversation: the mirror now holds it."""
    store.sessions.list()
    store.sessions.messages(session_id)


def test_a_forget_leaves_the_mirror_of_a_machine_that_heard_it(pg_url: str, tmp_path: Path) -> None:
    laptop_folder, desktop_folder = tmp_path / "laptop", tmp_path / "desktop"
    with (
        PostgresStore(pg_url, outbox_dir=laptop_folder) as laptop,
        PostgresStore(pg_url, outbox_dir=desktop_folder) as desktop,
    ):
        heard: queue.Queue[str] = queue.Queue()
        desktop.memories.listeners.append(lambda event, _memory: heard.put(event))
        assert desktop.changes is not None and desktop.changes.listening.wait(10)
        memory = laptop.memories.add(SECRET)
        assert heard.get(timeout=HEARD_SECONDS) == "added"
        session_id = past_turns(laptop, memory)
        read_everything(desktop, session_id)
        assert holding(desktop_folder)

        forget(laptop, [memory.id])
        # The window hears of it once the mirror no longer holds the words.
        assert heard.get(timeout=HEARD_SECONDS) == "forgotten"
        assert holding(desktop_folder) == []
        assert holding(laptop_folder) == []


def test_a_forget_leaves_the_mirror_of_a_machine_that_was_off(pg_url: str, tmp_path: Path) -> None:
    laptop_folder, desktop_folder = tmp_path / "laptop", tmp_path / "desktop"
    with PostgresStore(pg_url, outbox_dir=laptop_folder, follow_changes=False) as laptop:
        memory = laptop.memories.add(SECRET)
        session_id = past_turns(laptop, memory)
        with PostgresStore(pg_url, outbox_dir=desktop_folder, follow_changes=False) as desktop:
            read_everything(desktop, session_id)
        assert holding(desktop_folder)

        # The desktop is off while the laptop (the command line) forgets.
        forget(laptop, [memory.id])
        assert holding(laptop_folder) == []

    with PostgresStore(pg_url, outbox_dir=desktop_folder) as desktop:
        assert desktop.changes is not None and desktop.changes.wait_connected(0, 30)
        assert holding(desktop_folder) == []
        blocks = [m.memory_block for m in desktop.sessions.messages(session_id)]
        assert any(block and "[forgotten]" in block for block in blocks)


def test_catching_up_reads_the_conversations_in_batches_not_one_query_each(
    pg_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a forget every conversation is read again: in a few queries (the pool's own
    count of borrowed connections says how many), and every message is still mirrored."""
    monkeypatch.setattr(offline, "REFRESH_BATCH", 7)  # 40 conversations: 6 batches
    conversations = 40
    with PostgresStore(pg_url, outbox_dir=tmp_path / "laptop", follow_changes=False) as laptop:
        memory = laptop.memories.add(SECRET)
        session_id = past_turns(laptop, memory)
        for number in range(conversations - 1):
            talk = laptop.sessions.create(title=f"Talk {number}")
            laptop.sessions.add_message(talk.id, MessageRole.USER, f"Hello {number}")
            laptop.sessions.add_message(talk.id, MessageRole.ASSISTANT, f"Hi {number}")
        desktop_folder = tmp_path / "desktop"
        with PostgresStore(pg_url, outbox_dir=desktop_folder, follow_changes=False) as desktop:
            desktop.sessions.refresh(every=True)
            assert holding(desktop_folder)
            forget(laptop, [memory.id])
            borrowed = desktop.db.pool.get_stats().get("requests_num", 0)
            assert desktop.sessions.catch_up_forgets()
            reads = desktop.db.pool.get_stats().get("requests_num", 0) - borrowed
            assert reads <= 6 + 3  # the batches, the list, the mark (one query each before)
            assert holding(desktop_folder) == []
            mirrored = desktop.sessions.mirror.repo
            on_server = laptop.sessions.list(limit=100)
            assert len(on_server) == conversations
            for session in on_server:
                assert [m.id for m in mirrored.messages(session.id)] == [
                    m.id for m in laptop.sessions.messages(session.id)
                ]
            blocks = [m.memory_block for m in mirrored.messages(session_id)]
            assert any(block and "[forgotten]" in block for block in blocks)
