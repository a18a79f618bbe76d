"""Consolidation without a chat model: archival and decay with time travel, near-duplicate
grouping, dry runs, the schedule, the report, and interrupted or failing runs."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from timothy.memory.consolidation import (
    ConsolidationReport,
    LeftAlone,
    Step,
    consolidate,
    due,
    last_report,
    last_run,
    stale_periods,
)
from timothy.memory.settings import ConsolidationSettings
from timothy.providers.base import CancelToken
from timothy.store import Store
from timothy.store.records import Memory, MemoryStatus, MemoryType
from timothy.store.transfer import export_lines

T0 = datetime(2024, 1, 1, 9, 0, tzinfo=UTC)
DIM = 8


def days(n: float) -> datetime:
    return T0 + timedelta(days=n)


def snapshot(store: Store) -> tuple[list[str], list[tuple[object, ...]], list[tuple[object, ...]]]:
    """Everything consolidation could change: memories (with vectors), meta, decay records."""
    with store.db.read() as conn:
        meta = conn.execute("SELECT key, value FROM meta ORDER BY key").fetchall()
        decay = conn.execute("SELECT * FROM memory_decay ORDER BY memory_seq").fetchall()
    return list(export_lines(store)), meta, decay


def embed(store: Store, vectors: dict[str, Sequence[float]]) -> None:
    model = store.vectors.ensure_model("test/embedder", DIM)
    store.vectors.put_many(model, vectors.items())
    store.vectors.set_active_model(model.name)


def direction(seed: int, wobble: float = 0.0) -> list[float]:
    """A fixed random direction per seed, nudged by `wobble` (0.01 keeps cosine > 0.99)."""
    base = np.random.default_rng(seed).standard_normal(DIM)
    nudge = np.random.default_rng(seed * 7919 + int(wobble * 1e6)).standard_normal(DIM)
    return list(base / np.linalg.norm(base) + wobble * nudge / np.linalg.norm(nudge))


# -- archiving stale episodes ----------------------------------------------------------


def test_episodes_unrecalled_for_180_days_are_archived_edges_included(store: Store) -> None:
    repo = store.memories
    now = days(400)
    created_179 = repo.add("Lunch with Ana", type=MemoryType.EPISODIC, now=now - timedelta(179))
    created_181 = repo.add("Dinner with Bo", type=MemoryType.EPISODIC, now=now - timedelta(181))
    recalled_179 = repo.add("Trip to Oslo", type=MemoryType.EPISODIC, now=days(0))
    repo.mark_retrieved([recalled_179.id], now=now - timedelta(179))
    recalled_181 = repo.add("Trip to Rome", type=MemoryType.EPISODIC, now=days(0))
    repo.mark_retrieved([recalled_181.id], now=now - timedelta(181))
    old_fact = repo.add("I am left-handed", type=MemoryType.SEMANTIC, now=days(0))
    old_preference = repo.add("I like jazz", type=MemoryType.PREFERENCE, now=days(0))
    staged = repo.stage("Went to a gig", type=MemoryType.EPISODIC, now=days(0))

    report = consolidate(store, None, now=now)

    assert {a.id for a in report.archived} == {created_181.id, recalled_181.id}
    archived = {a.id: a for a in report.archived}
    assert archived[recalled_181.id].last_seen == now - timedelta(181)
    assert archived[created_181.id].content == "Dinner with Bo"
    status = {m.id: m.status for m in repo.list()}
    assert status[created_181.id] is MemoryStatus.ARCHIVED
    assert status[recalled_181.id] is MemoryStatus.ARCHIVED
    for kept in (created_179, recalled_179, old_fact, old_preference):
        assert status[kept.id] is MemoryStatus.ACTIVE
    assert status[staged.id] is MemoryStatus.STAGED
    assert repo.count() == 7  # nothing deleted


def test_exactly_180_days_unrecalled_is_stale(store: Store) -> None:
    memory = store.memories.add("Saw a comet", type=MemoryType.EPISODIC, now=days(0))
    assert consolidate(store, None, now=days(180) - timedelta(seconds=1)).archived == ()
    assert [a.id for a in consolidate(store, None, now=days(180)).archived] == [memory.id]


# -- decaying stale facts --------------------------------------------------------------


def test_facts_unconfirmed_for_more_than_365_days_lose_one_step(store: Store) -> None:
    repo = store.memories
    now = days(1000)
    fresh = repo.add("I work at Initech", confidence=0.9, now=now - timedelta(364))
    stale = repo.add("I drive a Volvo", confidence=0.9, now=now - timedelta(366))
    preference = repo.add("I like tea", type=MemoryType.PREFERENCE, now=now - timedelta(900))
    episode = repo.add("Moved house", type=MemoryType.EPISODIC, now=now - timedelta(100))

    report = consolidate(store, None, now=now)

    assert [
        (d.id, d.confidence_before, d.confidence_after, d.stale_periods) for d in report.decayed
    ] == [(stale.id, 0.9, 0.8, 1)]
    assert repo.get(stale.id).confidence == 0.8
    assert repo.get(fresh.id).confidence == 0.9
    assert repo.get(preference.id).confidence == preference.confidence
    assert repo.get(episode.id).confidence == episode.confidence
    assert repo.get(stale.id).status is MemoryStatus.ACTIVE


def test_exactly_365_days_unconfirmed_is_not_yet_stale(store: Store) -> None:
    memory = store.memories.add("I own a bike", confidence=1.0, now=days(0))
    assert consolidate(store, None, now=days(365)).decayed == ()
    later = consolidate(store, None, now=days(365) + timedelta(seconds=1))
    assert [d.id for d in later.decayed] == [memory.id]


def test_decay_is_once_per_period_follows_time_and_stops_at_the_floor(store: Store) -> None:
    repo = store.memories
    settings = ConsolidationSettings(decay_step=0.25, decay_floor=0.3)
    fact = repo.add("My locker is number nine", confidence=1.0, now=days(0))
    never_confirmed = repo.stage("I have a dog", confidence=0.8, now=days(0))

    # Three whole periods stale at the first run: three steps at once, down to 0.25 -> floor.
    first = consolidate(store, None, settings, now=days(3 * 365 + 1))
    assert [(d.id, d.confidence_after, d.stale_periods) for d in first.decayed] == [
        (fact.id, 0.3, 3)
    ]
    assert repo.get(never_confirmed.id).confidence == 0.8  # staged: not a fact yet

    # Back above the floor only by a new confirmation, which restarts the clock.
    repo.reconfirm(fact.id, now=days(3 * 365 + 2))
    assert consolidate(store, None, settings, now=days(4 * 365)).decayed == ()


def test_decay_lowers_once_for_each_new_period_and_never_twice(store: Store) -> None:
    repo = store.memories
    fact = repo.add("My password hint is the cat", confidence=1.0, now=days(0))
    confidences = []
    for when in (366, 367, 500, 730, 731, 731, 1096, 1400, 1461):
        consolidate(store, None, now=days(when))
        confidences.append(repo.get(fact.id).confidence)
    assert confidences == [0.9, 0.9, 0.9, 0.9, 0.8, 0.8, 0.7, 0.7, 0.6]


def test_a_second_run_at_the_same_moment_changes_nothing(store: Store) -> None:
    repo = store.memories
    repo.add("Old episode", type=MemoryType.EPISODIC, now=days(0))
    repo.add("Old fact", confidence=0.9, now=days(0))
    repo.add("New fact", confidence=0.9, now=days(700))
    now = days(800)
    first = consolidate(store, None, now=now)
    assert first.archived and first.decayed
    before = snapshot(store)
    second = consolidate(store, None, now=now)
    assert second.archived == () and second.decayed == () and second.merged == ()
    after = snapshot(store)
    assert after[0] == before[0] and after[2] == before[2]  # meta holds the new report only


@pytest.mark.parametrize("age", [366, 3 * 365 + 10])
def test_stale_periods_counts_whole_periods_exceeded(age: int) -> None:
    period = timedelta(days=365)
    assert stale_periods(timedelta(days=age), period) == (age - 1) // 365
    assert stale_periods(period, period) == 0
    assert stale_periods(2 * period, period) == 1
    assert stale_periods(2 * period + timedelta(microseconds=1), period) == 2


# -- near-duplicates without a chat model ----------------------------------------------


def _duplicates(store: Store) -> dict[str, Memory]:
    repo = store.memories
    made = {
        "tea1": repo.add("I like green tea", now=days(0)),
        "tea2": repo.add("I really like green tea", now=days(1)),
        "tea3": repo.add("Green tea is what I like", now=days(2)),
        "budget1": repo.add("My budget is 500", now=days(3)),
        "budget2": repo.add("My budget is 800", now=days(4)),
        "alone": repo.add("I live in Lyon", now=days(5)),
        "pref": repo.add("I like green tea", type=MemoryType.PREFERENCE, now=days(6)),
        "unembedded": repo.add("I like green tea!", now=days(7)),
    }
    embed(
        store,
        {
            made["tea1"].id: direction(1),
            made["tea2"].id: direction(1, 0.01),
            made["tea3"].id: direction(1, 0.02),
            made["budget1"].id: direction(2),
            made["budget2"].id: direction(2, 0.01),
            made["alone"].id: direction(3),
            made["pref"].id: direction(1, 0.015),  # same vector region, another type
        },
    )
    return made


def test_without_a_chat_model_merging_is_skipped_and_groups_are_reported(store: Store) -> None:
    made = _duplicates(store)
    report = consolidate(store, None, now=days(10))
    assert report.merged == ()
    assert [note.step for note in report.skipped] == [Step.MERGE]
    assert "no chat model" in report.skipped[0].reason
    waiting = report.left_alone_for(LeftAlone.NO_CHAT_MODEL)
    assert [g.members for g in waiting] == [(made["tea1"].id, made["tea2"].id, made["tea3"].id)]
    guarded = report.left_alone_for(LeftAlone.FIGURES_DIFFER)
    assert [g.members for g in guarded] == [(made["budget1"].id, made["budget2"].id)]
    assert "500 / 800" in guarded[0].detail
    assert report.compared == 7 and report.not_compared == 1
    assert report.embedding_model == "test/embedder"
    assert {m.status for m in store.memories.list()} == {MemoryStatus.ACTIVE}


def test_without_embeddings_the_near_duplicate_step_is_skipped_and_the_rest_runs(
    store: Store,
) -> None:
    store.memories.add("I like tea", now=days(0))
    store.memories.add("I like tea", now=days(0))
    store.memories.add("Old episode", type=MemoryType.EPISODIC, now=days(0))
    report = consolidate(store, None, now=days(400))
    assert [note.step for note in report.skipped] == [Step.NEAR_DUPLICATES]
    assert "embedding" in report.skipped[0].reason
    assert len(report.archived) == 1 and len(report.decayed) == 2
    assert report.complete


# -- dry runs --------------------------------------------------------------------------


def test_a_dry_run_changes_nothing_and_reports_what_would_change(store: Store) -> None:
    made = _duplicates(store)
    old_episode = store.memories.add("Old episode", type=MemoryType.EPISODIC, now=days(0))
    now = days(400)
    before = snapshot(store)

    dry = consolidate(store, None, now=now, dry_run=True)

    assert snapshot(store) == before
    assert last_run(store) is None and last_report(store) is None
    assert dry.dry_run
    assert [a.id for a in dry.archived] == [old_episode.id]
    assert {d.id for d in dry.decayed} == {m.id for k, m in made.items() if k != "pref"}
    assert dry.summary().startswith("Consolidation (dry run): would archive 1 old episode")

    real = consolidate(store, None, now=now)
    assert real.archived == dry.archived
    assert real.decayed == dry.decayed
    assert real.left_alone == dry.left_alone


def test_a_dry_run_with_a_chat_model_lists_the_groups_it_would_merge(store: Store) -> None:
    made = _duplicates(store)

    class NeverCalled:  # a dry run must not reach the model: any call fails the test
        name = "none"
        model = "none"

        def complete(self, *args: object, **kwargs: object) -> str:
            raise AssertionError("a dry run called the chat model")

        def stream(self, *args: object, **kwargs: object) -> object:
            raise AssertionError("a dry run called the chat model")

    before = snapshot(store)
    report = consolidate(store, NeverCalled(), now=days(10), dry_run=True)  # type: ignore[arg-type]
    assert snapshot(store) == before
    assert [g.members for g in report.merged] == [
        (made["tea1"].id, made["tea2"].id, made["tea3"].id)
    ]
    assert report.merged[0].canonical is None
    assert report.summary() == (
        "Consolidation (dry run): would merge 3 memories in 1 group (1 group left alone)."
    )


# -- the schedule, the stored report ---------------------------------------------------


def test_a_run_is_due_once_a_day_and_only_complete_runs_count(store: Store) -> None:
    assert due(store, days(0))
    consolidate(store, None, now=days(0), dry_run=True)
    assert due(store, days(0))  # a dry run is not a run
    consolidate(store, None, now=days(0))
    assert last_run(store) == days(0)
    assert not due(store, days(0) + timedelta(hours=23, minutes=59))
    assert due(store, days(1))
    assert due(store, days(-1))  # the clock went back: run rather than wait a year
    assert due(store, days(0) + timedelta(hours=2), ConsolidationSettings(interval_hours=1))


def test_the_report_is_stored_and_reads_back_the_same(store: Store) -> None:
    _duplicates(store)
    store.memories.add("Old episode", type=MemoryType.EPISODIC, now=days(0))
    report = consolidate(store, None, now=days(400))
    stored = last_report(store)
    assert stored == report
    assert ConsolidationReport.from_json(report.to_json()) == report
    assert report.to_json()["summary"] == report.summary()
    lines = report.details()
    assert lines[0] == report.summary()
    assert any(line.startswith("archived ") for line in lines)
    assert any(line.startswith("lowered ") for line in lines)
    assert any(line.startswith("left alone (figures differ)") for line in lines)


def test_an_unreadable_stored_report_reads_as_none(store: Store) -> None:
    store.db.set_meta("consolidation.last_report", "{not json")
    assert last_report(store) is None
    store.db.set_meta("consolidation.last_report", '{"ran_at": "yesterday"}')
    assert last_report(store) is None
    store.db.set_meta("consolidation.last_run", "whenever")
    assert last_run(store) is None and due(store, days(0))


def test_nonsense_settings_are_refused_before_anything_changes(store: Store) -> None:
    store.memories.add("Old episode", type=MemoryType.EPISODIC, now=days(0))
    for bad in (
        ConsolidationSettings(duplicate_cosine=1.5),
        ConsolidationSettings(decay_floor=1.0),
        ConsolidationSettings(decay_step=0),
        ConsolidationSettings(episodic_archive_days=0),
        ConsolidationSettings(max_group_size=1),
    ):
        with pytest.raises(ValueError, match="Consolidation setting"):
            consolidate(store, None, bad, now=days(400))
    assert store.memories.count(status=MemoryStatus.ACTIVE) == 1


# -- interruptions and failures --------------------------------------------------------


def test_an_interrupted_run_is_not_counted_and_the_next_run_finishes(store: Store) -> None:
    repo = store.memories
    repo.add("Old episode", type=MemoryType.EPISODIC, now=days(0))
    fact = repo.add("Old fact", confidence=1.0, now=days(0))
    cancel = CancelToken()
    # The owner quits while the archive step commits.
    repo.listeners.append(lambda event, memory: cancel.cancel() if event == "archived" else None)

    first = consolidate(store, None, now=days(400), cancel=cancel)
    assert first.interrupted and not first.complete
    assert len(first.archived) == 1 and first.decayed == ()
    assert repo.get(fact.id).confidence == 1.0
    assert "interrupted" in first.summary()
    assert last_run(store) is None and due(store, days(400))

    second = consolidate(store, None, now=days(400))
    assert second.complete and second.archived == ()
    assert [d.id for d in second.decayed] == [fact.id]
    assert not due(store, days(400))


def test_a_crash_after_a_step_committed_leaves_a_consistent_store(store: Store) -> None:
    repo = store.memories
    episode = repo.add("Old episode", type=MemoryType.EPISODIC, now=days(0))
    fact = repo.add("Old fact", confidence=1.0, now=days(0))

    def crash(event: str, memory: Memory) -> None:
        if event == "archived":
            raise KeyboardInterrupt  # not an Exception: nothing on the way catches it

    repo.listeners.append(crash)
    with pytest.raises(KeyboardInterrupt):
        consolidate(store, None, now=days(400))
    repo.listeners.remove(crash)
    assert repo.get(episode.id).status is MemoryStatus.ARCHIVED
    assert repo.get(fact.id).confidence == 1.0
    assert last_run(store) is None

    report = consolidate(store, None, now=days(400))
    assert report.complete and [d.id for d in report.decayed] == [fact.id]


def test_a_locked_database_fails_the_writing_steps_and_the_run_stays_due(
    data_dir: Path,
) -> None:
    with Store.open(data_dir) as setup:
        setup.memories.add("Old episode", type=MemoryType.EPISODIC, now=days(0))
        setup.memories.add("Old fact", confidence=1.0, now=days(0))
    with Store.open(data_dir, busy_timeout_ms=50) as store, Store.open(data_dir) as other:
        blocker = other.db.connection()
        blocker.execute("BEGIN IMMEDIATE")
        try:
            report = consolidate(store, None, now=days(400))
        finally:
            blocker.execute("ROLLBACK")
        assert [note.step for note in report.failed] == [Step.ARCHIVE, Step.DECAY]
        assert "in use by another program" in report.failed[0].reason
        assert "archive failed" in report.summary()
        assert {m.status for m in store.memories.list()} == {MemoryStatus.ACTIVE}
        assert due(store, days(400))
        assert consolidate(store, None, now=days(400)).complete
        assert not due(store, days(400))
