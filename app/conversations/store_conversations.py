"""The window's conversations: the store's sessions, and turns through the chat engine.

Listing, opening, renaming, deleting (to the bin, undoable) and restoring work on the store
alone, with or without a chat model. Turns go to the current `ChatEngine`, which the app
swaps when the owner changes settings; with none, sending says why in a sentence.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import replace

from app.conversations.chat_port import ChatUnavailableError, ConversationSummary, TranscriptMessage
from timothy.chat.engine import ChatEngine
from timothy.chat.events import TurnEvent
from timothy.chat.transcript import transcript
from timothy.errors import NotFoundError
from timothy.providers.base import CancelToken
from timothy.store import Memory, Store
from timothy.store.records import MessageRole, Session
from timothy.text import fold, words

log = logging.getLogger(__name__)

UNTITLED = "New conversation"
NO_CHAT_MODEL = "No chat model is set up yet: choose one in Settings."
SNIPPET_LOOKUPS = 40  # search results that get a matching line under their title
SNIPPET_LEAD = 24  # characters shown before the match


def summary_of(session: Session) -> ConversationSummary:
    return ConversationSummary(session.id, session.title or UNTITLED, session.updated_at)


def snippet_of(text: str, terms: Sequence[str]) -> str | None:
    """The part of `text` where every search term appears, starting a little before the first;
    None when they do not all appear (matching in the folded form recall uses)."""
    folded = fold(text)
    if len(folded) != len(text):
        text = folded  # offsets would not line up ("ß" folds to "ss"): show the folded form
    positions = [folded.find(term) for term in terms]
    if not terms or min(positions) < 0:
        return None
    start = max(0, min(positions) - SNIPPET_LEAD)
    if start:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < min(positions) else start
    return ("…" if start else "") + " ".join(text[start : start + 200].split())


class StoreConversations:
    def __init__(self, store: Store, engine: ChatEngine | None = None) -> None:
        self.store = store
        self.engine = engine
        self.unavailable = NO_CHAT_MODEL  # why there is no engine, for the owner

    def set_engine(self, engine: ChatEngine | None, unavailable: str = NO_CHAT_MODEL) -> None:
        """The engine new turns go to (a running turn finishes with the one it started on)."""
        self.engine = engine
        self.unavailable = unavailable

    # -- the list ----------------------------------------------------------------------

    def list(self, *, search: str | None = None, limit: int = 500) -> Sequence[ConversationSummary]:
        sessions = self.store.sessions.list(search=search, limit=limit)
        found = [summary_of(s) for s in sessions]
        terms = words(search or "")
        if not terms:
            return found
        for position, summary in enumerate(found[:SNIPPET_LOOKUPS]):
            if all(term in fold(summary.title) for term in terms):
                continue
            for message in self.store.sessions.messages(summary.id):
                if message.role not in (MessageRole.USER, MessageRole.ASSISTANT):
                    continue
                snippet = snippet_of(message.content, terms)
                if snippet:
                    found[position] = replace(summary, snippet=snippet, message_id=message.id)
                    break
        return found

    def messages(self, conversation_id: str) -> Sequence[TranscriptMessage]:
        return transcript(self.store, conversation_id)

    # -- changes -----------------------------------------------------------------------

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

    # -- turns -------------------------------------------------------------------------

    def _engine(self) -> ChatEngine:
        engine = self.engine
        if engine is None or engine.chat is None:
            raise ChatUnavailableError(self.unavailable)
        return engine

    def send(
        self, conversation_id: str | None, text: str, cancel: CancelToken
    ) -> Iterator[TurnEvent]:
        return self._engine().send(text, session_id=conversation_id, cancel=cancel)

    def regenerate(self, conversation_id: str, cancel: CancelToken) -> Iterator[TurnEvent]:
        return self._engine().regenerate(conversation_id, cancel=cancel)

    def undo_remember(self, memory_id: str) -> Memory:
        engine = self.engine
        if engine is not None:
            engine.undo_remember(memory_id)
            return self.store.memories.get(memory_id)
        return self.store.memories.reject(memory_id)
