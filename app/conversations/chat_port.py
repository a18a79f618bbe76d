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
from typing import Protocol

from timothy.chat.events import TurnEvent
from timothy.chat.transcript import TranscriptMessage
from timothy.errors import TimothyError
from timothy.providers.base import CancelToken
from timothy.store import Memory

__all__ = [
    "ChatUnavailableError",
    "ConversationSummary",
    "Conversations",
    "NoConversations",
    "TranscriptMessage",
]


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    id: str
    title: str
    updated_at: datetime
    snippet: str = ""  # the matching text when listed by a search
    message_id: str | None = None  # the message the snippet is from (a search hit)


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
        self,
        conversation_id: str | None,
        text: str,
        cancel: CancelToken,
        *,
        temporary: bool = False,
        instructions: str = "",
    ) -> Iterator[TurnEvent]:
        """One turn; with no conversation id a new conversation starts (`TurnStarted` says
        so), a temporary one (kept in memory only, nothing recalled or remembered) when
        `temporary`, with the owner's `instructions` for it. Raises ChatUnavailableError
        when there is no chat model to answer."""
        ...

    def edit(
        self, conversation_id: str, message_id: str, text: str, cancel: CancelToken
    ) -> Iterator[TurnEvent]:
        """Send a new version of an owner message; the old one and what followed it stay
        as an earlier branch."""
        ...

    def regenerate(self, conversation_id: str, cancel: CancelToken) -> Iterator[TurnEvent]:
        """Answer the last owner message again (the last reply is kept as a version)."""
        ...

    def select_branch(self, conversation_id: str, message_id: str) -> None:
        """Show the branch through this version of a message."""
        ...

    def instructions_of(self, conversation_id: str) -> str: ...

    def set_instructions(self, conversation_id: str, instructions: str) -> None: ...

    def discard(self, conversation_id: str) -> None:
        """Forget a temporary conversation for good (it was closed)."""
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
        self,
        conversation_id: str | None,
        text: str,
        cancel: CancelToken,
        *,
        temporary: bool = False,
        instructions: str = "",
    ) -> Iterator[TurnEvent]:
        raise ChatUnavailableError(self.reason)

    def edit(
        self, conversation_id: str, message_id: str, text: str, cancel: CancelToken
    ) -> Iterator[TurnEvent]:
        raise ChatUnavailableError(self.reason)

    def regenerate(self, conversation_id: str, cancel: CancelToken) -> Iterator[TurnEvent]:
        raise ChatUnavailableError(self.reason)

    def select_branch(self, conversation_id: str, message_id: str) -> None:
        raise ChatUnavailableError(self.reason)

    def instructions_of(self, conversation_id: str) -> str:
        return ""

    def set_instructions(self, conversation_id: str, instructions: str) -> None:
        raise ChatUnavailableError(self.reason)

    def discard(self, conversation_id: str) -> None:
        return None

    def undo_remember(self, memory_id: str) -> Memory:
        raise ChatUnavailableError(self.reason)
