"""The words on a reply's recall button."""

from __future__ import annotations

from app.transcript.message_widget import memories_used


def test_memories_used_counts_in_words() -> None:
    assert memories_used(0) == "No memories used"
    assert memories_used(1) == "1 memory used"
    assert memories_used(4) == "4 memories used"
