"""Two machines on one server at the same moment (two stores, each with its own data folder
and its own connections, driven from two threads that start together): edits of one version,
consolidation runs, and the server dying in the middle of a save.

What must hold: no edit is lost without the owner being told (the loser gets both texts), a
memory never has two active versions, a consolidation never merges, archives or decays a
memory twice, and a save cut off by the server's death is either stored whole or reported
as not saved, with nothing half-written.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TypeVar

import numpy as np
import psycopg
import pytest

from tests.fakes.openai_server import OpenAIServer
from tests.fakes.postgres import PgServer
from timothy.errors import ChangedElsewhereError, StoreUnreachableError
from timothy.memory.consolidation import LeftAlone, consolidate
from timothy.memory.forget import forget
from timothy.providers.base import ChatProvider
from timothy.providers.factory import chat_provider
from timothy.settings import Settings
from timothy.store.postgres import PostgresStore
from timothy.store.records import MemoryStatus, MemoryType

T = TypeVar("T")
ROUNDS = 12
DIM = 8
NOW = datetime(2025, 6, 1, 8, 0, tzinfo=UTC)
RECOVERY_SECONDS = 60.0


@pytest.fixture
def machines(pg_url: str, tmp_path: Path) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    """A laptop and a desktop on one server, each with its own data folder."""
    with (
        PostgresStore(pg_url, outbox_dir=tmp_path / "laptop", follow_changes=False) as laptop,
        PostgresStore(pg_url, outbox_dir=tmp_path / "desktop", follow_changes=False) as desktop,
    ):
        yield laptop, desktop


def at_once(*calls: Callable[[], T]) -> list[T | BaseException]:
    """Run each call on its own thread, released together; what each returned or raised."""
    start = threading.Barrier(len(calls))
    results: list[T | BaseException] = [RuntimeError("did not finish")] * len(calls)

    def run(index: int, call: Callable[[], T]) -> None:
        start.wait()
        try:
            results[index] = call()
        except BaseException as exc:  # the outcome under test
            results[index] = exc

    threads = [threading.Thread(target=run, args=pair) for pair in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


def active_versions(store: PostgresStore, memory_id: str) -> list[str]:
    return [m.content for m in store.memories.chain(memory_id) if m.status is MemoryStatus.ACTIVE]


def test_two_machines_editing_one_version_at_once_keep_one_head_and_lose_nothing(
    machines: tuple[PostgresStore, PostgresStore],
) -> None:
    laptop, desktop = machines
    memory = laptop.memories.add("My sister lives in Lyon")
    for round_ in range(ROUNDS):
        ours, theirs = f"Lyon, round {round_} (laptop)", f"Lyon, round {round_} (desktop)"
        results = at_once(
            functools.partial(laptop.memories.supersede, memory.id, ours),
            functools.partial(desktop.memories.supersede, memory.id, theirs),
        )
        saved = [r for r in results if not isinstance(r, BaseException)]
        refused = [r for r in results if isinstance(r, BaseException)]
        # Exactly one edit stands; the other is refused with both texts, never dropped.
        assert len(saved) == 1 and len(refused) == 1, results
        [error] = refused
        assert isinstance(error, ChangedElsewhereError)
        assert error.theirs == saved[0].content
        assert error.ours == ({ours, theirs} - {saved[0].content}).pop()
        assert active_versions(laptop, memory.id) == [saved[0].content]
        memory = saved[0]  # the next round edits the version that stands
    chain = laptop.memories.chain(memory.id)
    assert len(chain) == ROUNDS + 1
    assert [m.status for m in chain].count(MemoryStatus.ACTIVE) == 1


def test_an_edit_racing_a_merge_of_the_same_memory_never_leaves_two_heads(
    machines: tuple[PostgresStore, PostgresStore],
) -> None:
    """Consolidation merges on one machine while the owner edits a member on the other."""
    laptop, desktop = machines
    for round_ in range(ROUNDS):
        first = laptop.memories.add(f"I like green tea ({round_})")
        second = laptop.memories.add(f"I really like green tea ({round_})")
        results = at_once(
            functools.partial(
                laptop.memories.merge, [first.id, second.id], f"Green tea, always ({round_})"
            ),
            functools.partial(desktop.memories.supersede, first.id, f"I love green tea ({round_})"),
        )
        merged, edited = results
        assert isinstance(merged, BaseException) != isinstance(edited, BaseException), results
        if isinstance(edited, ChangedElsewhereError):  # the merge won: the edit is told so
            assert edited.theirs.startswith("Green tea, always")
            assert edited.ours == f"I love green tea ({round_})"
        heads = active_versions(laptop, first.id)
        assert len(heads) == 1, heads
        # The other member is merged only when the merge won, and then into the same head.
        if not isinstance(merged, BaseException):
            assert active_versions(laptop, second.id) == heads
        else:
            assert active_versions(laptop, second.id) == [second.content]


def direction(seed: int, wobble: float) -> list[float]:
    base = np.random.default_rng(seed).standard_normal(DIM)
    nudge = np.random.default_rng(seed + 1000).standard_normal(DIM)
    return list(base / np.linalg.norm(base) + wobble * nudge / np.linalg.norm(nudge))


def merging_chat(server: OpenAIServer) -> ChatProvider:
    provider = chat_provider(
        Settings(chat_provider="openai", openai=server.settings(chat_model="merge-mini"))
    )
    assert provider is not None
    return provider


def test_consolidation_on_both_machines_at_once_merges_archives_and_decays_once(
    machines: tuple[PostgresStore, PostgresStore], openai_server: OpenAIServer
) -> None:
    """`consolidate` itself, as `timothy consolidate` runs it (no daily lock) on the laptop
    while the desktop's window runs its own: every change happens once."""
    laptop, desktop = machines
    old = NOW - timedelta(days=400)
    groups = []
    for seed in range(4):
        made = [
            laptop.memories.add(f"Fact {seed}: I take the {word} train", now=old)
            for word in ("early", "morning")
        ]
        groups.append(made)
    model = laptop.vectors.ensure_model("test/embedder", DIM)
    laptop.vectors.put_many(
        model,
        [
            (m.id, direction(seed, 0.01 * i))
            for seed, made in enumerate(groups)
            for i, m in enumerate(made)
        ],
    )
    laptop.vectors.set_active_model(model.name)
    stale = [
        laptop.memories.add(f"We went to Rome in year {n}", type=MemoryType.EPISODIC, now=old)
        for n in range(5)
    ]
    fading = [
        laptop.memories.add(f"My locker is number {n}", confidence=0.9, now=old) for n in range(5)
    ]
    for seed in range(4):
        # One answer per group per machine: each may ask before it finds the other merged.
        for _ in range(2):
            openai_server.reply(
                json.dumps({"same_fact": True, "content": f"Fact {seed}: I take the early train"})
            )
    chat = merging_chat(openai_server)
    reports = at_once(
        lambda: consolidate(laptop, chat, now=NOW),
        lambda: consolidate(desktop, chat, now=NOW),
    )
    assert not any(isinstance(r, BaseException) for r in reports), reports
    merged_ids = [
        group.canonical
        for report in reports
        for group in report.merged  # type: ignore[union-attr]
    ]
    archived = [a.id for report in reports for a in report.archived]  # type: ignore[union-attr]
    decayed = [d.id for report in reports for d in report.decayed]  # type: ignore[union-attr]
    # Each group merged once, by one machine; the other left it as changed meanwhile (or
    # found it merged already).
    assert len(merged_ids) == len(groups)
    for made in groups:
        heads = {tuple(active_versions(laptop, m.id)) for m in made}
        assert len(heads) == 1 and len(next(iter(heads))) == 1
    assert sorted(archived) == sorted(m.id for m in stale)
    # Once each, by one machine or the other (the near-duplicates are old facts too).
    assert len(decayed) == len(set(decayed)) and {m.id for m in fading} <= set(decayed)
    once = {m.id: m.confidence for m in laptop.memories.get_many(m.id for m in fading).values()}
    assert len(set(once.values())) == 1  # every one lowered by the same, single step
    lowered = next(iter(once.values()))
    assert 0 < lowered < 0.9
    # Running again finds nothing left to do: nothing was half done.
    again = consolidate(desktop, chat, now=NOW)
    assert not again.merged and not again.archived and not again.decayed
    left = [g for report in reports for g in report.left_alone]  # type: ignore[union-attr]
    assert all(g.reason is LeftAlone.MEMBERS_CHANGED for g in left), left


SLOW_WORDS = "slow save"


def slow_inserts(url: str, seconds: float = 60) -> None:
    """A server that takes its time writing memories saying SLOW_WORDS (a busy disk)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE FUNCTION slow_memory() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
            f"IF NEW.content LIKE '%{SLOW_WORDS}%' THEN PERFORM pg_sleep({seconds}); END IF; "
            "RETURN NEW; END $$"
        )
        conn.execute(
            "CREATE TRIGGER slow_memory BEFORE INSERT ON memories "
            "FOR EACH ROW EXECUTE FUNCTION slow_memory()"
        )


def wait_for_slow_insert(url: str) -> None:
    """Return once a save is inside its slow insert (its transaction holds its row locks)."""
    deadline = time.monotonic() + 30
    while True:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'"
            ).fetchone()
        if row is not None and row[0]:
            break
        assert time.monotonic() < deadline, "the save never reached the server"
        time.sleep(0.05)  # polling another process's state, bounded


def kill_while_writing(server: PgServer, url: str) -> None:
    """Kill the server once a save is inside its slow insert."""
    wait_for_slow_insert(url)
    server.kill()


def test_forgetting_a_memory_while_another_machine_edits_it_forgets_the_edit_too(
    machines: tuple[PostgresStore, PostgresStore], pg_url: str
) -> None:
    """The desktop's edit is being written when the laptop forgets the memory for good,
    whole chain: the forget waits for the edit and takes its new version too (the owner
    asked for the memory to be gone; its newest words must not stay behind, active)."""
    laptop, desktop = machines
    memory = laptop.memories.add("The door code is 4711")
    slow_inserts(pg_url, seconds=1.5)
    edit = f"The door code is 4712 ({SLOW_WORDS})"

    def forget_once_the_edit_is_under_way() -> object:
        wait_for_slow_insert(pg_url)
        return forget(laptop, [memory.id], chain=True)

    edited, forgot = at_once(
        lambda: desktop.memories.supersede(memory.id, edit),
        forget_once_the_edit_is_under_way,
    )
    assert not isinstance(forgot, BaseException), forgot
    assert not isinstance(edited, BaseException), edited  # it landed first, then went
    assert laptop.memories.get_many([memory.id, edited.id]) == {}
    assert [m for m in laptop.memories.list() if "door code" in m.content] == []


@pytest.fixture
def server_up(pg_server: PgServer) -> Iterator[PgServer]:
    yield pg_server
    pg_server.start()


def test_an_edit_cut_off_by_the_server_dying_is_reported_and_leaves_nothing_half_written(
    server_up: PgServer, pg_url: str, tmp_path: Path
) -> None:
    """The old version was already marked superseded in the save's transaction when the
    server died: it must come back active, with no new version beside it."""
    with PostgresStore(
        pg_url, outbox_dir=tmp_path, follow_changes=False, connect_timeout=2
    ) as store:
        memory = store.memories.add("My locker is number 12")
        store.memories.landed_wait_s = 0.5  # asking the dead server whether it landed
        slow_inserts(pg_url)
        results = at_once(
            lambda: store.memories.supersede(memory.id, f"My locker is number 14 ({SLOW_WORDS})"),
            lambda: kill_while_writing(server_up, pg_url),
        )
        assert isinstance(results[0], StoreUnreachableError), results  # the owner is told
        assert "cannot tell yet" in str(results[0])  # the server could not be asked
        server_up.start()
        chain = store.memories.chain(memory.id)
        assert [(m.content, m.status) for m in chain] == [
            ("My locker is number 12", MemoryStatus.ACTIVE)
        ]
        assert store.memories.get(memory.id).superseded_by is None


def test_a_new_memory_cut_off_by_the_server_dying_is_kept_and_lands_once(
    server_up: PgServer, pg_url: str, tmp_path: Path
) -> None:
    with PostgresStore(
        pg_url, outbox_dir=tmp_path, follow_changes=False, connect_timeout=2
    ) as store:
        slow_inserts(pg_url)
        results = at_once(
            lambda: store.memories.add(f"The spare key is with Anna ({SLOW_WORDS})"),
            lambda: kill_while_writing(server_up, pg_url),
        )
        saved = results[0]
        assert not isinstance(saved, BaseException), results  # kept on this machine
        assert [m.id for m in store.outbox.pending()] == [saved.id]
        server_up.start()
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("DROP TRIGGER slow_memory ON memories")
        store.memories.hand_over_pending()
        assert store.outbox.pending() == []
        found = [m for m in store.memories.list() if m.content == saved.content]
        assert [m.id for m in found] == [saved.id]
