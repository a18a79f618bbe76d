"""Moving back: a store copied onto the server, used there, and copied back into the file it
came from. What went on in a conversation on the server reaches the file; the memories the
file holds already are left as they are, and the report says how many differ."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from timothy.cli import main
from timothy.memory.forget import forget
from timothy.memory.remember import REMEMBER_TOOL
from timothy.retrieval import Recaller
from timothy.store import Store
from timothy.store.copy import copy_store
from timothy.store.postgres import PostgresStore
from timothy.store.records import Memory, MessageRole, StoredToolCall


def test_a_conversation_that_went_on_on_the_server_is_copied_back_whole(
    pg_url: str, data_dir: Path, tmp_path: Path
) -> None:
    with Store.open(data_dir) as file:
        talk = file.sessions.create(title="Garden")
        file.sessions.add_message(talk.id, "user", "Tomatoes or beans?")
        with PostgresStore(pg_url, follow_changes=False, outbox_dir=tmp_path / "s") as server:
            copy_store(file, server)
            server.sessions.add_message(talk.id, "assistant", "Tomatoes, they like the sun.")
            server.sessions.add_message(talk.id, "user", "And beans next to them?")
            server.sessions.set_title(talk.id, "Garden: tomatoes and beans")
            report = copy_store(server, file)
            there = [m.content for m in server.sessions.branch(talk.id)]
        assert [m.content for m in file.sessions.branch(talk.id)] == there
        assert file.sessions.get(talk.id).title == "Garden: tomatoes and beans"
        assert report.conversations_caught_up == 1 and report.conversations_copied == 0
        # Copied again: nothing left to bring.
        with PostgresStore(pg_url, follow_changes=False, outbox_dir=tmp_path / "s") as server:
            again = copy_store(server, file)
        assert again.conversations_caught_up == 0 and again.conversations_already_there == 1


def test_a_conversation_that_went_on_in_the_file_reaches_the_server_copied_again(
    pg_url: str, data_dir: Path, tmp_path: Path
) -> None:
    """The other way (a second copy of a file onto the server): the same, and the server's
    conversation mirror on this machine has it too."""
    with Store.open(data_dir) as file:
        talk = file.sessions.create(title="Garden")
        file.sessions.add_message(talk.id, "user", "Tomatoes or beans?")
        with PostgresStore(pg_url, follow_changes=False, outbox_dir=tmp_path / "s") as server:
            copy_store(file, server)
        file.sessions.add_message(talk.id, "assistant", "Tomatoes.")
        with PostgresStore(pg_url, outbox_dir=tmp_path / "s") as server:
            report = copy_store(file, server)
            assert [m.content for m in server.sessions.branch(talk.id)] == [
                "Tomatoes or beans?",
                "Tomatoes.",
            ]
        assert report.conversations_caught_up == 1


def test_memories_the_file_holds_already_are_left_and_counted_when_they_differ(
    pg_url: str, data_dir: Path, tmp_path: Path
) -> None:
    """An edit made on the server after the first copy is not written over the file's
    older state (nor the other way), nor is a memory forgotten there taken from the file:
    the copy says how many differ and how many the file alone holds."""
    with Store.open(data_dir) as file:
        lyon = file.memories.add("My sister lives in Lyon")
        bus = file.memories.add("I take the bus")
        with PostgresStore(pg_url, follow_changes=False, outbox_dir=tmp_path / "s") as server:
            copy_store(file, server)
            paris = server.memories.supersede(lyon.id, "My sister lives in Paris")
            server.memories.forget([bus.id])
            report = copy_store(server, file)
        assert report.memories_copied == 1  # the new version
        assert report.memories_already_there == 1 and report.memories_differing == 1
        assert report.memories_only_in_target == 1  # forgotten on the server: said, kept
        assert file.memories.get(lyon.id) == lyon  # left as the file had it
        assert file.memories.get(paris.id) is not None
        assert file.memories.get(bus.id) == bus


def test_the_command_says_what_it_left_as_the_file_had_it(
    pg_url: str, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open(data_dir) as file:
        lyon = file.memories.add("My sister lives in Lyon")
        pin = file.memories.add("My PIN is 1234")
        talk = file.sessions.create(title="Garden")
        file.sessions.add_message(talk.id, "user", "Tomatoes or beans?")
    assert main(["--data-dir", str(data_dir), "store", "copy", "--to", pg_url]) == 0
    with PostgresStore(pg_url, follow_changes=False, outbox_dir=tmp_path / "s") as server:
        server.memories.supersede(lyon.id, "My sister lives in Paris")
        server.memories.forget([pin.id])
        server.sessions.add_message(talk.id, "assistant", "Tomatoes.")
    capsys.readouterr()
    assert main(["store", "copy", "--from", pg_url, "--to", str(data_dir)]) == 0
    said = capsys.readouterr().out
    assert "1 conversations copied before got the messages added since." in said
    assert "1 memories already there differ from the copy" in said
    assert "1 memories in " in said and "(forgotten there, or never copied to it)" in said


SECRET = "The door code is Quagmire-4711"


def remembered(store: Store, memory: Memory) -> str:
    """A conversation whose reply recalled the memory (its block and recall record name
    it, beside two others), and whose next turn remembered it with the `remember` tool."""
    talk = store.sessions.create(title="Codes")
    store.sessions.add_message(talk.id, MessageRole.USER, "What is the door code?")
    with Recaller(store) as recaller:
        result = recaller.recall("door code bus bike lock", mark=False)
    assert memory.id in result.packed_ids and len(result.packed_ids) == 3
    reply = store.sessions.add_message(talk.id, MessageRole.ASSISTANT, "It is on file.")
    store.sessions.update_message(reply.id, memory_block=result.block, recall=result.record())
    call = StoredToolCall("call-1", REMEMBER_TOOL.name, json.dumps({"content": memory.content}))
    store.sessions.add_message(talk.id, MessageRole.ASSISTANT, "", tool_calls=[call])
    saved = {"saved": True, "id": memory.id, "content": memory.content, "status": "saved"}
    store.sessions.add_message(talk.id, MessageRole.TOOL, json.dumps(saved), tool_call_id="call-1")
    return talk.id


def test_a_forget_on_the_server_reaches_messages_the_file_holds_already(
    pg_url: str, data_dir: Path, tmp_path: Path
) -> None:
    """A memory forgotten for good on the server after the file was copied there: copied
    back, the file's own copies of the turns that named it lose its words as the server's
    did; a forget made in the file meanwhile stays made, and the other memories' words stay."""
    with Store.open(data_dir) as file:
        secret = file.memories.add(SECRET)
        file.memories.add("I take the bus to work")
        lock = file.memories.add("The bike lock code is Zebra-8812")
        talk = remembered(file, secret)
        with PostgresStore(pg_url, follow_changes=False, outbox_dir=tmp_path / "s") as server:
            copy_store(file, server)
            forget(server, [secret.id])
            forget(file, [lock.id])  # in the file only, meanwhile
            report = copy_store(server, file)
            again = copy_store(server, file)
        said = json.dumps([message.to_json() for message in file.sessions.messages(talk)])
        assert "Quagmire" not in said
        assert "Zebra" not in said  # the file's own forget is not undone by the server's copy
        assert "I take the bus to work" in said
        assert said.count("[forgotten]") >= 5  # block line, record entry and block, call, result
        assert report.messages_redacted == 3 and again.messages_redacted == 0
        assert file.sessions.list(search="Quagmire") == []


def test_the_command_says_how_many_messages_it_redacted(
    pg_url: str, data_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Store.open(data_dir) as file:
        secret = file.memories.add(SECRET)
        file.memories.add("I take the bus to work")
        file.memories.add("The bike lock code is Zebra-8812")
        remembered(file, secret)
    assert main(["--data-dir", str(data_dir), "store", "copy", "--to", pg_url]) == 0
    with PostgresStore(pg_url, follow_changes=False, outbox_dir=tmp_path / "s") as server:
        forget(server, [secret.id])
    capsys.readouterr()
    assert main(["store", "copy", "--from", pg_url, "--to", str(data_dir)]) == 0
    assert (
        "3 messages already there were redacted as in postgresql://"
        in capsys.readouterr().out.replace("\n", " ")
    )


def test_a_forget_in_the_file_reaches_the_server_and_its_mirror_copied_again(
    pg_url: str, data_dir: Path, tmp_path: Path
) -> None:
    """The other way: a file copied onto the server again after a forget made in it; the
    server's messages lose the words, and so does this machine's mirror of them."""
    with Store.open(data_dir) as file:
        secret = file.memories.add(SECRET)
        file.memories.add("I take the bus to work")
        file.memories.add("The bike lock code is Zebra-8812")
        talk = remembered(file, secret)
        with PostgresStore(pg_url, outbox_dir=tmp_path / "s") as server:
            copy_store(file, server)
            server.sessions.messages(talk)  # the mirror holds the words now
            forget(file, [secret.id])
            report = copy_store(file, server)
            said = json.dumps([m.to_json() for m in server.sessions.messages(talk)])
        assert report.messages_redacted == 3
        assert "Quagmire" not in said and "Zebra" in said
        assert not any(
            b"quagmire" in path.read_bytes().lower()
            for path in (tmp_path / "s").rglob("*")
            if path.is_file()
        )
