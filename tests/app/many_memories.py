"""Filling a real store quickly: many memories in one transaction (tests and benchmarks)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from timothy.store import Memory, MemorySource, MemoryStatus, MemoryType, Store
from timothy.store.ids import new_id
from timothy.store.records import utc_now

WORDS = [
    "garden",
    "tomatoes",
    "flight",
    "aisle",
    "window",
    "coffee",
    "tea",
    "bicycle",
    "marathon",
    "violin",
    "python",
    "rust",
    "birthday",
    "anniversary",
    "dentist",
    "passport",
    "lisbon",
    "kyoto",
    "sister",
    "brother",
    "meeting",
    "budget",
]


def add_many(
    store: Store,
    count: int,
    *,
    status: MemoryStatus = MemoryStatus.ACTIVE,
    now: datetime | None = None,
    seed: int = 7,
) -> None:
    """`count` varied memories, created over the past two years, written in one transaction."""
    rng = random.Random(seed)
    moment = now or utc_now()
    kinds = list(MemoryType)
    with store.db.write() as conn:
        for number in range(count):
            created = moment - timedelta(minutes=rng.randrange(0, 2 * 365 * 24 * 60))
            words = " ".join(rng.sample(WORDS, 4))
            store.memories.insert(
                conn,
                Memory(
                    id=new_id(created),
                    type=kinds[number % len(kinds)],
                    content=f"Fact {number}: {words}",
                    status=status,
                    confidence=round(rng.uniform(0.5, 1.0), 2),
                    source=MemorySource.IMPORT,
                    session_id=None,
                    supersedes=None,
                    superseded_by=None,
                    created_at=created,
                    last_confirmed_at=created if status is MemoryStatus.ACTIVE else None,
                    last_retrieved_at=None,
                    entities=tuple(rng.sample(WORDS, 2)),
                ),
            )
