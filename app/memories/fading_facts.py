"""*Still true?*: facts whose weight in recall is fading, for the owner to re-confirm, correct
or archive. Keys: T or Enter says still true, E edits, A or Delete archives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from PySide6.QtWidgets import QWidget

from app.jobs.workers import Workers
from app.look.time_text import span_text
from app.memories import fading
from app.memories.actions import MemoryActions
from app.memories.memory_card_list import CardAction, MemoryCardList, TitleLookup
from timothy.retrieval.fusion import days_unconfirmed
from timothy.retrieval.settings import RecallSettings
from timothy.store import Memory
from timothy.store.engine import StoreEngine
from timothy.store.records import utc_now


class FadingFacts(MemoryCardList):
    card_actions = (
        CardAction(
            "reconfirm",
            "Still true",
            "check",
            ("T", "Return", "Enter"),
            "Confirm these facts still hold",
        ),
        CardAction("edit", "Edit…", "edit", ("E",), "Correct the fact (keeps its history)"),
        CardAction(
            "archive",
            "Archive",
            "archive",
            ("A", "Delete"),
            "No longer true: keep it, but stop recalling it",
            danger=True,
        ),
    )
    empty_title = "Nothing is fading"
    empty_text = (
        "Facts you have not confirmed for a while lose weight in recall until one search alone "
        "can no longer bring them back. They show up here so you can say whether they still "
        "hold."
    )

    def __init__(
        self,
        store: StoreEngine,
        workers: Workers,
        actions: MemoryActions,
        *,
        now: Callable[[], datetime] = utc_now,
        title_of: TitleLookup | None = None,
        recall_settings: Callable[[], RecallSettings] = RecallSettings,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(store, workers, actions, now=now, title_of=title_of, parent=parent)
        self.recall_settings = recall_settings  # the owner's current half-lives and minimum

    def accessible_name(self) -> str:
        return "Fading facts"

    def empty_icon(self) -> str:
        return "sparkle"

    def fetch(self) -> Sequence[Memory]:
        return fading.fading_memories(self.store, self.recall_settings(), self.now())

    def count_text(self, count: int) -> str:
        if count == 0:
            return "Everything is fresh"
        noun = "fact" if count == 1 else "facts"
        return f"{count} {noun} not confirmed for a while"

    def note_for(self, memory: Memory) -> str:
        """Why it is here: how long it has gone unconfirmed (recall's own measure)."""
        span = span_text(days_unconfirmed(memory, self.now()))
        if memory.last_confirmed_at is None:
            return f"Never confirmed: saved {span} ago"
        return f"Not confirmed for {span}"
