"""The window's conversations: the store's sessions, and turns through the chat engine.

Listing, opening, renaming, deleting (to the bin, undoable) and restoring work on the store
alone, with or without a chat model. Turns go to the current `ChatEngine`, which the app
swaps when the owner changes settings; with none, sending says why in a sentence.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

from app.conversations.chat_port import ChatUnavailableError, ConversationSummary, TranscriptMessage
from timothy.chat.engine import ChatEngine
from timothy.chat.events import TurnEvent
from timothy.errors import NotFoundError
from timothy.providers.base import CancelToken
from timothy.store import Memory, Store
from timothy.store.records import Message, MessageRole, MessageStatus, Session
from timothy.text import fold, words

log = logging.getLogger(__name__)

UNTITLED = "New conversation"
NO_CHAT_MODEL = "No chat model is set up yet: choose one in Settings."
SNIPPET_LOOKUPS = 40  # search results that get a matching line under their title
SNIPPET_LEAD = 24  # characters shown before the match


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


def transcript_of(
    message: Message, remembered: tuple[Memory, ...] = ()
) -> TranscriptMessage | None:
    """A stored message as the transcript shows it (None for tool results and tool steps)."""
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
        remembered=remembered,
    )


def remembered_id(tool_result: str) -> str | None:
    """The memory a `remember` tool result names (`{"saved": true, "id": ...}`), if any."""
    try:
        data = json.loads(tool_result)
    except ValueError:
        return None
    if isinstance(data, dict) and data.get("saved") and isinstance(data.get("id"), str):
        return str(data["id"])
    return None


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
                    found[position] = replace(summary, snippet=snippet)
                    break
        return found

    def messages(self, conversation_id: str) -> Sequence[TranscriptMessage]:
        stored = self.store.sessions.messages(conversation_id)
        # A summary is shown where the turns it stands for end, not where it was written
        # (compaction runs as a turn starts, so it is stored after that turn's question).
        last_compacted: dict[str, str] = {}
        for message in stored:
            if message.compacted_by is not None:
                last_compacted[message.compacted_by] = message.id
        summaries = {m.id: m for m in stored if m.role is MessageRole.SUMMARY}
        placed_after: dict[str, list[Message]] = {}
        for summary in summaries.values():
            anchor = last_compacted.get(summary.id)
            if anchor is not None:
                placed_after.setdefault(anchor, []).append(summary)
        remembered = self._remembered(stored)
        shown: list[TranscriptMessage] = []
        pending: list[Memory] = []
        for message in stored:
            if message.role is MessageRole.TOOL:
                memory = remembered.get(message.tool_call_id or "")
                if memory is not None:
                    pending.append(memory)
            elif message.role is MessageRole.SUMMARY:
                if message.id not in last_compacted:
                    shown.append(self._summary(message, 0))
            else:
                entry = transcript_of(message, tuple(pending))
                if entry is not None:
                    shown.append(entry)
                    if entry.role == "assistant":
                        pending = []
            for summary in placed_after.get(message.id, ()):
                count = sum(1 for m in stored if m.compacted_by == summary.id)
                shown.append(self._summary(summary, count))
        return shown

    def _summary(self, message: Message, compacted: int) -> TranscriptMessage:
        return TranscriptMessage(
            message.id, "summary", message.content, message.created_at, compacted=compacted
        )

    def _remembered(self, stored: Sequence[Message]) -> dict[str, Memory]:
        """Tool call id -> the memory its `remember` call saved (as it is now)."""
        ids: dict[str, str] = {}
        for message in stored:
            if message.role is MessageRole.TOOL and message.tool_call_id:
                memory_id = remembered_id(message.content)
                if memory_id is not None:
                    ids[message.tool_call_id] = memory_id
        if not ids:
            return {}
        memories = self.store.memories.get_many(list(ids.values()))
        return {call: memories[m] for call, m in ids.items() if m in memories}

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
