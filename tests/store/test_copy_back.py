"""Moving back: a store copied onto the server, used there, and copied back into the file it
came from. What went on in a conversation on the server reaches the file; the memories the
file holds already are left as they are, and the report says how many differ."""

from __future__ import annotations

from pathlib import Path

import pytest

from timothy.cli import main
from timothy.store import Store
from timothy.store.copy import copy_store
from timothy.store.postgres import PostgresStore


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
