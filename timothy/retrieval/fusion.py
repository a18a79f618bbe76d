"""Fusion: reciprocal rank fusion of the legs, recency decay, type weights, the minimum bar.

A memory's score is rrf * decay * weight (+ context), where rrf sums, over the legs that
found it, leg_weight / (rrf_k + rank); with `RecallSettings.article()` (every leg weighing
1, k 60) that is the article's formula exactly. `context` is what the conversational
neighbourhood adds afterwards (timothy/retrieval/context.py), 0 unless a top hit was said
beside it; `time` the factor of a day the question names (timothy/retrieval/when.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType
from typing import Any

from timothy.retrieval.settings import RecallSettings
from timothy.store.records import RECALL_LEGS, LegVerdict, Memory, RecalledMemory

LEGS = RECALL_LEGS
_NO_FLOORS: Mapping[str, LegVerdict] = MappingProxyType({})
SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class Explanation:
    """Why a memory scored what it did: score = rrf * decay * weight * time + context."""

    ranks: Mapping[str, int]  # leg -> rank in that leg (from 1), only legs that found it
    rrf: float
    decay: float
    weight: float
    score: float
    days_unconfirmed: float
    # What the conversational neighbourhood added, and the memory said beside it that did.
    context: float = 0.0
    beside: str | None = None
    # The factor of a day the question names (1: none named, or not made then).
    time: float = 1.0


@dataclass(frozen=True, slots=True)
class Candidate:
    """A memory found by at least one leg, with its explanation."""

    memory: Memory
    explanation: Explanation
    rank: int = 0  # its place in the fused list, from 1 (0: not yet placed)
    # Each leg that found it: the floor it cleared or missed (legs that missed add no rank).
    floors: Mapping[str, LegVerdict] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def score(self) -> float:
        return self.explanation.score

    def recalled(self, tokens: int | None = None) -> RecalledMemory:
        """This candidate as the record a turn keeps (`tokens`: its cost, once packed)."""
        memory, why = self.memory, self.explanation
        return RecalledMemory(
            id=memory.id,
            type=memory.type,
            content=memory.content,
            entities=memory.entities,
            created_at=memory.created_at,
            last_confirmed_at=memory.last_confirmed_at,
            rank=self.rank,
            ranks=why.ranks,
            rrf=why.rrf,
            decay=why.decay,
            weight=why.weight,
            score=why.score,
            days_unconfirmed=why.days_unconfirmed,
            tokens=tokens,
            floors=self.floors,
            context=why.context,
            beside=why.beside,
            time=why.time,
        )

    def to_json(self) -> dict[str, Any]:
        return self.recalled().to_json()


def confirmed_at(memory: Memory) -> datetime:
    """When the owner last vouched for a memory (its creation, if never re-confirmed)."""
    return memory.last_confirmed_at or memory.created_at


def days_unconfirmed(memory: Memory, now: datetime) -> float:
    """Days since the last confirmation; never negative (a future stamp counts as now)."""
    return max(0.0, (now - confirmed_at(memory)).total_seconds() / SECONDS_PER_DAY)


def decay_factor(memory: Memory, now: datetime, settings: RecallSettings) -> float:
    """0.5 ** (days since last confirmed / half-life of the memory's type)."""
    return float(0.5 ** (days_unconfirmed(memory, now) / settings.half_life(memory.type)))


def rrf_term(rank: int, settings: RecallSettings) -> float:
    """One leg's share of a memory's score at leg weight 1: 1 / (k + rank), rank from 1."""
    return 1.0 / (settings.rrf_k + rank)


def leg_term(leg: str, rank: int, settings: RecallSettings) -> float:
    """One leg's share of a memory's score: its leg weight / (k + rank)."""
    return settings.leg_weight(leg) * rrf_term(rank, settings)


def ordered(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Best first, placed from 1. Ties: higher RRF sum, then more recently confirmed, then id."""
    best_first = sorted(
        candidates,
        key=lambda c: (
            -c.explanation.score,
            -c.explanation.rrf,
            -confirmed_at(c.memory).timestamp(),
            c.memory.id,
        ),
    )
    return [
        Candidate(c.memory, c.explanation, rank=place, floors=c.floors)
        for place, c in enumerate(best_first, start=1)
    ]


def fuse(
    legs: Mapping[str, Sequence[str]],
    memories: Mapping[str, Memory],
    settings: RecallSettings,
    now: datetime,
    *,
    decay: bool = True,
    floors: Mapping[str, Mapping[str, LegVerdict]] | None = None,
    faded: list[Candidate] | None = None,
) -> list[Candidate]:
    """Merge the legs' ranked ids into scored candidates, best first, above the minimum;
    `floors` (memory id -> leg -> verdict) is carried on each candidate. With `faded`, the
    candidates the minimum left out are added to it (unplaced, rank 0), best first.

    A memory found by several legs carries each rank; ids with no memory (deleted meanwhile)
    are skipped. Ties: higher RRF sum, then more recently confirmed, then id.
    """
    ranks: dict[str, dict[str, int]] = {}
    for leg, ids in legs.items():
        for position, memory_id in enumerate(ids, start=1):
            ranks.setdefault(memory_id, {}).setdefault(leg, position)
    # leg_term and decay_factor, worked out as they do (the same floats), with the leg
    # weights looked up once and each memory's days unconfirmed once; each candidate is made
    # once, in its place (ordered's order): fusion runs on the caller's thread after the
    # legs, on every turn.
    weights = {leg: settings.leg_weight(leg) for leg in legs}
    order = [leg for leg in LEGS if leg in legs] + sorted(leg for leg in legs if leg not in LEGS)
    k = settings.rrf_k
    min_score = settings.min_score
    scored: list[tuple[tuple[float, float, float, str], Memory, Explanation]] = []
    for memory_id, found in ranks.items():
        memory = memories.get(memory_id)
        if memory is None:
            continue
        rrf = 0.0
        for leg, rank in found.items():
            rrf += weights[leg] * (1.0 / (k + rank))
        confirmed = confirmed_at(memory)
        days = max(0.0, (now - confirmed).total_seconds() / SECONDS_PER_DAY)
        factor = float(0.5 ** (days / settings.half_life(memory.type))) if decay else 1.0
        weight = settings.weight(memory.type)
        score = rrf * factor * weight
        if score < min_score and faded is None:
            continue
        why = Explanation(
            ranks={leg: found[leg] for leg in order if leg in found},
            rrf=rrf,
            decay=factor,
            weight=weight,
            score=score,
            days_unconfirmed=days,
        )
        scored.append(((-score, -rrf, -confirmed.timestamp(), memory_id), memory, why))
    scored.sort(key=lambda entry: entry[0])
    verdicts = floors or {}
    if faded is not None:
        kept = [entry for entry in scored if entry[2].score >= min_score]
        faded.extend(
            Candidate(memory, why, rank=0, floors=_read_only(verdicts.get(memory.id)))
            for _, memory, why in scored
            if why.score < min_score
        )
        scored = kept
    return [
        Candidate(memory, why, rank=place, floors=_read_only(verdicts.get(memory.id)))
        for place, (_, memory, why) in enumerate(scored, start=1)
    ]


def _read_only(verdicts: Mapping[str, LegVerdict] | None) -> Mapping[str, LegVerdict]:
    """A candidate's verdicts as a read-only mapping: a read-only view as it is (recall
    hands over its own, which nothing changes after), anything else copied first."""
    if verdicts is None:
        return _NO_FLOORS
    if type(verdicts) is MappingProxyType:
        return verdicts
    return MappingProxyType(dict(verdicts))
