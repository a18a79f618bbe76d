"""Which facts are fading, for *Still true?*: recall's own rule (`timothy.retrieval.fading`),
so the pane lists exactly the facts recall can no longer bring back on one leg alone."""

from __future__ import annotations

from datetime import datetime

from timothy.retrieval.fading import fading
from timothy.retrieval.settings import RecallSettings
from timothy.store import Memory
from timothy.store.engine import StoreEngine

FADING_LIMIT = 50


def fading_memories(
    store: StoreEngine, settings: RecallSettings, now: datetime, limit: int = FADING_LIMIT
) -> list[Memory]:
    """The longest unconfirmed first (blocking: call from a worker)."""
    return [item.memory for item in fading(store.memories, settings, now, limit)]
