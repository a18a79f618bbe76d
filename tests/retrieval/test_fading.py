"""Fading facts: what one leg alone can no longer recall, listed for re-confirmation."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from timothy.retrieval import Recaller, RecallSettings
from timothy.retrieval.fading import fading, fading_after_days
from timothy.store import MemoryType, Store

NOW = datetime(2025, 6, 1, tzinfo=UTC)


def test_one_leg_alone_loses_a_memory_after_about_154_days() -> None:
    # 90 * log2((1/61) / 0.005) = 154.18 days, the article's; the default k 10 with its
    # minimum carried over (0.005 * 61 / 11) keeps the same horizon.
    assert fading_after_days(MemoryType.SEMANTIC, RecallSettings.article()) == pytest.approx(
        154.180696699, rel=1e-9
    )
    assert fading_after_days(MemoryType.SEMANTIC, RecallSettings()) == pytest.approx(
        154.180696699, rel=1e-9
    )
    heavy = RecallSettings(type_weights={"preference": 2.0})
    assert fading_after_days(MemoryType.PREFERENCE, heavy) == pytest.approx(244.180696699)
    assert fading_after_days(MemoryType.SEMANTIC, RecallSettings(min_score=0)) == math.inf
    light = RecallSettings(type_weights={"semantic": 0.2})  # 0.2/61 < 0.005: never recallable
    assert fading_after_days(MemoryType.SEMANTIC, light) == 0.0


def test_fading_lists_facts_past_the_bar_oldest_first(store: Store) -> None:
    add = store.memories.add
    at_154 = add("semantic at 154 days", now=NOW - timedelta(days=154))
    at_155 = add("semantic at 155 days", now=NOW - timedelta(days=155))
    pref = add("preference at 300 days", type="preference", now=NOW - timedelta(days=300))
    proc = add("procedure at 200 days", type="procedural", now=NOW - timedelta(days=200))
    add("episode at 300 days", type="episodic", now=NOW - timedelta(days=300))
    archived = add("archived at 300 days", now=NOW - timedelta(days=300))
    store.memories.archive(archived.id)
    store.memories.stage("staged long ago", now=NOW - timedelta(days=300))

    found = fading(store.memories, RecallSettings(), NOW)
    assert [f.memory.id for f in found] == [pref.id, proc.id, at_155.id]
    assert at_154.id not in {f.memory.id for f in found}
    last = found[-1]
    # (1/11) * 0.5 ** (155 / 90): under 0.005 * 61 / 11, as (1/61) * ... is under 0.005
    assert last.best_score == pytest.approx(0.004968549454 * 61 / 11, rel=1e-9)
    assert last.days_unconfirmed == pytest.approx(155)
    expected = at_155.created_at + timedelta(days=154.180696699)
    assert abs(last.faded_at - expected) < timedelta(seconds=1)
    data = last.to_json()
    assert data["id"] == at_155.id and data["best_score"] == last.best_score

    # What fades cannot be recalled by one leg; re-confirming brings it back.
    with Recaller(store) as recaller:
        assert recaller.recall("155", now=NOW, mark=False).ranked == ()
        store.memories.confirm(at_155.id, now=NOW)
        assert at_155.id not in {f.memory.id for f in fading(store.memories, RecallSettings(), NOW)}
        result = recaller.recall("155", now=NOW, mark=False)
        assert [c.memory.id for c in result.ranked] == [at_155.id]


def test_a_type_weighted_out_of_reach_always_fades(store: Store) -> None:
    new = store.memories.add("brand new", now=NOW)
    found = fading(store.memories, RecallSettings(type_weights={"semantic": 0.2}), NOW)
    assert [f.memory.id for f in found] == [new.id]


def test_a_limited_list_is_the_head_of_the_whole_one(store: Store) -> None:
    """`limit` reads no more than that many of each type, and the answer is the first
    `limit` of the whole list: with the types interleaved in time, memories just inside the
    bar (the second of slack the query allows, which the exact score then turns away) and
    a confirmation that made an old memory young again."""
    bar = timedelta(days=fading_after_days(MemoryType.SEMANTIC, RecallSettings()))
    types = ("semantic", "preference", "procedural", "episodic")
    for n in range(24):
        store.memories.add(
            f"fact {n}", type=types[n % 4], now=NOW - bar - timedelta(days=3 * n + 1)
        )
    # Inside the query's second of slack: read, then turned away by the exact score.
    for kind in types[:3]:
        store.memories.add(f"{kind} just inside", type=kind, now=NOW - bar + timedelta(seconds=0.5))
    old = store.memories.add("old but confirmed", now=NOW - bar * 3)
    store.memories.confirm(old.id, now=NOW - timedelta(days=1))
    whole = fading(store.memories, RecallSettings(), NOW)
    assert len(whole) == 18 and old.id not in {f.memory.id for f in whole}
    for limit in (1, 4, 5, 7, 17, 18, 30):
        head = fading(store.memories, RecallSettings(), NOW, limit)
        assert [f.memory.id for f in head] == [f.memory.id for f in whole[:limit]]
        assert [f.best_score for f in head] == [f.best_score for f in whole[:limit]]
    # Each type reads at most `limit` rows.
    assert len(store.memories.unconfirmed_since({MemoryType.SEMANTIC: NOW}, 2)) == 2
