"""*Still true?*: facts whose weight in recall is fading, for the owner to re-confirm, correct
or archive. Keys: T or Enter says still true, E edits, A or Delete archives.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Signal

from app import fading
from app.memory_card_list import CardAction, MemoryCardList
from timothy.store import Memory


class FadingFacts(MemoryCardList):
    memory_reconfirmed = Signal(object)
    memory_archived = Signal(object)
    memory_superseded = Signal(object)

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
        "Facts you have not confirmed for a while lose weight in recall. They show up here "
        "so you can say whether they still hold."
    )

    def accessible_name(self) -> str:
        return "Fading facts"

    def empty_icon(self) -> str:
        return "sparkle"

    def fetch(self) -> Sequence[Memory]:
        return fading.fading_memories(self.store, self.now(), fading.FADING_LIMIT)

    def count_text(self, count: int) -> str:
        if count == 0:
            return "Everything is fresh"
        noun = "fact" if count == 1 else "facts"
        return f"{count} {noun} not confirmed for a while"

    def perform(self, name: str, memory: Memory) -> Memory | None:
        if name == "reconfirm":
            return self.store.memories.reconfirm(memory.id, now=self.now())
        if name == "archive":
            return self.store.memories.archive(memory.id, now=self.now())
        raise ValueError(name)

    def performed(self, name: str, memory: Memory) -> None:
        if name == "reconfirm":
            self.memory_reconfirmed.emit(memory)
        elif name == "archive":
            self.memory_archived.emit(memory)

    def edited(self, memory: Memory) -> None:
        self.memory_superseded.emit(memory)
