"""`timothy memories forget` and `timothy memories restore`, run as the owner runs them."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from tests.conftest import run_timothy
from timothy import paths
from timothy.retrieval.render import render_block
from timothy.store import Store
from timothy.store.records import MessageRole

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
SECRET = "wombatqueue"


def added(*args: str) -> str:
    result = run_timothy("memories", "add", *args, "--json")
    assert result.returncode == 0, result.stderr
    return str(json.loads(result.stdout)["id"])


def database(data_dir: Path) -> bytes:
    path = paths.database_path(data_dir)
    wal = path.with_name(path.name + "-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


def test_forget_says_what_went_and_the_text_leaves_the_file(data_dir: Path) -> None:
    memory_id = added(f"The owner's alarm code is {SECRET} 2468", "--entity", "Alarm")
    kept = added("The owner likes tea")
    with Store.open(data_dir) as store:  # a past turn that was given the memory
        memory = store.memories.get(memory_id)
        session = store.sessions.create(now=NOW)
        reply = store.sessions.add_message(session.id, MessageRole.ASSISTANT, "ok", now=NOW)
        store.sessions.update_message(reply.id, memory_block=render_block([memory]))
    assert SECRET.encode() in database(data_dir)

    result = run_timothy("memories", "forget", memory_id)

    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "Forgot 1 memory for good; 1 past turn's memory block redacted. "
        "Older backups may still hold this text.\n"
    )
    assert result.stderr == ""
    shown = run_timothy("memories", "show", memory_id)
    assert shown.returncode == 1
    assert shown.stderr == f"timothy: No memory has the id {memory_id!r}.\n"
    listed = run_timothy("memories", "list", "--json")
    assert [json.loads(line)["id"] for line in listed.stdout.splitlines()] == [kept]
    assert SECRET.encode() not in database(data_dir)
    with Store.open(data_dir) as store:
        block = store.sessions.message(reply.id).memory_block
    assert block is not None and "- [semantic] [forgotten]\n" in block


def test_forget_chain_takes_every_version(data_dir: Path) -> None:
    first = added("The owner's PIN is 1111")
    edited = run_timothy("memories", "edit", first, "The owner's PIN is 2222", "--json")
    second = str(json.loads(edited.stdout)["id"])
    run_timothy("memories", "edit", second, "The owner's PIN is 3333")
    kept = added("The owner likes tea")

    result = run_timothy("memories", "forget", second, "--chain")

    assert result.returncode == 0, result.stderr
    assert result.stdout == (
        "Forgot 3 memories for good (1 version chain). Older backups may still hold this text.\n"
    )
    listed = run_timothy("memories", "list", "--json")
    assert [json.loads(line)["id"] for line in listed.stdout.splitlines()] == [kept]


def test_forget_json_and_one_version_leaves_the_chain_readable(data_dir: Path) -> None:
    first = added("The owner runs 5 km")
    edited = run_timothy("memories", "edit", first, "The owner runs 10 km", "--json")
    second = str(json.loads(edited.stdout)["id"])

    result = run_timothy("memories", "forget", first, "--json")

    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["forgotten"] == [first]
    assert report["chains"] == 0
    assert report["relinked"] == [second]
    assert report["compacted"] is True
    chain = run_timothy("memories", "chain", second, "--json")
    assert chain.returncode == 0, chain.stderr
    [only] = [json.loads(line) for line in chain.stdout.splitlines()]
    assert only["id"] == second and only["supersedes"] is None


def test_an_unknown_id_forgets_nothing_and_says_so_in_one_line(data_dir: Path) -> None:
    kept = added("The owner likes tea")

    result = run_timothy("memories", "forget", kept, "nope")

    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == "timothy: No memory has the id 'nope'.\n"
    assert run_timothy("memories", "show", kept).returncode == 0


def test_restore_rejected_and_archived(data_dir: Path) -> None:
    proposal = added("The owner plays chess", "--staged")
    episode = added("The owner went to Lisbon", "--type", "episodic")
    run_timothy("memories", "reject", proposal)
    run_timothy("memories", "archive", episode)

    result = run_timothy("memories", "restore", proposal, episode, "--json")

    assert result.returncode == 0, result.stderr
    statuses = {m["id"]: m["status"] for m in map(json.loads, result.stdout.splitlines())}
    assert statuses == {proposal: "staged", episode: "active"}


def test_restore_from_another_status_fails_in_one_line_and_goes_on(data_dir: Path) -> None:
    active = added("The owner likes tea")
    archived = added("The owner went to Lisbon", "--type", "episodic")
    run_timothy("memories", "archive", archived)

    result = run_timothy("memories", "restore", active, "nope", archived)

    assert result.returncode == 1
    assert result.stdout == f"Restored {archived}\n"
    assert result.stderr == (
        f"timothy: Memory {active} is active; only a rejected or archived memory can be "
        "restored.\n"
        "timothy: No memory has the id 'nope'.\n"
    )
