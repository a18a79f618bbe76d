"""A stand-in for the chat engine until it exists: conversations in memory, replies scripted.

It implements the app's `Conversations` protocol exactly as the engine will, so the window
can be driven end to end now (tests, screenshots). Replies stream as the provider's own
event types, paced by a delay between chunks, and honour the cancel token. A `remember`
step writes to the real store, like the engine's tool will. Replace with the engine (and
the fake provider servers) once `timothy/chat/` lands.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any

from app.chat_port import (
    ConversationStarted,
    ConversationSummary,
    FactsStaged,
    MemorySaved,
    MessageSaved,
    RecallShown,
    TitleChanged,
    TranscriptMessage,
    TurnEvent,
    TurnFailed,
)
from timothy.providers.base import CancelToken, Stop, TextDelta, ToolCall, ToolCallEvent, Usage
from timothy.store import MemorySource, Store
from timothy.store.records import utc_now


@dataclass
class Remember:
    """Script step: the model calls `remember`; the fact is saved active in the store."""

    content: str
    type: str = "semantic"
    entities: tuple[str, ...] = ()


@dataclass
class Stage:
    """Script step: extraction proposes facts after the reply; they are staged in the store."""

    facts: tuple[str, ...]


@dataclass
class Fail:
    message: str


@dataclass
class Hold:
    """Script step: wait until the test releases the stream (or it is cancelled)."""

    gate: threading.Event


@dataclass
class Reply:
    """One scripted reply: text streamed in chunks, plus optional steps."""

    text: str = ""
    chunk: int = 6
    delay: float = 0.0  # seconds between chunks (pacing a "slow provider")
    steps: tuple[Remember | Stage | Fail | Hold, ...] = ()
    recall: dict[str, Any] | None = None
    raise_error: Exception | None = None
    title: str | None = None  # the engine's generated title, sent after the reply
    pause: tuple[int, threading.Event] | None = None  # hold after this many characters


@dataclass
class Conversation:
    summary: ConversationSummary
    messages: list[TranscriptMessage] = field(default_factory=list)


class ScriptedConversations:
    def __init__(self, store: Store | None = None, replies: Sequence[Reply] = ()) -> None:
        self.store = store
        self.replies: list[Reply] = list(replies)
        self.conversations: dict[str, Conversation] = {}
        self.lock = threading.Lock()
        self.sent: list[tuple[str | None, str]] = []
        self.deleted: list[str] = []
        self.bin: dict[str, Conversation] = {}
        self._counter = 0

    # -- setting up --------------------------------------------------------------------

    def add_conversation(
        self,
        title: str,
        messages: Sequence[tuple[str, str]] = (),
        *,
        updated_at: datetime | None = None,
        recall: dict[str, Any] | None = None,
    ) -> str:
        with self.lock:
            self._counter += 1
            conversation_id = f"conv-{self._counter:04d}"
        moment = updated_at or utc_now()
        conversation = Conversation(ConversationSummary(conversation_id, title, moment))
        for position, (role, text) in enumerate(messages):
            conversation.messages.append(
                TranscriptMessage(
                    id=f"{conversation_id}-m{position}",
                    role="user" if role == "user" else "assistant",
                    content=text,
                    created_at=moment - timedelta(minutes=len(messages) - position),
                    recall=recall if role != "user" else None,
                )
            )
        self.conversations[conversation_id] = conversation
        return conversation_id

    # -- the protocol ------------------------------------------------------------------

    def list(self, *, search: str | None = None, limit: int = 500) -> Sequence[ConversationSummary]:
        found = []
        for conversation in self.conversations.values():
            summary = conversation.summary
            if search:
                needle = search.casefold()
                hit = next(
                    (m.content for m in conversation.messages if needle in m.content.casefold()),
                    None,
                )
                if needle in summary.title.casefold():
                    found.append(summary)
                elif hit is not None:
                    found.append(replace(summary, snippet=hit))
            else:
                found.append(summary)
        found.sort(key=lambda s: s.updated_at, reverse=True)
        return found[:limit]

    def messages(self, conversation_id: str) -> Sequence[TranscriptMessage]:
        return list(self.conversations[conversation_id].messages)

    def rename(self, conversation_id: str, title: str) -> None:
        conversation = self.conversations[conversation_id]
        conversation.summary = replace(conversation.summary, title=title)

    def delete(self, conversation_id: str) -> None:
        self.deleted.append(conversation_id)
        self.bin[conversation_id] = self.conversations.pop(conversation_id)

    def restore(self, conversation_id: str) -> None:
        self.deleted.remove(conversation_id)
        self.conversations[conversation_id] = self.bin.pop(conversation_id)

    def title_of(self, conversation_id: str) -> str | None:
        conversation = self.conversations.get(conversation_id)
        return conversation.summary.title if conversation else None

    def send(
        self, conversation_id: str | None, text: str, cancel: CancelToken
    ) -> Iterator[TurnEvent]:
        self.sent.append((conversation_id, text))
        now = utc_now()
        if conversation_id is None:
            title = " ".join(text.split()[:5])
            conversation_id = self.add_conversation(title, updated_at=now)
            yield ConversationStarted(self.conversations[conversation_id].summary)
        conversation = self.conversations[conversation_id]
        user = TranscriptMessage(
            f"{conversation_id}-u{len(conversation.messages)}", "user", text, now
        )
        conversation.messages.append(user)
        yield MessageSaved(user)
        yield from self._reply(conversation, cancel)

    def regenerate(self, conversation_id: str, cancel: CancelToken) -> Iterator[TurnEvent]:
        conversation = self.conversations[conversation_id]
        if conversation.messages and conversation.messages[-1].role == "assistant":
            conversation.messages.pop()
        yield from self._reply(conversation, cancel)

    # -- replies -----------------------------------------------------------------------

    def _reply(self, conversation: Conversation, cancel: CancelToken) -> Iterator[TurnEvent]:
        reply = self.replies.pop(0) if self.replies else Reply("OK.")
        if reply.raise_error is not None:
            raise reply.raise_error
        if reply.recall is not None:
            yield RecallShown(reply.recall)
        received = ""
        stopped = False
        remembered = []
        for step in reply.steps:
            if isinstance(step, Remember) and self.store is not None:
                yield ToolCallEvent(ToolCall("call-1", "remember", "{}"))
                memory = self.store.memories.add(
                    step.content,
                    type=step.type,
                    entities=step.entities,
                    source=MemorySource.REMEMBER,
                    session_id=conversation.summary.id,
                )
                remembered.append(memory)
                yield MemorySaved(memory)
            elif isinstance(step, Hold):
                while not step.gate.wait(0.01):
                    if cancel.cancelled:
                        break
        pause = threading.Event()
        for start in range(0, len(reply.text), reply.chunk):
            if cancel.cancelled:
                stopped = True
                break
            chunk = reply.text[start : start + reply.chunk]
            received += chunk
            yield TextDelta(chunk)
            if reply.pause is not None and len(received) >= reply.pause[0]:
                while not reply.pause[1].wait(0.01) and not cancel.cancelled:
                    pass
            if reply.delay:
                pause.wait(reply.delay)  # pacing only: a slow provider's gap between chunks
        failure = next((s for s in reply.steps if isinstance(s, Fail)), None)
        if failure is not None:
            yield TurnFailed(failure.message)
        yield Usage(input_tokens=100, output_tokens=len(received) // 4)
        yield Stop("cancelled" if stopped or cancel.cancelled else "end_turn")
        message = TranscriptMessage(
            f"{conversation.summary.id}-a{len(conversation.messages)}",
            "assistant",
            received,
            utc_now(),
            recall=reply.recall,
            stopped=stopped,
            remembered=tuple(remembered),
        )
        conversation.messages.append(message)
        conversation.summary = replace(conversation.summary, updated_at=utc_now())
        yield MessageSaved(message)
        for step in reply.steps:
            if isinstance(step, Stage) and self.store is not None:
                staged = tuple(
                    self.store.memories.stage(
                        fact, session_id=conversation.summary.id, source=MemorySource.EXTRACTION
                    )
                    for fact in step.facts
                )
                yield FactsStaged(staged)
        if reply.title is not None:
            self.rename(conversation.summary.id, reply.title)
            yield TitleChanged(conversation.summary.id, reply.title)
