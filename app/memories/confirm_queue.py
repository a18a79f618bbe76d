"""*To confirm*: facts proposed from conversations wait here, newest first, for the owner's word.

Confirm promotes, reject refuses, edit-then-confirm supersedes the proposal with the owner's
wording (the new version is active at once). Keys: C or Enter confirms, R or Delete
rejects, E edits, Ctrl+A selects every card.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.memories.memory_card_list import CardAction, MemoryCardList
from timothy.store import Memory, MemoryStatus

QUEUE_LIMIT = 1000  # more than anyone reviews at once; the rest stays staged and loads later


class ConfirmQueue(MemoryCardList):
    card_actions = (
        CardAction("confirm", "Confirm", "check", ("C", "Return", "Enter"), "Keep these facts"),
        CardAction("edit", "Edit…", "edit", ("E",), "Correct the wording, then keep it"),
        CardAction(
            "reject",
            "Reject",
            "close",
            ("R", "Delete", "Backspace"),
            "Refuse these facts",
            danger=True,
        ),
    )
    empty_title = "Nothing to confirm"
    empty_text = (
        "Facts Timothy picks up from your conversations wait here until you confirm them. "
        "Nothing is remembered behind your back."
    )
    edit_label = "Save and confirm"

    def accessible_name(self) -> str:
        return "Facts to confirm"

    def fetch(self) -> Sequence[Memory]:
        staged = self.store.memories.list(status=MemoryStatus.STAGED, limit=QUEUE_LIMIT)
        # Newest proposal first, by when it was made (an import can add older ones later).
        return sorted(staged, key=lambda memory: memory.created_at, reverse=True)

    def count_text(self, count: int) -> str:
        if count == 0:
            return "All caught up"
        noun = "fact waits" if count == 1 else "facts wait"
        return f"{count} {noun} for you · newest first"
