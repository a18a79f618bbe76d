"""What the window needs from conversations and the chat engine: a small interface.

The window lists, opens, renames and deletes conversations and runs turns through this
protocol; `StoreConversations` implements it over the store and the chat engine. A turn
streams as the engine's own events (`timothy.chat.events.TurnEvent`): one vocabulary from
the engine to the transcript. Every method may block (store or network), so the window only
calls them from workers.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

from timothy.chat.events import TurnEvent
from timothy.errors import TimothyError
from timothy.providers.base import CancelToken
from timothy.store import Memory


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    id: str
    title: str
    updated_at: datetime
    snippet: str = ""  # the matching text when listed by a search


@dataclass(frozen=True, slots=True)
class TranscriptMessage:
    """One saved turn as the transcript shows it (or, for "summary", where older turns were
    summarised for the model: the transcript shows a divider there, not a bubble)."""

    id: str
    role: Literal["user", "assistant", "summary"]
    content: str
    created_at: datetime
    # For assistant turns: the recall the model saw (a RecallResult.to_json() dict), or
    # None when no block was sent (no memories matched, privacy off, recall failed).
    recall: dict[str, Any] | None = None
    stopped: bool = False  # the reply was cancelled part-way; content is partial
    error: str | None = None  # the reply failed: why, in a sentence
    remembered: tuple[Memory, ...] = ()  # facts the `remember` tool saved during this turn
    compacted: int = 0  # for a summary: how many messages it stands for


class ChatUnavailableError(TimothyError):
    """There is no chat engine (or no provider) to answer."""


class Conversations(Protocol):
    """The conversations the window lists, opens and chats in."""

    def list(self, *, search: str | None = None, limit: int = 500) -> Sequence[ConversationSummary]:
        """Newest first; with `search`, those whose title or messages match."""
        ...

    def messages(self, conversation_id: str) -> Sequence[TranscriptMessage]: ...

    def rename(self, conversation_id: str, title: str) -> None: ...

    def delete(self, conversation_id: str) -> None:
        """Move to the bin; `restore` undoes it."""
        ...

    def restore(self, conversation_id: str) -> None: ...

    def title_of(self, conversation_id: str) -> str | None:
        """The title, for "proposed in <conversation>" on a memory card; None if deleted."""
        ...

    def send(
        self, conversation_id: str | None, text: str, cancel: CancelToken
    ) -> Iterator[TurnEvent]:
        """One turn; with no conversation id a new conversation starts (`TurnStarted` says
        so). Raises ChatUnavailableError when there is no chat model to answer."""
        ...

    def regenerate(self, conversation_id: str, cancel: CancelToken) -> Iterator[TurnEvent]:
        """Answer the last owner message again (the last reply is replaced)."""
        ...

    def undo_remember(self, memory_id: str) -> Memory:
        """Undo what the `remember` tool saved: the fact is rejected (kept, never recalled)."""
        ...


NO_STORE = (
    "Chatting needs the memory store, which could not be opened; conversations are kept there."
)


class NoConversations:
    """Without a store: nothing listed, and sending explains why."""

    def __init__(self, reason: str = NO_STORE) -> None:
        self.reason = reason

    def list(self, *, search: str | None = None, limit: int = 500) -> Sequence[ConversationSummary]:
        return ()

    def messages(self, conversation_id: str) -> Sequence[TranscriptMessage]:
        return ()

    def rename(self, conversation_id: str, title: str) -> None:
        raise ChatUnavailableError(self.reason)

    def delete(self, conversation_id: str) -> None:
        raise ChatUnavailableError(self.reason)

    def restore(self, conversation_id: str) -> None:
        raise ChatUnavailableError(self.reason)

    def title_of(self, conversation_id: str) -> str | None:
        return None

    def send(
        self, conversation_id: str | None, text: str, cancel: CancelToken
    ) -> Iterator[TurnEvent]:
        raise ChatUnavailableError(self.reason)

    def regenerate(self, conversation_id: str, cancel: CancelToken) -> Iterator[TurnEvent]:
        raise ChatUnavailableError(self.reason)

    def undo_remember(self, memory_id: str) -> Memory:
        raise ChatUnavailableError(self.reason)
