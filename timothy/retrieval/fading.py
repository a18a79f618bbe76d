"""Fading facts: memories that one leg alone can no longer bring back, for re-confirmation.

With the seed's numbers a memory found by a single leg (at best rank 1: 1/61) falls under the
minimum score of 0.005 after about 154 days unconfirmed. Episodic memories are meant to fade;
semantic, preference and procedural ones are facts the owner may want to keep alive, so they
are listed, oldest first, and a re-confirmation (`timothy memories confirm ID`) restores them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from timothy.retrieval.fusion import confirmed_at, days_unconfirmed, decay_factor, rrf_term
from timothy.retrieval.settings import RecallSettings
from timothy.store.engine import MemoryRepo
from timothy.store.records import Memory, MemoryType, format_time

NEVER = datetime.max.replace(tzinfo=UTC)  # a cutoff every memory is before
FADING_TYPES = (MemoryType.SEMANTIC, MemoryType.PREFERENCE, MemoryType.PROCEDURAL)


@dataclass(frozen=True, slots=True)
class FadingMemory:
    memory: Memory
    days_unconfirmed: float
    best_score: float  # what it scores now when one leg ranks it first
    faded_at: datetime  # when that score fell under the minimum

    def to_json(self) -> dict[str, Any]:
        return {
            **self.memory.to_json(),
            "days_unconfirmed": round(self.days_unconfirmed, 3),
            "best_score": self.best_score,
            "faded_at": format_time(self.faded_at),
        }


def fading_after_days(memory_type: MemoryType, settings: RecallSettings) -> float:
    """Days unconfirmed after which one leg alone cannot lift a memory over the minimum
    (0 when it never could; infinite when the minimum is 0)."""
    best = rrf_term(1, settings) * settings.weight(memory_type)
    if settings.min_score <= 0:
        return math.inf
    if best < settings.min_score:
        return 0.0
    return settings.half_life(memory_type) * math.log2(best / settings.min_score)


def best_single_leg_score(memory: Memory, now: datetime, settings: RecallSettings) -> float:
    return (
        rrf_term(1, settings) * decay_factor(memory, now, settings) * settings.weight(memory.type)
    )


def fading(
    memories: MemoryRepo, settings: RecallSettings, now: datetime, limit: int | None = None
) -> list[FadingMemory]:
    """Active semantic, preference and procedural memories whose best single-leg score is
    under the minimum, the longest unconfirmed first; with `limit`, the first `limit` of
    them, reading no more than that of each type. (Exact: within a type the score only
    falls as a memory goes unconfirmed longer, so the ones that pass the test below are the
    longest unconfirmed of those read.)"""
    limits = {t: fading_after_days(t, settings) for t in FADING_TYPES}
    # A second of slack: the exact test is the score below, computed as recall computes it.
    cutoffs = {
        t: (now - timedelta(days=days) + timedelta(seconds=1)) if days > 0 else NEVER
        for t, days in limits.items()
        if math.isfinite(days)
    }
    found: list[FadingMemory] = []
    for memory in memories.unconfirmed_since(cutoffs, limit):
        score = best_single_leg_score(memory, now, settings)
        if score < settings.min_score:
            found.append(
                FadingMemory(
                    memory=memory,
                    days_unconfirmed=days_unconfirmed(memory, now),
                    best_score=score,
                    faded_at=confirmed_at(memory) + timedelta(days=limits[memory.type]),
                )
            )
    return found if limit is None else found[:limit]
