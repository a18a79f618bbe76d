"""Fusion pinned to hand-computed numbers: RRF, decay, type weights, the minimum score."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from timothy.errors import InvalidInputError
from timothy.retrieval.fusion import fuse
from timothy.retrieval.settings import RecallSettings
from timothy.store.records import Memory, MemorySource, MemoryStatus, MemoryType

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
# These tests pin the article's fusion: the departures measured for issue 17 (k 10, leg
# weights, neighbourhood, time) are off in RecallSettings.article(); tests/retrieval/
# test_ranking.py pins them.
DEFAULTS = RecallSettings.article()


def memory(
    memory_id: str,
    *,
    days_old: float = 0.0,
    memory_type: MemoryType = MemoryType.SEMANTIC,
    confirmed: bool = True,
) -> Memory:
    moment = NOW - timedelta(days=days_old)
    return Memory(
        id=memory_id,
        type=memory_type,
        content=f"memory {memory_id}",
        status=MemoryStatus.ACTIVE,
        confidence=1.0,
        source=MemorySource.MANUAL,
        session_id=None,
        supersedes=None,
        superseded_by=None,
        created_at=moment,
        last_confirmed_at=moment if confirmed else None,
        last_retrieved_at=None,
    )


def by_id(*memories: Memory) -> dict[str, Memory]:
    return {m.id: m for m in memories}


def test_the_seeds_defaults() -> None:
    assert DEFAULTS.rrf_k == 60
    assert DEFAULTS.min_score == 0.005
    assert dict(DEFAULTS.leg_weights) == {"vector": 1.0, "text": 1.0, "entity": 1.0}
    assert DEFAULTS.neighbour_share == 0 and DEFAULTS.time_boost == 0
    assert DEFAULTS.per_leg_limit == 30
    assert DEFAULTS.token_budget == 1000
    assert DEFAULTS.time_bound_seconds == 10.0
    assert all(DEFAULTS.half_life(t) == 90 for t in MemoryType)
    assert all(DEFAULTS.weight(t) == 1.0 for t in MemoryType)


def test_reciprocal_rank_fusion_sums_the_ranks_of_every_leg() -> None:
    ranked = fuse(
        {"text": ["a", "b"], "entity": ["c", "a"], "vector": []},
        by_id(memory("a"), memory("b"), memory("c")),
        DEFAULTS,
        NOW,
    )
    scores = {c.memory.id: c.explanation for c in ranked}
    # a: text rank 1 and entity rank 2: 1/61 + 1/62 = 0.016393442623 + 0.016129032258
    assert scores["a"].rrf == pytest.approx(0.032522474881, rel=1e-9)
    assert dict(scores["a"].ranks) == {"text": 1, "entity": 2}
    assert scores["b"].rrf == pytest.approx(0.016129032258, rel=1e-9)  # 1/62
    assert scores["c"].rrf == pytest.approx(0.016393442623, rel=1e-9)  # 1/61
    assert [c.memory.id for c in ranked] == ["a", "c", "b"]
    assert [c.rank for c in ranked] == [1, 2, 3]


def test_two_legs_beat_one() -> None:
    ranked = fuse(
        {"text": ["solo", "both"], "vector": ["x", "y", "z", "both"]},
        by_id(memory("solo"), memory("both"), memory("x"), memory("y"), memory("z")),
        DEFAULTS,
        NOW,
    )
    # both: 1/62 + 1/64 = 0.031754032258 > solo: 1/61 = 0.016393442623
    assert ranked[0].memory.id == "both"
    assert ranked[0].explanation.rrf == pytest.approx(0.031754032258, rel=1e-9)


@pytest.mark.parametrize(
    ("days", "decay"),
    [(0, 1.0), (45, 0.707106781187), (90, 0.5), (180, 0.25), (270, 0.125)],
)
def test_recency_decay_halves_every_ninety_days(days: float, decay: float) -> None:
    no_minimum = RecallSettings.article(min_score=0)
    (candidate,) = fuse({"text": ["a"]}, by_id(memory("a", days_old=days)), no_minimum, NOW)
    assert candidate.explanation.decay == pytest.approx(decay, rel=1e-9)
    assert candidate.explanation.days_unconfirmed == pytest.approx(days)
    # 1/61 * decay
    assert candidate.explanation.score == pytest.approx(0.016393442623 * decay, rel=1e-9)


def test_decay_counts_from_last_confirmed_or_else_created() -> None:
    never = memory("n", days_old=90, confirmed=False)
    (candidate,) = fuse({"text": ["n"]}, by_id(never), DEFAULTS, NOW)
    assert candidate.explanation.decay == pytest.approx(0.5)


def test_a_confirmation_in_the_future_counts_as_now() -> None:
    (candidate,) = fuse({"text": ["a"]}, by_id(memory("a", days_old=-10)), DEFAULTS, NOW)
    assert candidate.explanation.decay == 1.0


def test_half_life_is_per_type() -> None:
    settings = RecallSettings.article(half_life_days={"episodic": 30})
    ranked = fuse(
        {"text": ["e", "s"]},
        by_id(
            memory("e", days_old=30, memory_type=MemoryType.EPISODIC),
            memory("s", days_old=30),
        ),
        settings,
        NOW,
    )
    decays = {c.memory.id: c.explanation.decay for c in ranked}
    assert decays["e"] == pytest.approx(0.5)  # 0.5 ** (30 / 30)
    assert decays["s"] == pytest.approx(0.793700525984)  # 0.5 ** (30 / 90)


def test_no_decay_scores_every_memory_as_if_new() -> None:
    (candidate,) = fuse(
        {"text": ["a"]}, by_id(memory("a", days_old=1000)), DEFAULTS, NOW, decay=False
    )
    assert candidate.explanation.decay == 1.0
    assert candidate.explanation.score == pytest.approx(0.016393442623, rel=1e-9)


def test_type_weights_apply_after_decay() -> None:
    settings = RecallSettings.article(type_weights={"preference": 2.0, "episodic": 0.5})
    ranked = fuse(
        {"text": ["p", "e", "s"]},
        by_id(
            memory("p", days_old=90, memory_type=MemoryType.PREFERENCE),
            memory("e", memory_type=MemoryType.EPISODIC),
            memory("s"),
        ),
        settings,
        NOW,
    )
    got = {c.memory.id: c.explanation for c in ranked}
    # p: 1/61 * 0.5 * 2.0 = 0.016393442623
    assert got["p"].weight == 2.0
    assert got["p"].score == pytest.approx(0.016393442623, rel=1e-9)
    # e: 1/62 * 1.0 * 0.5 = 0.008064516129
    assert got["e"].score == pytest.approx(0.008064516129, rel=1e-9)
    # s: 1/63 = 0.015873015873
    assert got["s"].score == pytest.approx(0.015873015873, rel=1e-9)
    assert [c.memory.id for c in ranked] == ["p", "s", "e"]


def test_the_minimum_score_cuts_just_below_and_keeps_just_above() -> None:
    ranked = fuse(
        {"text": ["above"], "entity": ["below"]},
        by_id(memory("above", days_old=154), memory("below", days_old=155)),
        DEFAULTS,
        NOW,
    )
    # above: 1/61 * 0.5 ** (154/90) = 0.005006963144 >= 0.005
    # below: 1/61 * 0.5 ** (155/90) = 0.004968549454 <  0.005
    assert [c.memory.id for c in ranked] == ["above"]
    assert ranked[0].explanation.score == pytest.approx(0.005006963144, rel=1e-9)


def test_the_minimum_score_applies_after_weights() -> None:
    settings = RecallSettings.article(type_weights={"semantic": 0.31, "episodic": 0.30})
    ranked = fuse(
        {"text": ["kept"], "vector": ["dropped"]},
        by_id(memory("kept"), memory("dropped", memory_type=MemoryType.EPISODIC)),
        settings,
        NOW,
        decay=False,
    )
    # kept: 0.31 / 61 = 0.005081967213; dropped: 0.30 / 61 = 0.004918032787
    assert [c.memory.id for c in ranked] == ["kept"]
    assert ranked[0].explanation.score == pytest.approx(0.005081967213, rel=1e-9)


def test_ties_are_broken_deterministically() -> None:
    memories = by_id(memory("b"), memory("a"), memory("c", days_old=1))
    first = fuse(
        {"text": ["b"], "entity": ["a"], "vector": ["c"]}, memories, DEFAULTS, NOW, decay=False
    )
    again = fuse(
        {"vector": ["c"], "entity": ["a"], "text": ["b"]}, memories, DEFAULTS, NOW, decay=False
    )
    # Same score and RRF: the more recently confirmed first, then by id.
    assert [c.memory.id for c in first] == ["a", "b", "c"]
    assert [c.memory.id for c in again] == ["a", "b", "c"]


def test_ids_without_a_memory_are_skipped() -> None:
    ranked = fuse({"text": ["gone", "here"]}, by_id(memory("here")), DEFAULTS, NOW)
    assert [c.memory.id for c in ranked] == ["here"]
    assert dict(ranked[0].explanation.ranks) == {"text": 2}


def test_explanation_json() -> None:
    (candidate,) = fuse({"entity": ["a"]}, by_id(memory("a", days_old=90)), DEFAULTS, NOW)
    data = candidate.to_json()
    assert data["ranks"] == {"vector": None, "text": None, "entity": 1}
    assert data["rrf"] == pytest.approx(0.016393442623)
    assert data["decay"] == pytest.approx(0.5)
    assert data["weight"] == 1.0
    assert data["score"] == pytest.approx(0.008196721311)
    assert data["id"] == "a" and data["rank"] == 1 and data["type"] == "semantic"


@pytest.mark.parametrize(
    "bad",
    [
        {"rrf_k": -1},
        {"min_score": -0.1},
        {"per_leg_limit": 0},
        {"token_budget": -5},
        {"time_bound_seconds": 0},
        {"half_life_days": {"semantic": 0}},
        {"half_life_days": {"gossip": 10}},
        {"type_weights": {"semantic": -1}},
        {"type_weights": {"semantic": float("nan")}},
    ],
)
def test_settings_refuse_values_out_of_range(bad: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError):
        RecallSettings(**bad)  # type: ignore[arg-type]


def test_settings_are_frozen() -> None:
    with pytest.raises(AttributeError):
        DEFAULTS.rrf_k = 10  # type: ignore[misc]
    with pytest.raises(TypeError):
        DEFAULTS.type_weights[MemoryType.SEMANTIC] = 2.0  # type: ignore[index]
