"""The window's conversations, read from the store's sessions; turns go to the chat engine.

Listing, opening, renaming, deleting (to the bin, undoable) and restoring work on the
store today. Sending and regenerating need the chat engine (`timothy/chat/`): until it is
given, they explain that instead of answering.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from app.chat_port import ChatUnavailableError, ConversationSummary, TranscriptMessage, TurnEvent
from timothy.errors import NotFoundError
from timothy.providers.base import CancelToken
from timothy.store import Store
from timothy.store.records import Message, MessageRole, MessageStatus, Session

UNTITLED = "New conversation"
NO_ENGINE = (
    "Chatting is not available in this build yet: the chat engine is still being built. "
    "Your memories work in the pane on the right."
)

# (conversation id or None for a new one, text, cancel) -> the turn's events
TurnSource = Callable[[str | None, str, CancelToken], Iterator[TurnEvent]]
RegenerateSource = Callable[[str, CancelToken], Iterator[TurnEvent]]


def summary_of(session: Session) -> ConversationSummary:
    return ConversationSummary(session.id, session.title or UNTITLED, session.updated_at)


def recall_of(message: Message) -> dict[str, Any] | None:
    """What the model saw on this turn: the recall explanation with its exact block."""
    if message.recall is None and message.memory_block is None:
        return None
    recall = dict(message.recall or {})
    if message.memory_block is not None:
        recall["block"] = message.memory_block
    return recall


def transcript_of(message: Message) -> TranscriptMessage | None:
    """A stored message as the transcript shows it (None for tool results and summaries)."""
    if message.role is MessageRole.USER:
        return TranscriptMessage(message.id, "user", message.content, message.created_at)
    if message.role is not MessageRole.ASSISTANT:
        return None
    if not message.content and message.tool_calls and message.status is MessageStatus.COMPLETE:
        return None  # a step that only called a tool; its reply follows
    unfinished = message.status in (MessageStatus.CANCELLED, MessageStatus.STREAMING)
    return TranscriptMessage(
        message.id,
        "assistant",
        message.content,
        message.created_at,
        recall=recall_of(message),
        stopped=unfinished,
        error=message.error if message.status is MessageStatus.FAILED else None,
    )


class StoreConversations:
    def __init__(
        self,
        store: Store,
        *,
        send: TurnSource | None = None,
        regenerate: RegenerateSource | None = None,
    ) -> None:
        self.store = store
        self._send = send
        self._regenerate = regenerate

    def list(self, *, search: str | None = None, limit: int = 500) -> Sequence[ConversationSummary]:
        return [summary_of(s) for s in self.store.sessions.list(search=search, limit=limit)]

    def messages(self, conversation_id: str) -> Sequence[TranscriptMessage]:
        shown = (transcript_of(m) for m in self.store.sessions.messages(conversation_id))
        return [message for message in shown if message is not None]

    def rename(self, conversation_id: str, title: str) -> None:
        self.store.sessions.set_title(conversation_id, title, source="owner")

    def delete(self, conversation_id: str) -> None:
        self.store.sessions.delete(conversation_id)

    def restore(self, conversation_id: str) -> None:
        self.store.sessions.restore(conversation_id)

    def title_of(self, conversation_id: str) -> str | None:
        try:
            session = self.store.sessions.get(conversation_id)
        except NotFoundError:
            return None
        return None if session.deleted_at is not None else (session.title or UNTITLED)

    def send(
        self, conversation_id: str | None, text: str, cancel: CancelToken
    ) -> Iterator[TurnEvent]:
        if self._send is None:
            raise ChatUnavailableError(NO_ENGINE)
        return self._send(conversation_id, text, cancel)

    def regenerate(self, conversation_id: str, cancel: CancelToken) -> Iterator[TurnEvent]:
        if self._regenerate is None:
            raise ChatUnavailableError(NO_ENGINE)
        return self._regenerate(conversation_id, cancel)
