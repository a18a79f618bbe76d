"""The conversational neighbourhood: what was said just before or after a top hit.

A question is often answered beside the words it matches: "What did Caroline research?"
matches "I've been looking into something", and the answer, "adoption agencies", is the
next thing said; "When did she go?" matches the turn that tells the trip, and the day is in
the reply. So after fusion, each of the first `neighbour_seeds` candidates that is an
episodic memory of a session lends the active episodic memories within `neighbour_width`
places of it in that session (in the order they were made) a share of its score:

    context = neighbour_share * seed score / distance

A memory beside several hits takes the largest share; one already found adds it to its own
score, one no leg found enters the list on it alone (if that clears the minimum score).
Facts (semantic, preference, procedural) and memories of no session have no neighbourhood,
so a store of facts ranks exactly as without it; `neighbour_share` 0 turns it off (the
article). On LoCoMo's dev split it lifts the three legs from 62.7 / 70.9 / 81.3 / 87.6 to
about 66.6 / 77.4 / 86.2 / 90.9 recall@5/10/25/50, with the leg weights and k of
RecallSettings (bench/locomo.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from timothy.retrieval.fusion import Candidate, Explanation, days_unconfirmed, decay_factor, ordered
from timothy.retrieval.settings import RecallSettings
from timothy.store.memories import Neighbour
from timothy.store.records import Memory, MemoryType


def could_lend(memory: Memory) -> bool:
    """Whether a memory has a neighbourhood to lend: an episodic memory of a session."""
    return memory.type is MemoryType.EPISODIC and bool(memory.session_id)


def seeds(ranked: Sequence[Candidate], settings: RecallSettings) -> list[Candidate]:
    """The candidates that lend their neighbourhood a share: the first `neighbour_seeds`,
    those that are episodic memories of a session (none when the stage is off)."""
    if settings.neighbour_share <= 0 or settings.neighbour_width <= 0:
        return []
    return [
        candidate
        for candidate in ranked[: settings.neighbour_seeds]
        if could_lend(candidate.memory)
    ]


def in_context(
    ranked: Sequence[Candidate],
    around: Mapping[str, Sequence[Neighbour]],
    settings: RecallSettings,
    now: datetime,
    *,
    decay: bool = True,
) -> list[Candidate]:
    """`ranked` with the neighbourhood's shares added and placed again, best first.

    `around`: seed id -> its neighbours (MemoryRepository.around). Only the seeds of
    `seeds(ranked, settings)` lend; the rest of `around` is ignored.
    """
    lenders = seeds(ranked, settings)
    if not lenders:
        return list(ranked)
    shares: dict[str, tuple[float, str, Memory]] = {}
    for seed in lenders:
        for neighbour in around.get(seed.memory.id, ()):
            if neighbour.distance <= 0 or neighbour.distance > settings.neighbour_width:
                continue
            value = settings.neighbour_share * seed.score / neighbour.distance
            known = shares.get(neighbour.memory.id)
            if known is None or value > known[0]:
                shares[neighbour.memory.id] = (value, seed.memory.id, neighbour.memory)
    if not shares:
        return list(ranked)
    placed: list[Candidate] = []
    for candidate in ranked:
        share = shares.pop(candidate.memory.id, None)
        if share is None:
            placed.append(candidate)
            continue
        value, beside, _ = share
        why = candidate.explanation
        placed.append(
            replace(
                candidate,
                explanation=replace(
                    why, context=value, beside=beside, score=why.score + value * why.time
                ),
            )
        )
    for value, beside, memory in shares.values():
        if value < settings.min_score:
            continue
        placed.append(
            Candidate(
                memory,
                Explanation(
                    ranks={},
                    rrf=0.0,
                    decay=decay_factor(memory, now, settings) if decay else 1.0,
                    weight=settings.weight(memory.type),
                    score=value,
                    days_unconfirmed=days_unconfirmed(memory, now),
                    context=value,
                    beside=beside,
                ),
            )
        )
    return ordered(placed)
