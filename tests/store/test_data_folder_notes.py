"""The files the server store keeps in the data folder (the note of changes whose outcome
could not be learned, unsure.py; the outbox of new memories, outbox.py), used by two
processes at once: the app and the `timothy` command on one data folder."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from timothy.store.postgres.outbox import Outbox
from timothy.store.postgres.unsure import UnsureChanges

REPO = Path(__file__).resolve().parents[2]
EACH = 150  # changes each process notes


def test_two_processes_noting_at_once_lose_none_of_each_others_notes(tmp_path: Path) -> None:
    path = tmp_path / "unsure-for-server-0123456789abcdef.json"
    children = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.store.unsure_noter", str(path), name, str(EACH)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )
        for name in ("app", "cli")
    ]
    try:
        for child in children:
            assert child.stdout is not None and child.stdout.readline() == "ready\n"
        for child in children:  # both start together
            assert child.stdin is not None
            child.stdin.write("go\n")
            child.stdin.flush()
        errors = [child.communicate(timeout=60)[1] for child in children]
    finally:
        for child in children:
            child.kill()
            child.wait()
    assert [child.returncode for child in children] == [0, 0], errors
    noted = {key for (_, key), _ in UnsureChanges(path).unsettled()}
    assert noted == {f"{name}-{n}" for name in ("app", "cli") for n in range(EACH)}
    assert not path.with_name(path.name + ".unreadable").exists()


def test_a_hand_over_in_another_process_drops_no_memory_kept_meanwhile(tmp_path: Path) -> None:
    """The app keeps new memories in the outbox while a `timothy` command on the same data
    folder hands over what waits there: each memory is handed over or still waits."""
    path = tmp_path / "pending-for-server-0123456789abcdef.jsonl"

    def child(role: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.store.outbox_keeper", role, str(path), str(EACH)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
        )

    keeper, handing = child("keep"), child("hand-over")
    try:
        for process in (keeper, handing):
            assert process.stdout is not None and process.stdout.readline() == "ready\n"
        for process in (keeper, handing):
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        _, kept_errors = keeper.communicate(timeout=60)
        assert keeper.returncode == 0, kept_errors
        (tmp_path / "keeper-done").touch()  # the hand-overs stop
        handed, errors = handing.communicate(timeout=60)
        assert handing.returncode == 0, errors
    finally:
        for process in (keeper, handing):
            process.kill()
            process.wait()
    handed_ids = handed.split()
    waiting = [memory.id for memory in Outbox(path).pending()]
    assert len(handed_ids) + len(waiting) == EACH
    assert len(set(handed_ids) | set(waiting)) == EACH


def test_reading_files_that_are_not_there_leaves_the_data_folder_as_it_was(
    tmp_path: Path,
) -> None:
    """Read at every start: with nothing noted, no lock file is made to say so (a data
    folder that cannot be written to still opens)."""
    assert UnsureChanges(tmp_path / "unsure-for-server-0.json").unsettled() == []
    outbox = Outbox(tmp_path / "pending-for-server-0.jsonl")
    assert outbox.waiting() == 0 and outbox.pending() == []
    assert list(tmp_path.iterdir()) == []
