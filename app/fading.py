"""Which facts are fading (for *Still true?*): the one place the app asks, so recall's own
fading-facts function replaces this in one line when it lands.

Until then: active facts not confirmed for more than one recall half-life (90 days), so
recency decay has at least halved their weight, oldest confirmation first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from timothy.store import Memory, MemoryStatus, Store

FADING_AFTER = timedelta(days=90)  # the seed's recency half-life
FADING_LIMIT = 50

FadingSource = Callable[[Store, datetime, int], Sequence[Memory]]


def _last_confirmed(memory: Memory) -> datetime:
    return memory.last_confirmed_at or memory.created_at


def interim_fading(store: Store, now: datetime, limit: int = FADING_LIMIT) -> list[Memory]:
    cutoff = now - FADING_AFTER
    active = store.memories.list(status=MemoryStatus.ACTIVE)
    fading = [memory for memory in active if _last_confirmed(memory) < cutoff]
    fading.sort(key=_last_confirmed)
    return fading[:limit]


fading_memories: FadingSource = interim_fading
