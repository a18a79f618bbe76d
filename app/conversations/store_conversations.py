"""The window's conversations: the store's sessions, and turns through the chat engine.

Listing, opening, renaming, deleting (to the bin, undoable) and restoring work on the store
alone, with or without a chat model. Temporary conversations are kept apart, in an in-memory
database that lives as long as this object, and are erased when the window closes them.
Turns go to the current `ChatEngine`, which the app swaps when the owner changes settings;
with none, sending says why in a sentence.
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator, Sequence
from dataclasses import replace

from app.conversations.chat_port import ChatUnavailableError, ConversationSummary, TranscriptMessage
from timothy.chat.engine import ChatEngine
from timothy.chat.events import TurnEvent
from timothy.chat.transcript import transcript
from timothy.errors import NotFoundError
from timothy.providers.base import CancelToken
from timothy.store import Memory
from timothy.store.engine import SessionRepo, StoreEngine
from timothy.store.records import MessageRole, Session
from timothy.store.scratch import scratch_sessions
from timothy.text import fold, words

log = logging.getLogger(__name__)

UNTITLED = "New conversation"
NO_CHAT_MODEL = "No chat model is set up yet: choose one in Settings."
SNIPPET_LOOKUPS = 40  # search results that get a matching line under their title
SNIPPET_LEAD = 24  # characters shown before the match


def summary_of(session: Session) -> ConversationSummary:
    return ConversationSummary(session.id, session.title or UNTITLED, session.updated_at)


MARKDOWN_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
MARKDOWN_MARKS = re.compile(
    r"(\*\*|__|~~|`+)"  # bold, strikethrough, code spans and fences
    r"|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])"  # *emphasis*
    r"|(?<!\w)_(?=\S)|(?<=\S)_(?!\w)"  # _emphasis_ (not snake_case)
    r"|^\s{0,3}(#{1,6}|>+)\s?",  # headings and quotes
    re.MULTILINE,
)


def plain_text(markdown: str) -> str:
    """Markdown as the owner reads it on screen: marks dropped, a link shown by its text."""
    return MARKDOWN_MARKS.sub("", MARKDOWN_LINK.sub(r"\1", markdown))


def snippet_of(text: str, terms: Sequence[str]) -> str | None:
    """The part of `text` where every search term appears, starting a little before the first,
    as it reads on screen (no Markdown marks); None when they do not all appear (matching in
    the folded form recall uses)."""
    text = plain_text(text)
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


# How long a turn started while the chat engine is still being built waits for it.
ENGINE_WAIT_SECONDS = 60.0


class StoreConversations:
    def __init__(self, store: StoreEngine, engine: ChatEngine | None = None) -> None:
        self.store = store
        self.engine = engine
        self.unavailable = NO_CHAT_MODEL  # why there is no engine, for the owner
        # Clear while an engine is being built: the window takes a message before the
        # engine is ready (start-up imports the provider's SDK on a worker), and its turn,
        # on a worker, waits here for the engine instead of being refused.
        self._settled = threading.Event()
        self._settled.set()
        self._scratch: SessionRepo | None = None
        self._scratch_lock = threading.Lock()

    @property
    def scratch(self) -> SessionRepo:
        """Where temporary conversations live (memory only), made on first use."""
        with self._scratch_lock:
            if self._scratch is None:
                self._scratch = scratch_sessions()
            return self._scratch

    def is_temporary(self, conversation_id: str) -> bool:
        if self._scratch is None:
            return False
        try:
            self._scratch.get(conversation_id)
        except NotFoundError:
            return False
        return True

    def _sessions(self, conversation_id: str) -> SessionRepo:
        return self.scratch if self.is_temporary(conversation_id) else self.store.sessions

    def _scratch_for(self, conversation_id: str) -> SessionRepo | None:
        return self.scratch if self.is_temporary(conversation_id) else None

    def set_engine(self, engine: ChatEngine | None, unavailable: str = NO_CHAT_MODEL) -> None:
        """The engine new turns go to (a running turn finishes with the one it started on)."""
        self.engine = engine
        self.unavailable = unavailable
        self._settled.set()

    def expect_engine(self) -> None:
        """An engine is being built: turns started meanwhile wait for it (`set_engine`, or
        `engine_settled` when the build failed and the current one stays)."""
        self._settled.clear()

    def engine_settled(self) -> None:
        self._settled.set()

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
            for message in self.store.sessions.branch(summary.id):
                if message.role not in (MessageRole.USER, MessageRole.ASSISTANT):
                    continue
                snippet = snippet_of(message.content, terms)
                if snippet:
                    found[position] = replace(summary, snippet=snippet, message_id=message.id)
                    break
        return found

    def messages(self, conversation_id: str) -> Sequence[TranscriptMessage]:
        return transcript(self.store, conversation_id, self._sessions(conversation_id))

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
        """The engine for a new turn (called on the turn's worker: may wait for a build)."""
        self._settled.wait(ENGINE_WAIT_SECONDS)
        engine = self.engine
        if engine is None or engine.chat is None:
            raise ChatUnavailableError(self.unavailable)
        return engine

    def send(
        self,
        conversation_id: str | None,
        text: str,
        cancel: CancelToken,
        *,
        temporary: bool = False,
        instructions: str = "",
    ) -> Iterator[TurnEvent]:
        engine = self._engine()
        if conversation_id is not None:
            temporary = self.is_temporary(conversation_id)
        return engine.send(
            text,
            session_id=conversation_id,
            cancel=cancel,
            scratch=self.scratch if temporary else None,
            instructions=instructions,
        )

    def edit(
        self, conversation_id: str, message_id: str, text: str, cancel: CancelToken
    ) -> Iterator[TurnEvent]:
        return self._engine().edit(
            conversation_id,
            message_id,
            text,
            cancel=cancel,
            scratch=self._scratch_for(conversation_id),
        )

    def regenerate(self, conversation_id: str, cancel: CancelToken) -> Iterator[TurnEvent]:
        return self._engine().regenerate(
            conversation_id, cancel=cancel, scratch=self._scratch_for(conversation_id)
        )

    def select_branch(self, conversation_id: str, message_id: str) -> None:
        self._sessions(conversation_id).select_branch(conversation_id, message_id)

    def instructions_of(self, conversation_id: str) -> str:
        return self._sessions(conversation_id).get(conversation_id).instructions

    def set_instructions(self, conversation_id: str, instructions: str) -> None:
        self._sessions(conversation_id).set_instructions(conversation_id, instructions)

    def discard(self, conversation_id: str) -> None:
        if self.is_temporary(conversation_id):
            self.scratch.erase(conversation_id)

    def undo_remember(self, memory_id: str) -> Memory:
        engine = self.engine
        if engine is not None:
            engine.undo_remember(memory_id)
            return self.store.memories.get(memory_id)
        return self.store.memories.reject(memory_id)
