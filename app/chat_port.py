"""What the window needs from the chat engine: a small interface and the events of a turn.

The chat engine (`timothy/chat/`) cannot import the app, so the window depends on this
protocol and these plain dataclasses; one adapter maps the engine onto them. Every method
may block (store or network), so the window only calls them from workers.

A turn streams as an iterator of `TurnEvent`s: the provider's own events (`TextDelta`,
`ToolCallEvent`, `Usage`, `Stop`) plus the few the engine adds (the conversation was
created, a fact was remembered or staged, the recall the model saw, a failure).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from timothy.errors import TimothyError
from timothy.providers.base import CancelToken, Stop, TextDelta, ToolCallEvent, Usage
from timothy.store import Memory


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    id: str
    title: str
    updated_at: datetime
    snippet: str = ""  # the matching text when listed by a search


@dataclass(frozen=True, slots=True)
class TranscriptMessage:
    """One saved turn as the transcript shows it."""

    id: str
    role: Literal["user", "assistant"]
    content: str
    created_at: datetime
    # For assistant turns: the recall the model saw (a RecallResult.to_json() dict), or
    # None when no block was sent (no memories matched, privacy off, recall failed).
    recall: dict[str, Any] | None = None
    stopped: bool = False  # the reply was cancelled part-way; content is partial
    error: str | None = None  # the reply failed: why, in a sentence
    remembered: tuple[Memory, ...] = ()  # facts the `remember` tool saved during this turn


@dataclass(frozen=True, slots=True)
class ConversationStarted:
    """The engine created a conversation for the first message of a new chat."""

    conversation: ConversationSummary


@dataclass(frozen=True, slots=True)
class TitleChanged:
    conversation_id: str
    title: str


@dataclass(frozen=True, slots=True)
class MemorySaved:
    """The `remember` tool saved (or, with "ask before saving", staged) a fact."""

    memory: Memory


@dataclass(frozen=True, slots=True)
class FactsStaged:
    """Extraction after the turn proposed facts; they wait in the confirmation queue."""

    memories: tuple[Memory, ...]


@dataclass(frozen=True, slots=True)
class RecallShown:
    """What recall put in front of the model for this turn (RecallResult.to_json())."""

    recall: dict[str, Any]


@dataclass(frozen=True, slots=True)
class TurnFailed:
    """The reply failed; `message` is a sentence for the owner. What arrived is kept."""

    message: str


@dataclass(frozen=True, slots=True)
class MessageSaved:
    """The engine stored a message (the owner's at once, the reply when it ends)."""

    message: TranscriptMessage


TurnEvent = (
    TextDelta
    | ToolCallEvent
    | Usage
    | Stop
    | ConversationStarted
    | TitleChanged
    | MemorySaved
    | FactsStaged
    | RecallShown
    | TurnFailed
    | MessageSaved
)


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
        """One turn; with no conversation id a new conversation starts (ConversationStarted)."""
        ...

    def regenerate(self, conversation_id: str, cancel: CancelToken) -> Iterator[TurnEvent]:
        """Replace the last reply with a new one."""
        ...


@dataclass
class NoConversations:
    """Until the chat engine exists (and with no provider): nothing listed, sending explains."""

    reason: str = (
        "Chatting is not available in this build yet: the chat engine is still being built. "
        "Your memories work in the pane on the right."
    )
    _empty: tuple[ConversationSummary, ...] = field(default=())

    def list(self, *, search: str | None = None, limit: int = 500) -> Sequence[ConversationSummary]:
        return self._empty

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
