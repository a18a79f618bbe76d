"""A change whose reply is lost: the server committed, and the connection broke before its
answer reached this machine (a proxy between the store and the test server drops the
connection instead of passing on the COMMIT's answer, see tests/fakes/pg_proxy.py).

What must hold: the store finds out whether its change landed and says so (saved, with the
memory as the server holds it; or not saved, nothing changed), and doing the change again
never makes a second version nor reports the owner's own edit as another machine's; when it
cannot find out, doing it again is its success, after a restart too.
"""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

import psycopg
import pytest

from tests.fakes.pg_proxy import LossyProxy
from timothy.errors import (
    ChangedElsewhereError,
    IllegalTransitionError,
    NotFoundError,
    StoreUnreachableError,
)
from timothy.memory.forget import forget
from timothy.store.postgres import PostgresStore
from timothy.store.postgres.unsure import UnsureChanges, unsure_path
from timothy.store.records import Memory, MemoryStatus

NOW = datetime(2025, 6, 1, 8, 0, tzinfo=UTC)
LATER = datetime(2025, 6, 2, 9, 30, tzinfo=UTC)


@pytest.fixture
def store(lossy_proxy: LossyProxy, pg_url: str, tmp_path: Path) -> Iterator[PostgresStore]:
    """A store that reaches the server only through the proxy."""
    with PostgresStore(
        lossy_proxy.url(pg_url), outbox_dir=tmp_path, follow_changes=False, connect_timeout=2
    ) as opened:
        yield opened


def versions(first: Memory, store: PostgresStore) -> list[tuple[str, str]]:
    """The chain of `first` as the server holds it."""
    return [(m.content, m.status.value) for m in store.memories.chain(first.id)]


def test_an_edit_whose_reply_is_lost_is_reported_saved_and_a_retry_adds_nothing(
    store: PostgresStore, lossy_proxy: LossyProxy, pg_url: str
) -> None:
    memory = store.memories.add("My locker is number 12", now=NOW)
    heard: list[tuple[str, str]] = []
    store.memories.listeners.append(lambda event, m: heard.append((event, m.content)))
    lossy_proxy.cut_at(b"COMMIT")
    saved = store.memories.supersede(memory.id, "My locker is number 14", now=LATER)
    assert lossy_proxy.cut.is_set()  # the reply really was lost
    assert saved.content == "My locker is number 14"
    assert saved.status is MemoryStatus.ACTIVE and saved.supersedes == memory.id
    assert heard == [("superseded", "My locker is number 14")]  # the window shows it
    # Saving the same edit again (the window still showed the old version) is the same
    # success: no second version, no "changed on another machine" with the owner's words.
    again = store.memories.supersede(memory.id, "My locker is number 14", now=LATER)
    assert again.id == saved.id
    assert versions(memory, store) == [
        ("My locker is number 12", "superseded"),
        ("My locker is number 14", "active"),
    ]


def test_an_edit_cut_off_before_its_commit_is_reported_not_saved(
    store: PostgresStore, lossy_proxy: LossyProxy, pg_url: str
) -> None:
    memory = store.memories.add("My locker is number 12", now=NOW)
    lossy_proxy.cut_at(b"INSERT")  # the new version's row: the transaction never commits
    with pytest.raises(StoreUnreachableError, match="was not saved: nothing changed"):
        store.memories.supersede(memory.id, "My locker is number 14", now=LATER)
    assert lossy_proxy.cut.is_set()
    assert versions(memory, store) == [("My locker is number 12", "active")]
    saved = store.memories.supersede(memory.id, "My locker is number 14", now=LATER)
    assert versions(memory, store) == [
        ("My locker is number 12", "superseded"),
        (saved.content, "active"),
    ]


def test_an_edit_whose_outcome_cannot_be_learned_yet_is_safe_to_save_again(
    store: PostgresStore, lossy_proxy: LossyProxy, pg_url: str
) -> None:
    """The server stops answering as the reply is lost and is still away when the store
    asks: the owner hears that it is not known; saving again once it answers succeeds."""
    store.memories.landed_wait_s = 0.3
    memory = store.memories.add("My locker is number 12", now=NOW)
    with (
        lossy_proxy.unanswered_after_commit(),
        pytest.raises(StoreUnreachableError, match="cannot tell yet whether it was"),
    ):
        store.memories.supersede(memory.id, "My locker is number 14", now=LATER)
    again = store.memories.supersede(memory.id, "My locker is number 14", now=LATER)
    assert again.content == "My locker is number 14"
    assert versions(memory, store) == [
        ("My locker is number 12", "superseded"),
        ("My locker is number 14", "active"),
    ]


def test_another_edit_after_an_unknown_outcome_goes_on_top_of_the_owners_own(
    store: PostgresStore, lossy_proxy: LossyProxy
) -> None:
    """The owner, told it is not known whether the edit was saved, saves other words: the
    edit that did land is the owner's, not another machine's, so no conflict is shown."""
    store.memories.landed_wait_s = 0.3
    memory = store.memories.add("My locker is number 12", now=NOW)
    with (
        lossy_proxy.unanswered_after_commit(),
        pytest.raises(StoreUnreachableError, match="cannot tell yet"),
    ):
        store.memories.supersede(memory.id, "My locker is number 14", now=LATER)
    saved = store.memories.supersede(memory.id, "My locker is number 15", now=LATER)
    assert versions(memory, store) == [
        ("My locker is number 12", "superseded"),
        ("My locker is number 14", "superseded"),
        ("My locker is number 15", "active"),
    ]
    assert saved.content == "My locker is number 15"


def test_an_edit_racing_another_machines_is_still_a_conflict(
    store: PostgresStore, pg_url: str, tmp_path: Path
) -> None:
    """What the retry takes as its own is only this machine's unseen edit, or the very same
    words: another machine's edit of the version stays a conflict."""
    memory = store.memories.add("My locker is number 12", now=NOW)
    with PostgresStore(pg_url, outbox_dir=tmp_path / "desktop", follow_changes=False) as other:
        other.memories.supersede(memory.id, "My locker is number 13", now=LATER)
    with pytest.raises(ChangedElsewhereError) as caught:
        store.memories.supersede(memory.id, "My locker is number 14", now=LATER)
    assert caught.value.theirs == "My locker is number 13"


def confirm(store: PostgresStore, memory: Memory) -> Memory:
    return store.memories.promote(memory.id, now=LATER)


def reconfirm(store: PostgresStore, memory: Memory) -> Memory:
    return store.memories.reconfirm(memory.id, now=LATER)


def reject(store: PostgresStore, memory: Memory) -> Memory:
    return store.memories.reject(memory.id, now=LATER)


def archive(store: PostgresStore, memory: Memory) -> Memory:
    return store.memories.archive(memory.id, now=LATER)


def restore(store: PostgresStore, memory: Memory) -> Memory:
    return store.memories.restore(memory.id, now=LATER)


Change = Callable[[PostgresStore, Memory], Memory]
# Each status change: the memory it starts from (made by `setup`), and what it leaves.
CHANGES: dict[str, tuple[str, Change, MemoryStatus]] = {
    "confirm": ("staged", confirm, MemoryStatus.ACTIVE),
    "reconfirm": ("active", reconfirm, MemoryStatus.ACTIVE),
    "reject": ("staged", reject, MemoryStatus.REJECTED),
    "archive": ("active", archive, MemoryStatus.ARCHIVED),
    "restore": ("rejected", restore, MemoryStatus.STAGED),
}


def setup(store: PostgresStore, start: str) -> Memory:
    memory = store.memories.stage("The spare key is with Anna", now=NOW)
    if start == "active":
        return store.memories.promote(memory.id, now=NOW)
    if start == "rejected":
        return store.memories.reject(memory.id, now=NOW)
    return memory


@pytest.mark.parametrize("name", list(CHANGES))
def test_a_status_change_whose_reply_is_lost_is_reported_done(
    store: PostgresStore, lossy_proxy: LossyProxy, name: str
) -> None:
    start, change, status = CHANGES[name]
    memory = setup(store, start)
    heard: list[str] = []
    store.memories.listeners.append(lambda event, m: heard.append(m.status.value))
    lossy_proxy.cut_at(b"COMMIT")
    done = change(store, memory)
    assert lossy_proxy.cut.is_set()
    assert done.status is status
    if name in ("confirm", "reconfirm"):
        assert done.last_confirmed_at == LATER
    assert heard == [status.value]
    assert store.memories.get(memory.id) == done


@pytest.mark.parametrize("name", ["confirm", "reject", "archive", "restore"])
def test_a_status_change_whose_outcome_cannot_be_learned_yet_is_safe_to_do_again(
    store: PostgresStore, lossy_proxy: LossyProxy, name: str
) -> None:
    start, change, status = CHANGES[name]
    store.memories.landed_wait_s = 0.3
    memory = setup(store, start)
    with (
        lossy_proxy.unanswered_after_commit(),
        pytest.raises(StoreUnreachableError, match="cannot tell yet"),
    ):
        change(store, memory)
    # It landed; doing it again is its success, not "only a staged memory can be ...".
    assert change(store, memory).status is status


def test_a_new_memory_whose_reply_is_lost_lands_once(
    store: PostgresStore, lossy_proxy: LossyProxy, pg_url: str
) -> None:
    """Already so before the lost-reply checks: the id is made here, the memory waits in
    the outbox, and the hand-over skips what the server has."""
    lossy_proxy.cut_at(b"COMMIT")
    saved = store.memories.add("The boiler was serviced in May", now=NOW)
    assert lossy_proxy.cut.is_set()
    assert [m.id for m in store.outbox.pending()] == [saved.id]
    store.memories.hand_over_pending()
    assert store.outbox.pending() == []
    with psycopg.connect(pg_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT id FROM memories WHERE content = %s", (saved.content,)
        ).fetchall()
    assert rows == [(saved.id,)]


def test_a_forget_whose_reply_is_lost_is_reported_done(
    store: PostgresStore, lossy_proxy: LossyProxy
) -> None:
    memory = store.memories.add("The door code is 4711", now=NOW)
    edited = store.memories.supersede(memory.id, "The door code is 4712", now=LATER)
    heard: list[tuple[str, str]] = []
    store.memories.listeners.append(lambda event, m: heard.append((event, m.id)))
    lossy_proxy.cut_at(b"COMMIT")
    report = forget(store, [edited.id], chain=True)
    assert lossy_proxy.cut.is_set()
    assert report.forgotten == (memory.id, edited.id) and report.chains == 1
    assert heard == [("forgotten", memory.id), ("forgotten", edited.id)]
    assert store.memories.get_many([memory.id, edited.id]) == {}


def test_a_forget_whose_outcome_cannot_be_learned_yet_is_done_when_asked_again(
    store: PostgresStore, lossy_proxy: LossyProxy
) -> None:
    """Asked again, the forget that landed unseen is its success, and the listeners (the
    window's lists) hear every version it removed, as for a forget whose reply came."""
    store.memories.landed_wait_s = 0.3
    memory = store.memories.add("The door code is 4711", now=NOW)
    edited = store.memories.supersede(memory.id, "The door code is 4712", now=LATER)
    heard: list[tuple[str, str]] = []
    store.memories.listeners.append(lambda event, m: heard.append((event, m.id)))
    with (
        lossy_proxy.unanswered_after_commit(),
        pytest.raises(StoreUnreachableError, match="cannot tell yet"),
    ):
        forget(store, [edited.id], chain=True)
    assert heard == []
    report = forget(store, [edited.id], chain=True)
    assert report.forgotten == (memory.id, edited.id)
    assert heard == [("forgotten", memory.id), ("forgotten", edited.id)]
    assert store.memories.get_many([memory.id, edited.id]) == {}
    # Only once: a third request names a memory there is none of.
    with pytest.raises(NotFoundError, match="No memory has the id"):
        forget(store, [edited.id], chain=True)


def reopened(proxy: LossyProxy, pg_url: str, folder: Path) -> PostgresStore:
    """The store of the app started again on this machine (the same data folder)."""
    return PostgresStore(
        proxy.url(pg_url), outbox_dir=folder, follow_changes=False, connect_timeout=2
    )


def unknown_then_restart(
    store: PostgresStore, proxy: LossyProxy, do: Callable[[PostgresStore], object]
) -> None:
    """`do` lands on the server while its reply is lost and the server does not answer the
    question whether it did; then the app is closed (it is started again by `reopened`)."""
    store.memories.landed_wait_s = 0.3
    with (
        proxy.unanswered_after_commit(),
        pytest.raises(StoreUnreachableError, match="cannot tell yet"),
    ):
        do(store)
    store.close()


# The event each change's listeners hear.
EVENTS = {"confirm": "promoted", "reject": "rejected", "archive": "archived", "restore": "restored"}


@pytest.mark.parametrize("name", ["confirm", "reject", "archive", "restore"])
def test_a_status_change_of_unknown_outcome_is_done_when_repeated_after_a_restart(
    store: PostgresStore, lossy_proxy: LossyProxy, pg_url: str, tmp_path: Path, name: str
) -> None:
    """Told that doing it again is safe, the owner does it again the next day: the change
    found done is its success ("already done"), not "memory ... is active"."""
    start, change, status = CHANGES[name]
    memory = setup(store, start)
    unknown_then_restart(store, lossy_proxy, lambda s: change(s, memory))
    with reopened(lossy_proxy, pg_url, tmp_path) as again:
        heard: list[tuple[str, str]] = []
        again.memories.listeners.append(lambda event, m: heard.append((event, m.status.value)))
        done = change(again, memory)
        assert done.status is status
        assert again.memories.get(memory.id) == done
        assert heard == [(EVENTS[name], status.value)]
        # Taken so once: the same change found done again (another window's, or a third
        # click) is what it always was, an error that says what the memory is.
        with pytest.raises(IllegalTransitionError, match=f"is {status.value}"):
            change(again, memory)


def test_an_edit_of_unknown_outcome_goes_on_top_after_a_restart(
    store: PostgresStore, lossy_proxy: LossyProxy, pg_url: str, tmp_path: Path
) -> None:
    """After a restart, the owner's other words go on top of the owner's own edit that
    landed unseen, with no "changed on another machine"."""
    memory = store.memories.add("My locker is number 12", now=NOW)
    unknown_then_restart(
        store,
        lossy_proxy,
        lambda s: s.memories.supersede(memory.id, "My locker is number 14", now=LATER),
    )
    with reopened(lossy_proxy, pg_url, tmp_path) as again:
        saved = again.memories.supersede(memory.id, "My locker is number 15", now=LATER)
        assert saved.content == "My locker is number 15"
        assert versions(memory, again) == [
            ("My locker is number 12", "superseded"),
            ("My locker is number 14", "superseded"),
            ("My locker is number 15", "active"),
        ]


def test_an_edit_of_unknown_outcome_that_another_machine_edited_after_is_a_conflict(
    store: PostgresStore, lossy_proxy: LossyProxy, pg_url: str, tmp_path: Path
) -> None:
    """What is taken as the owner's own is only the unseen edit, still the newest: another
    machine's edit on top of it stays a conflict after a restart (a guard on the fix)."""
    memory = store.memories.add("My locker is number 12", now=NOW)
    unknown_then_restart(
        store,
        lossy_proxy,
        lambda s: s.memories.supersede(memory.id, "My locker is number 14", now=LATER),
    )
    with PostgresStore(pg_url, outbox_dir=tmp_path / "desktop", follow_changes=False) as other:
        [ours] = [m for m in other.memories.chain(memory.id) if m.status.value == "active"]
        other.memories.supersede(ours.id, "My locker is number 13", now=LATER)
    with reopened(lossy_proxy, pg_url, tmp_path) as again:
        with pytest.raises(ChangedElsewhereError) as caught:
            again.memories.supersede(memory.id, "My locker is number 15", now=LATER)
        assert caught.value.theirs == "My locker is number 13"


def test_a_forget_of_unknown_outcome_is_done_when_repeated_after_a_restart(
    store: PostgresStore, lossy_proxy: LossyProxy, pg_url: str, tmp_path: Path
) -> None:
    memory = store.memories.add("The door code is 4711", now=NOW)
    unknown_then_restart(store, lossy_proxy, lambda s: forget(s, [memory.id]))
    with reopened(lossy_proxy, pg_url, tmp_path) as again:
        heard: list[tuple[str, str]] = []
        again.memories.listeners.append(lambda event, m: heard.append((event, m.id)))
        report = forget(again, [memory.id])
        assert report.forgotten == (memory.id,)
        assert heard == [("forgotten", memory.id)]
    # Only ids are kept on this machine for it, never the words of what was forgotten.
    assert not any(b"4711" in path.read_bytes() for path in tmp_path.glob("unsure-*"))


def wait_for(condition: Callable[[], bool], seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        threading.Event().wait(0.05)  # polling the store's feed thread, bounded
    return True


def test_the_windows_store_learns_what_landed_when_the_server_answers_again(
    lossy_proxy: LossyProxy, pg_url: str, tmp_path: Path
) -> None:
    """A forget whose outcome could not be learned: once the server answers, the app's store
    asks, and its listeners hear the memory forgotten (the window drops it) with no retry;
    a confirmation is heard so too."""
    with PostgresStore(lossy_proxy.url(pg_url), outbox_dir=tmp_path, connect_timeout=2) as app:
        app.memories.landed_wait_s = 0.3
        gone = app.memories.add("The door code is 4711", now=NOW)
        staged = app.memories.stage("The spare key is with Anna", now=NOW)
        heard: list[tuple[str, str]] = []
        app.memories.listeners.append(lambda event, m: heard.append((event, m.id)))
        # Only the change's own connection: the store's background work commits too.
        with (
            lossy_proxy.unanswered_after_commit(after=b"DELETE FROM memories"),
            pytest.raises(StoreUnreachableError, match="cannot tell yet"),
        ):
            forget(app, [gone.id])
        assert wait_for(lambda: heard == [("forgotten", gone.id)])
        assert wait_for(lambda: app.reachable)
        with (
            lossy_proxy.unanswered_after_commit(after=b"SET status = 'active'"),
            pytest.raises(StoreUnreachableError, match="cannot tell yet"),
        ):
            confirm(app, staged)
        assert wait_for(lambda: len(heard) == 2)
        assert heard[1] == ("promoted", staged.id)
        assert app.memories.unsure.unsettled() == []
        assert app.memories.get_many([gone.id]) == {}


def test_the_windows_store_asks_past_its_link_marked_lost(
    lossy_proxy: LossyProxy, pg_url: str, tmp_path: Path
) -> None:
    """The app's store (it follows changes) marks the server lost when the reply is lost,
    and fails calls at once until its change feed is back; asking whether the edit landed
    goes past that mark."""
    with PostgresStore(lossy_proxy.url(pg_url), outbox_dir=tmp_path, connect_timeout=2) as app:
        memory = app.memories.add("My locker is number 12", now=NOW)
        # Only the edit's own connection: the store's background work commits too.
        lossy_proxy.cut_at(b"COMMIT", after=b"SET status = 'superseded'")
        saved = app.memories.supersede(memory.id, "My locker is number 14", now=LATER)
        assert lossy_proxy.cut.is_set()
        assert saved.content == "My locker is number 14"
    with psycopg.connect(pg_url, autocommit=True) as conn:
        rows = conn.execute("SELECT content, status FROM memories ORDER BY seq").fetchall()
    assert rows == [
        ("My locker is number 12", "superseded"),
        ("My locker is number 14", "active"),
    ]


def test_a_damaged_note_of_unknown_changes_is_set_aside_and_the_store_opens(
    lossy_proxy: LossyProxy, pg_url: str, tmp_path: Path
) -> None:
    """The notes are a hint, not memories: one that does not read is kept aside (never
    deleted) and counts as none; the store opens and notes the next change afresh."""
    with reopened(lossy_proxy, pg_url, tmp_path) as first:
        memory = first.memories.stage("The spare key is with Anna", now=NOW)
        location = first.location
    notes = unsure_path(tmp_path, location)
    notes.write_bytes(b'[{"event": "promoted", "key": \xff')
    with reopened(lossy_proxy, pg_url, tmp_path) as again:
        unknown_then_restart(again, lossy_proxy, lambda s: confirm(s, memory))
    assert notes.with_name(notes.name + ".unreadable").read_bytes().endswith(b"\xff")
    assert [entry["key"] for entry in json.loads(notes.read_text(encoding="utf-8"))] == [memory.id]


def lines_of(stream: IO[str]) -> queue.Queue[str]:
    """The lines of a child's `stream` as they come (read on a thread of their own)."""
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in stream:
            lines.put(line)

    threading.Thread(target=read, name="child-log", daemon=True).start()
    return lines


def test_an_app_that_dies_while_asking_leaves_the_change_noted(
    lossy_proxy: LossyProxy, pg_url: str, tmp_path: Path
) -> None:
    """The app is killed during the seconds it asks whether a confirmation landed: the note
    is already in the data folder, so the app started again asks, and shows it confirmed."""
    with PostgresStore(pg_url, outbox_dir=tmp_path / "desktop", follow_changes=False) as other:
        memory = other.memories.stage("The spare key is with Anna", now=NOW)
    command = [sys.executable, "-m", "tests.store.unsure_asker", lossy_proxy.url(pg_url)]
    child = subprocess.Popen(
        [*command, str(tmp_path), memory.id],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert child.stdout is not None and child.stdin is not None and child.stderr is not None
    logged = lines_of(child.stderr)
    try:
        assert child.stdout.readline() == "ready\n"
        with lossy_proxy.unanswered_after_commit(after=b"SET status = 'active'"):
            child.stdin.write("go\n")
            child.stdin.flush()
            deadline = time.monotonic() + 60
            while "asking the server whether it was saved" not in logged.get(
                timeout=max(0.0, deadline - time.monotonic())
            ):
                pass
            assert lossy_proxy.cut.is_set()
            child.kill()  # mid-question: the server still does not answer
            child.wait(timeout=30)
    finally:
        child.kill()
        child.wait()
    [notes] = tmp_path.glob("unsure-for-server-*.json")
    assert [change for change, _ in UnsureChanges(notes).unsettled()] == [("promoted", memory.id)]
    # The app started again asks by itself once its change feed reaches the server (the
    # note stays, marked landed, for a repeat from a window that still showed it).
    with PostgresStore(lossy_proxy.url(pg_url), outbox_dir=tmp_path, connect_timeout=2) as app:
        assert wait_for(lambda: app.memories.unsure.unsettled() == [])
        assert app.memories.get(memory.id).status is MemoryStatus.ACTIVE
    assert [entry["landed"] for entry in json.loads(notes.read_text(encoding="utf-8"))] == [True]


def test_the_background_settling_leaves_a_change_alone_while_it_is_asked_about(
    store: PostgresStore, lossy_proxy: LossyProxy
) -> None:
    """The note is made before the change's own question: settling the notes meanwhile (the
    server found again) must not ask about it too, nor report its landing a second time."""
    memory = setup(store, "staged")
    store.memories.landed_wait_s = 60.0
    heard: list[str] = []
    store.memories.listeners.append(lambda event, m: heard.append(event))
    outcome: list[object] = []
    asker = threading.Thread(target=lambda: outcome.append(confirm(store, memory)))
    with lossy_proxy.unanswered_after_commit():
        asker.start()
        assert wait_for(lambda: store.memories.unsure.unsettled() != [])  # it asks now
        assert store.memories.settle_unsure() == 0
        assert heard == []
    asker.join(timeout=30)
    assert [getattr(done, "status", None) for done in outcome] == [MemoryStatus.ACTIVE]
    assert heard == ["promoted"]
    assert store.memories.unsure.unsettled() == []
