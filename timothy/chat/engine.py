"""The chat engine: one turn, from the owner's message to the streamed reply and what follows.

The app, the CLI and the tests all drive this. The degradation contract: the owner's message
is saved first; recall, extraction, titles and compaction can each fail or time out and the
turn goes on without them. Only the chat provider itself failing fails the turn, and then
the owner's message is still kept and a retry (`regenerate`) works.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Callable, Generator, Iterator, Sequence
from concurrent.futures import Future
from concurrent.futures import wait as wait_futures
from datetime import datetime, tzinfo
from typing import Any

from timothy.chat.events import (
    BackgroundEvent,
    FactsProposed,
    MemorySaved,
    RecallFinished,
    ReplyDelta,
    SessionCompacted,
    TitleChanged,
    ToolFinished,
    ToolStarted,
    TurnEvent,
    TurnFailed,
    TurnFinished,
    TurnStarted,
    UsageReported,
)
from timothy.chat.prompt import STABLE_PREFIX, context_section, system_blocks
from timothy.chat.settings import ChatSettings
from timothy.errors import (
    ErrorKind,
    InvalidInputError,
    ProviderError,
    RecallError,
    StoreUnreachableError,
    causes,
)
from timothy.memory.dates import local_date
from timothy.memory.extraction import extract, format_exchange
from timothy.memory.remember import REMEMBER_TOOL, apply_remember
from timothy.memory.settings import MemoryPolicySettings
from timothy.providers.base import (
    MAX_TOOL_WORD_CHARS,
    CancelToken,
    ChatMessage,
    ChatProvider,
    EmbeddingProvider,
    Stop,
    SystemBlock,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    ToolSpec,
    Usage,
    is_tool_word,
    tool_name,
)
from timothy.retrieval.recall import Recaller
from timothy.retrieval.settings import RecallSettings
from timothy.retrieval.workers import DaemonPool
from timothy.store.engine import SessionRepo, StoreEngine
from timothy.store.records import (
    Message,
    MessageRole,
    MessageStatus,
    Session,
    StoredToolCall,
    utc_now,
)
from timothy.text import LONE_SURROGATE_RE
from timothy.tokens import count_tokens

log = logging.getLogger(__name__)

# One streamed reply: its text, the tool calls it made, usage, whether it was cancelled, and
# how long its text took to stream (ms from the first text to the end; None with no text).
RoundResult = tuple[str, list[ToolCall], Usage | None, bool, int | None]

TEMPORARY_NOTE = "temporary chat: memories are not used"
# Why a turn ran without memories when the store's server does not answer (the window says
# it in so many words; the conversation itself is kept on this machine meanwhile).
SERVER_AWAY_NOTE = "the memory server is out of reach: this turn ran without memories"
SERVER_REFUSED_NOTE = (
    "the memory server refused this computer's login ({why}): this turn ran without memories"
)

MAX_MESSAGE_CHARS = 200_000
# A reply is cut off past this many characters. A reply is asked for in at most
# `max_reply_tokens` (4,096: some 16,000 characters); a server that streams ten times that
# ignores the limit, or never stops, and the owner's window and every later request would
# carry it all.
MAX_REPLY_CHARS = 200_000
EMPTY_REPLY = "The provider sent an empty reply; try again."
# The model still only called tools when its rounds of them (`max_tool_rounds`) were spent.
TOOL_LOOP = "The model kept calling tools and never answered; try again."
TOO_LONG_REPLY = "The reply ran far past its length limit and was cut off; what arrived is kept."
# A tool call's arguments longer than this are refused unread and never stored or sent back:
# the longest memory is 20,000 characters, so no honest `remember` call comes near it.
MAX_TOOL_ARGUMENT_CHARS = 64_000
MAX_TOOL_NAME_CHARS = MAX_TOOL_WORD_CHARS

TITLE_PROMPT = (
    "Write a title for this conversation: at most six words, no quotes, no final full "
    "stop. Answer with the title only."
)
SUMMARY_PROMPT = (
    "Summarise the conversation below for your own later reference, so that you can carry "
    "on from it without the full text. Keep names, numbers, dates, decisions, open "
    "questions and what the owner asked for. Write plain prose, at most 300 words. Do not "
    "add anything that is not in the conversation."
)


def fallback_title(text: str) -> str:
    """The first words of the first message, until a better title arrives."""
    words = text.split()
    title = " ".join(words[:6])
    if len(title) > 60:
        title = title[:59].rstrip() + "…"
    elif len(words) > 6:
        title += "…"
    return title or "New conversation"


# How much of a title answer is read: a title is six words; the rest of a long answer is not.
MAX_TITLE_ANSWER_CHARS = 2_000
# "Title: ..." as a model may label its answer.
_TITLE_LABEL = re.compile(r"^(?:conversation\s+)?title\s*[:\-–]\s*", re.IGNORECASE)


def clean_model_title(answer: str) -> str | None:
    """The title in a model's answer, or None. Models are asked for the title alone, and
    some say "Sure! Here's a title:" first, label it "Title:", fence it, or answer JSON."""
    text = answer[:MAX_TITLE_ANSWER_CHARS].strip()
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict):
            title = data.get("title")
            if not isinstance(title, str):
                return None
            text = title
    lines = [line.strip() for line in text.splitlines()]
    lines = [line for line in lines if line and not line.startswith("```")]
    while len(lines) > 1 and lines[0].endswith(":"):  # a preamble before the title itself
        lines.pop(0)
    line = _TITLE_LABEL.sub("", lines[0]) if lines else ""
    line = line.strip().strip("\"'“”‘’*#`").strip().rstrip(".")
    if not line:
        return None
    words = line.split()
    return " ".join(words[:8])[:80]


class ChatEngine:
    """Turns, sessions and the background work that follows them."""

    def __init__(
        self,
        store: StoreEngine,
        *,
        chat: ChatProvider | None,
        embedder: EmbeddingProvider | None = None,
        recall_settings: RecallSettings | None = None,
        chat_settings: ChatSettings | None = None,
        policy: MemoryPolicySettings | None = None,
        use_memories: bool = True,
        recaller: Recaller | None = None,
        tz: tzinfo | None = None,
    ) -> None:
        """Each part gets its own section of the owner's settings; `timothy.assistant` builds
        an engine from the whole file. `use_memories` is the owner's switch for `chat`'s
        provider: "use my memories with this provider" (recall and extraction). `tz` is the
        owner's time zone (default: this machine's), for every date the owner sees or that
        is stored from their words."""
        self.store = store
        self.tz = tz
        self.chat = chat
        self.recall_settings = recall_settings or RecallSettings()
        self.chat_settings = chat_settings or ChatSettings()
        self.policy = policy or MemoryPolicySettings()
        self.use_memories = use_memories
        self._owns_recaller = recaller is None
        # A turn does not wait for the vector floor's background sentences to be embedded.
        self.recaller = recaller or Recaller(
            store, self.recall_settings, embedder, wait_for_background=False
        )
        self.background_listeners: list[Callable[[BackgroundEvent], None]] = []
        # One background thread: extraction and titles run in order. A daemon thread, so
        # quitting never waits for a slow provider call to time out.
        self._background = DaemonPool("chat-background", 1)
        # Writes a turn's recall record while the provider starts on the reply.
        self._records = DaemonPool("chat-record", 1)
        self._pending: set[Future[None]] = set()
        self._pending_lock = threading.Lock()

    # -- policy ------------------------------------------------------------------------

    def memories_allowed(self) -> bool:
        """The owner's per-provider switch: "use my memories with this provider"."""
        return self.chat is not None and self.use_memories

    # -- turns -------------------------------------------------------------------------

    def send(
        self,
        text: str,
        *,
        session_id: str | None = None,
        cancel: CancelToken | None = None,
        now: datetime | None = None,
        scratch: SessionRepo | None = None,
        instructions: str | None = None,
    ) -> Iterator[TurnEvent]:
        """One turn: save the owner's message, recall, stream the reply, run tools.

        With `scratch` the conversation is a temporary one kept there (in memory): nothing
        is recalled, extracted or remembered, and the memory file never sees it.
        `instructions` are the owner's note for a conversation this turn starts."""
        _check_text(text)
        sessions = scratch or self.store.sessions
        moment = now or utc_now()
        provider = self.chat.name if self.chat else None
        model = self.chat.model if self.chat else None
        if session_id is None:
            session = sessions.create(provider=provider, model=model, now=moment)
            if instructions and instructions.strip():
                session = sessions.set_instructions(session.id, instructions)
            new = True
        else:
            session = sessions.get(session_id)
            new = False
        user_message = sessions.add_message(session.id, MessageRole.USER, text, now=moment)
        if session.title_source == "none":
            session = sessions.set_title(session.id, fallback_title(text), source="fallback")
        if self.chat is not None and (session.provider, session.model) != (provider, model):
            sessions.set_model(session.id, provider, model)
        yield TurnStarted(session, user_message, new)
        yield from self._respond(session, user_message, cancel, moment, sessions)

    def edit(
        self,
        session_id: str,
        message_id: str,
        text: str,
        *,
        cancel: CancelToken | None = None,
        now: datetime | None = None,
        scratch: SessionRepo | None = None,
    ) -> Iterator[TurnEvent]:
        """Send an edited version of an owner message: the new version follows what the old
        one followed and is answered; the old one and the turns after it stay as an earlier
        branch the owner can switch back to."""
        _check_text(text)
        sessions = scratch or self.store.sessions
        session = sessions.get(session_id)
        original = sessions.message(message_id)
        if original.session_id != session_id or original.role is not MessageRole.USER:
            raise InvalidInputError("Only your own messages in this conversation can be edited.")
        moment = now or utc_now()
        edited = sessions.add_message(
            session_id, MessageRole.USER, text, parent_id=original.parent_id, now=moment
        )
        session = sessions.get(session_id)
        yield TurnStarted(session, edited, False)
        yield from self._respond(session, edited, cancel, moment, sessions)

    def regenerate(
        self,
        session_id: str,
        *,
        cancel: CancelToken | None = None,
        now: datetime | None = None,
        scratch: SessionRepo | None = None,
    ) -> Iterator[TurnEvent]:
        """Answer the last owner message of the active branch again (after a failure, or for
        another reply). The earlier reply is kept as another version of it."""
        sessions = scratch or self.store.sessions
        session = sessions.get(session_id)
        users = [m for m in sessions.branch(session_id) if m.role is MessageRole.USER]
        if not users:
            raise InvalidInputError("This conversation has no message to answer.")
        last = users[-1]
        sessions.set_active_leaf(session_id, last.id)
        yield TurnStarted(session, last, False)
        yield from self._respond(session, last, cancel, now or utc_now(), sessions)

    def undo_remember(self, memory_id: str) -> None:
        """Undo a `remember`: the fact is rejected (kept, inspectable, never recalled)."""
        self.store.memories.reject(memory_id)

    def _respond(
        self,
        session: Session,
        user_message: Message,
        cancel: CancelToken | None,
        now: datetime,
        sessions: SessionRepo,
    ) -> Iterator[TurnEvent]:
        chat = self.chat
        temporary = sessions is not self.store.sessions
        if chat is None:
            yield TurnFailed(
                "No chat provider is set up yet: choose one in Settings.",
                ErrorKind.NOT_CONFIGURED.value,
                None,
            )
            return
        # The conversation is read once for the turn (again only when compaction changed it).
        stored = sessions.branch(session.id, include_compacted=False)
        compacted = self._compact_if_needed(session.id, stored, now, sessions)
        if compacted is not None:
            if not temporary:
                self._notify(compacted)
            stored = sessions.branch(session.id, include_compacted=False)
        if temporary:
            recall = RecallFinished("", 0, None, TEMPORARY_NOTE)
        else:
            recall = self._recall(user_message.content, now)
        yield recall
        context = context_section(now, summary_of(stored), self.tz, session.instructions)
        tools = [] if temporary else [REMEMBER_TOOL]
        system = system_blocks(STABLE_PREFIX, context, recall.block)
        history = history_of(stored)
        final: Message | None = None
        fitted = False  # compacted once already because the model said it was too long
        round_number = 0
        while round_number <= self.chat_settings.max_tool_rounds:
            may_use_tools = round_number < self.chat_settings.max_tool_rounds
            assistant = sessions.add_message(
                session.id,
                MessageRole.ASSISTANT,
                "",
                status=MessageStatus.STREAMING,
                provider=chat.name,
                model=chat.model,
                now=now,
            )
            # The recall record is written while the provider starts on the reply: its JSON
            # and the write's sync took 15-20 ms a turn before the request went out. It is
            # stored before anything else is written on this message (or it is removed).
            record = self._records.submit(
                functools.partial(
                    sessions.update_message,
                    assistant.id,
                    memory_block=recall.block,
                    recall=recall.recall,
                )
            )
            outcome = yield from self._stream_round(
                chat, system, history, assistant, cancel, tools, sessions, record
            )
            record.result()
            if (
                isinstance(outcome, TurnFailed)
                and outcome.kind == ErrorKind.CONTEXT_TOO_LONG.value
                and round_number == 0
                and not fitted
            ):
                # The model's window is smaller than the settings' (a local model's often
                # is): summarise the older turns now and ask again, once.
                fitted = True
                refitted = self._compact_to_fit(session.id, stored, now, sessions)
                if refitted is not None:
                    if not temporary:
                        self._notify(refitted)
                    stored = sessions.branch(session.id, include_compacted=False)
                    context = context_section(
                        now, summary_of(stored), self.tz, session.instructions
                    )
                    system = system_blocks(STABLE_PREFIX, context, recall.block)
                    history = history_of(stored)
                    continue
            if isinstance(outcome, TurnFailed):
                yield outcome
                return
            text, calls, usage, cancelled, reply_ms = outcome
            tokens = _usage_fields(usage)
            tokens["reply_ms"] = reply_ms
            if cancelled:
                final = sessions.update_message(
                    assistant.id, content=text, status=MessageStatus.CANCELLED, **tokens
                )
                yield TurnFinished(final)
                return
            if not text and not calls:
                # nothing at all came back (no text, no tool call): a broken reply, in the
                # first round or after a tool's result (the owner would see a blank reply)
                yield self._failed(sessions, assistant, "", EMPTY_REPLY, ErrorKind.SERVER)
                return
            calls = _sendable(calls, history)
            if calls and may_use_tools:
                sessions.update_message(
                    assistant.id,
                    content=text,
                    status=MessageStatus.COMPLETE,
                    tool_calls=[StoredToolCall(c.id, c.name, c.arguments) for c in calls],
                    **tokens,
                )
                history.append(ChatMessage("assistant", text, tool_calls=tuple(calls)))
                for call in calls:
                    yield ToolStarted(call.id, call.name, call.arguments)
                    if temporary:  # no tool was offered; a model may call one anyway
                        result = json.dumps({"error": f"there is no tool named {call.name!r}"})
                        saved = None
                    else:
                        result, saved = self._run_tool(call, session.id, user_message, now)
                    if saved is not None:
                        yield saved
                    sessions.add_message(
                        session.id, MessageRole.TOOL, result, tool_call_id=call.id, now=now
                    )
                    history.append(ChatMessage("tool", result, tool_call_id=call.id))
                    yield ToolFinished(call.id, call.name, result)
                round_number += 1
                continue
            if calls:
                log.warning("the model kept calling tools after %d rounds; stopped", round_number)
                if not text.strip():  # only more calls: there is no answer to show
                    yield self._failed(sessions, assistant, "", TOOL_LOOP, ErrorKind.SERVER)
                    return
            final = sessions.update_message(
                assistant.id, content=text, status=MessageStatus.COMPLETE, **tokens
            )
            break
        assert final is not None
        yield TurnFinished(final)
        if not temporary:
            self._after_turn(session, user_message, final, now)

    def _stream_round(
        self,
        chat: ChatProvider,
        system: Sequence[SystemBlock],
        history: Sequence[ChatMessage],
        assistant: Message,
        cancel: CancelToken | None,
        tools: Sequence[ToolSpec],
        sessions: SessionRepo,
        record: Future[Any] | None = None,
    ) -> Generator[TurnEvent, None, RoundResult | TurnFailed]:
        """Stream one model reply; returns (text, tool calls, usage, cancelled, ms the text
        took) or TurnFailed. `record`: the write of the recall record on `assistant`, which
        a failure waits for before it writes."""
        parts: list[str] = []
        calls: list[ToolCall] = []
        usage: Usage | None = None
        stop: str | None = None
        first_text: float | None = None
        length = 0
        events = chat.stream(
            system,
            history,
            list(tools),
            cancel=cancel,
            max_tokens=self.chat_settings.max_reply_tokens,
        )
        try:
            for event in events:
                if isinstance(event, TextDelta):
                    if first_text is None:
                        first_text = time.monotonic()
                    text = event.text[: MAX_REPLY_CHARS - length]
                    length += len(text)
                    parts.append(text)
                    yield ReplyDelta(text)
                    if length >= MAX_REPLY_CHARS:
                        log.warning("a reply passed %d characters; cut off", MAX_REPLY_CHARS)
                        _close(events)  # the provider closes its connection
                        return self._failed(
                            sessions,
                            assistant,
                            "".join(parts),
                            TOO_LONG_REPLY,
                            ErrorKind.SERVER,
                            record=record,
                        )
                elif isinstance(event, ToolCallEvent):
                    calls.append(event.call)
                elif isinstance(event, Usage):
                    usage = event
                    yield UsageReported(
                        event.input_tokens, event.output_tokens, event.cached_tokens
                    )
                elif isinstance(event, Stop):
                    stop = event.reason
        except ProviderError as exc:
            return self._failed(
                sessions, assistant, "".join(parts), str(exc), exc.kind, record=record
            )
        except Exception:  # a provider bug must not lose the turn's record
            log.exception("chat stream failed unexpectedly")
            return self._failed(
                sessions,
                assistant,
                "".join(parts),
                "The reply broke off unexpectedly (details are in the log); try again.",
                ErrorKind.UNKNOWN,
                record=record,
            )
        cancelled = stop == "cancelled" or (cancel is not None and cancel.cancelled)
        took = None if first_text is None else round((time.monotonic() - first_text) * 1000)
        return "".join(parts), [] if cancelled else calls, usage, cancelled, took

    def _failed(
        self,
        sessions: SessionRepo,
        assistant: Message,
        partial: str,
        error: str,
        kind: str,
        *,
        record: Future[Any] | None = None,
    ) -> TurnFailed:
        if record is not None:
            record.result()  # the recall record first: this write reads or removes its row
        if partial:
            kept: Message | None = sessions.update_message(
                assistant.id, content=partial, status=MessageStatus.FAILED, error=error
            )
        else:
            # Nothing arrived: the reply goes, and the branch it replaced (if any) is shown.
            sessions.delete_messages_from(assistant.id)
            kept = None
        return TurnFailed(error, str(kind), kept)

    def _run_tool(
        self, call: ToolCall, session_id: str, user_message: Message, now: datetime
    ) -> tuple[str, MemorySaved | None]:
        if call.name != REMEMBER_TOOL.name:
            return json.dumps({"error": f"there is no tool named {call.name!r}"}), None
        if call.arguments == _OMITTED:
            return json.dumps({"saved": False, "error": "the arguments were too long"}), None
        outcome = apply_remember(
            self.store,
            call.arguments,
            session_id=session_id,
            ask_before_saving=self.policy.ask_before_saving,
            now=now,
            owner_message=user_message.content,
            tz=self.tz,
        )
        if outcome.memory is None:
            return outcome.result, None
        saved = MemorySaved(outcome.memory, outcome.staged, outcome.staged_because)
        return outcome.result, saved

    # -- recall ------------------------------------------------------------------------

    def _recall(self, query: str, now: datetime) -> RecallFinished:
        """The memory block for this turn, or none; never raises. Recall keeps its own time
        bound (every blocking part of it runs on its own threads against one deadline)."""
        if not self.memories_allowed():
            return RecallFinished("", 0, None, "memories are off for this provider")
        if not self.store.reachable:  # known away: not a moment spent waiting for it
            return self._server_away()
        try:
            result = self.recaller.recall(query, now=now)
        except Exception as exc:
            log.warning("recall failed; the turn goes on without memories: %s", exc)
            if not self.store.reachable or _unreachable(exc):
                return self._server_away()
            timed_out = isinstance(exc, RecallError) and exc.timed_out
            return RecallFinished("", 0, None, "recall timed out" if timed_out else "recall failed")
        empty = None if result.block else "nothing relevant was found"
        return RecallFinished(result.block, result.tokens, result.record(), empty)

    def _server_away(self) -> RecallFinished:
        """No recall: the server does not answer (it mends itself), or it turned this
        computer's login away (the owner must act: the note and the event say why)."""
        refused = self.store.refused
        if refused is None:
            return RecallFinished("", 0, None, SERVER_AWAY_NOTE)
        return RecallFinished("", 0, None, SERVER_REFUSED_NOTE.format(why=refused), refused)

    # -- after the turn ----------------------------------------------------------------

    def _after_turn(
        self, session: Session, user_message: Message, reply: Message, now: datetime
    ) -> None:
        chat = self.chat
        if chat is None:
            return
        session_id = session.id
        if session.title_source in ("none", "fallback"):
            self._submit(lambda: self._write_title(chat, session_id, user_message, reply))
        if self.memories_allowed() and self.policy.extraction_enabled:
            exchange = [
                ChatMessage("user", user_message.content),
                ChatMessage("assistant", reply.content),
            ]
            self._submit(lambda: self._extract(chat, session_id, exchange, now))

    def _extract(
        self, chat: ChatProvider, session_id: str, exchange: list[ChatMessage], now: datetime
    ) -> None:
        staged = extract(
            self.store,
            chat,
            exchange,
            session_id=session_id,
            now=now,
            timeout=self.chat_settings.extraction_timeout_seconds,
            tz=self.tz,
        )
        if staged:
            self._notify(FactsProposed(session_id, tuple(staged)))

    def _write_title(
        self, chat: ChatProvider, session_id: str, user_message: Message, reply: Message
    ) -> None:
        exchange = format_exchange(
            [ChatMessage("user", user_message.content), ChatMessage("assistant", reply.content)]
        )
        try:
            answer = chat.complete(
                [SystemBlock(TITLE_PROMPT)],
                [ChatMessage("user", exchange[:4_000])],
                max_tokens=30,
                timeout=self.chat_settings.title_timeout_seconds,
            )
        except ProviderError as exc:
            log.info("no title from the provider (%s); the first words stay", exc.kind)
            return
        title = clean_model_title(answer)
        if title is None:
            return
        if self.store.sessions.get(session_id).title_source == "owner":
            return  # the owner renamed it meanwhile
        self._notify(TitleChanged(self.store.sessions.set_title(session_id, title, source="auto")))

    # -- compaction --------------------------------------------------------------------

    def transcript_tokens(self, session_id: str) -> int:
        return _tokens(self.store.sessions.branch(session_id, include_compacted=False))

    def _compact_if_needed(
        self,
        session_id: str,
        stored: Sequence[Message],
        now: datetime,
        sessions: SessionRepo,
    ) -> SessionCompacted | None:
        limit = self.chat_settings.context_window_tokens * self.chat_settings.compact_at_share
        if _tokens(stored) <= limit:
            return None
        try:
            return self.compact(session_id, now=now, messages=stored, scratch=sessions)
        except Exception:
            log.exception("compaction failed; the conversation goes on uncompacted")
            return None

    def _compact_to_fit(
        self, session_id: str, stored: Sequence[Message], now: datetime, sessions: SessionRepo
    ) -> SessionCompacted | None:
        """Compact whatever the share says, after the model refused the conversation as too
        long for it; None when there was nothing older to summarise, or that failed."""
        try:
            return self.compact(session_id, now=now, messages=stored, scratch=sessions)
        except Exception:
            log.exception("compacting a conversation too long for the model failed")
            return None

    def compact(
        self,
        session_id: str,
        *,
        now: datetime | None = None,
        messages: Sequence[Message] | None = None,
        scratch: SessionRepo | None = None,
    ) -> SessionCompacted | None:
        """Summarise older turns of the active branch into one summary message; the newest
        stay verbatim.

        Extraction runs over the turns about to be compacted first (its own slice of the
        compaction time budget), so nothing said there is lost to memory (not in a
        temporary conversation, kept in `scratch`: nothing is extracted from those).
        """
        chat = self.chat
        if chat is None:
            return None
        sessions = scratch or self.store.sessions
        temporary = sessions is not self.store.sessions
        moment = now or utc_now()
        if messages is None:  # a turn passes what it already read
            messages = sessions.branch(session_id, include_compacted=False)
        cut = max(0, len(messages) - self.chat_settings.keep_recent_messages)
        # Never split a tool exchange: the kept part starts at an owner message.
        while cut > 0 and messages[cut].role is not MessageRole.USER:
            cut -= 1
        older = messages[:cut]
        turns = [m for m in older if m.role in (MessageRole.USER, MessageRole.ASSISTANT)]
        if not turns:
            return None
        budget = self.chat_settings.compaction_timeout_seconds
        extraction_budget = budget * self.chat_settings.compaction_extraction_share
        if not temporary and self.memories_allowed() and self.policy.extraction_enabled:
            self._extract_in_chunks(chat, session_id, turns, moment, extraction_budget)
        previous = [m.content for m in older if m.role is MessageRole.SUMMARY]
        transcript = format_exchange([ChatMessage(m.role.value, m.content) for m in turns])  # type: ignore[arg-type]
        if previous:
            transcript = "Earlier summary:\n" + previous[-1] + "\n\n" + transcript
        summary_text = chat.complete(
            [SystemBlock(SUMMARY_PROMPT)],
            [ChatMessage("user", transcript)],
            max_tokens=600,
            timeout=budget - extraction_budget,
        ).strip()
        if not summary_text:
            return None
        summary = sessions.add_message(session_id, MessageRole.SUMMARY, summary_text, now=moment)
        sessions.mark_compacted([m.id for m in older], summary.id)
        log.info("compacted %d messages of session %s", len(older), session_id)
        return SessionCompacted(session_id, summary, len(older))

    def _extract_in_chunks(
        self,
        chat: ChatProvider,
        session_id: str,
        turns: list[Message],
        now: datetime,
        budget: float,
    ) -> None:
        """Extract from the turns about to be compacted, a chunk at a time. A chunk holds one
        local day's turns, so their relative dates ("tomorrow") count from the day they were
        said, not from today: re-extracting an old turn gives the same fact it gave then."""
        deadline = time.monotonic() + budget
        chunk: list[ChatMessage] = []
        size = 0
        chunks: list[tuple[datetime, list[ChatMessage]]] = []
        said_at = turns[0].created_at if turns else now
        for message in turns:
            if chunk and local_date(message.created_at, self.tz) != local_date(said_at, self.tz):
                chunks.append((said_at, chunk))
                chunk, size = [], 0
            if not chunk:
                said_at = message.created_at
            chunk.append(ChatMessage(message.role.value, message.content))  # type: ignore[arg-type]
            size += len(message.content)
            if size > 12_000:
                chunks.append((said_at, chunk))
                chunk, size = [], 0
        if chunk:
            chunks.append((said_at, chunk))
        for said, part in chunks:
            remaining = deadline - time.monotonic()
            if remaining <= 1:
                log.warning("pre-compaction extraction ran out of its time budget")
                return
            staged = extract(
                self.store,
                chat,
                part,
                session_id=session_id,
                now=now,
                timeout=remaining,
                said_at=said,
                tz=self.tz,
            )
            if staged:
                self._notify(FactsProposed(session_id, tuple(staged)))

    # -- background --------------------------------------------------------------------

    def _submit(self, work: Callable[[], None]) -> None:
        def guarded() -> None:
            try:
                work()
            except Exception:  # background work never reaches the owner as a crash
                log.exception("background work failed")

        future = self._background.submit(guarded)
        with self._pending_lock:
            self._pending.add(future)
        future.add_done_callback(self._forget)

    def _forget(self, future: Future[None]) -> None:
        with self._pending_lock:
            self._pending.discard(future)

    def _notify(self, event: BackgroundEvent) -> None:
        for listener in list(self.background_listeners):
            try:
                listener(event)
            except Exception:
                log.exception("background listener failed")

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait for background work (extraction, titles) to finish; True if it did."""
        with self._pending_lock:
            pending = set(self._pending)
        if not pending:
            return True
        _, not_done = wait_futures(pending, timeout=timeout)
        return not not_done

    def close(self) -> None:
        with self._pending_lock:
            pending = list(self._pending)
        for future in pending:
            future.cancel()  # not started yet: dropped; running: it finishes on its own
        self._background.close()
        self._records.close()
        if self._owns_recaller:
            self.recaller.close()


# What an oversized tool call's arguments are replaced with, in the transcript and in what
# goes back to the model.
_OMITTED = '{"omitted": "the arguments were too long"}'


def _sendable(calls: Sequence[ToolCall], history: Sequence[ChatMessage]) -> list[ToolCall]:
    """A reply's tool calls as they can be kept and sent back on every later turn: a name and
    an id a vendor accepts, ids unique in the conversation, sane arguments. A server may send
    the same id twice, an empty one, or a name with quotes in it; sent back as they came, the
    vendor refuses the conversation on every later turn."""
    used = {call.id for message in history for call in message.tool_calls}
    sendable: list[ToolCall] = []
    for call in calls:
        bounded = _bounded(call)
        call_id = bounded.id
        if not is_tool_word(call_id) or call_id in used:
            call_id = f"call_{uuid.uuid4().hex[:24]}"
            log.warning("a tool call's id was unusable or used already; it was given a new one")
        used.add(call_id)
        sendable.append(ToolCall(call_id, bounded.name, bounded.arguments))
    return sendable


def _bounded(call: ToolCall) -> ToolCall:
    """A model's tool call with a sane name and arguments: a megabyte of arguments is not
    kept, nor sent back to the model on every later round."""
    name = tool_name(call.name)
    arguments = call.arguments
    if len(arguments) > MAX_TOOL_ARGUMENT_CHARS:
        log.warning("a %s call had %d characters of arguments; refused", name, len(arguments))
        arguments = _OMITTED
    return ToolCall(call.id, name, arguments)


def _close(events: Iterator[Any]) -> None:
    """End a provider's stream early: closing its generator runs its cleanup, which closes the
    connection (a plain iterator has nothing to close)."""
    close = getattr(events, "close", None)
    if close is not None:
        close()


def _check_text(text: str) -> None:
    if not text.strip():
        raise InvalidInputError("There is nothing to send.")
    if LONE_SURROGATE_RE.search(text):
        raise InvalidInputError(
            "This message holds broken characters (text that is not UTF-8) and cannot be sent."
        )
    if len(text) > MAX_MESSAGE_CHARS:
        raise InvalidInputError(
            f"A message can be at most {MAX_MESSAGE_CHARS:,} characters; this one has "
            f"{len(text):,}."
        )


def _usage_fields(usage: Usage | None) -> dict[str, Any]:
    if usage is None:
        return {}
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cached_tokens": usage.cached_tokens,
    }


def _tokens(messages: Sequence[Message]) -> int:
    return sum(count_tokens(m.content) for m in messages)


def summary_of(stored: Sequence[Message]) -> str | None:
    """The newest compaction summary among a conversation's uncompacted messages."""
    summaries = [m for m in stored if m.role is MessageRole.SUMMARY]
    return summaries[-1].content if summaries else None


def history_of(stored: Sequence[Message]) -> list[ChatMessage]:
    """The conversation (its uncompacted messages) as the model sees it: summaries left
    out, consecutive owner messages joined, tool calls kept only with their results."""
    answered = {m.tool_call_id for m in stored if m.role is MessageRole.TOOL}
    history: list[ChatMessage] = []
    for message in stored:
        if message.role is MessageRole.USER:
            if history and history[-1].role == "user":
                joined = history[-1].content + "\n\n" + message.content
                history[-1] = ChatMessage("user", joined)
            else:
                history.append(ChatMessage("user", message.content))
        elif message.role is MessageRole.ASSISTANT:
            calls = tuple(
                ToolCall(c.id, c.name, c.arguments) for c in message.tool_calls if c.id in answered
            )
            if not message.content.strip() and not calls:
                continue
            history.append(ChatMessage("assistant", message.content, tool_calls=calls))
        elif (
            message.role is MessageRole.TOOL
            and history
            and history[-1].role in ("assistant", "tool")
        ):
            history.append(ChatMessage("tool", message.content, tool_call_id=message.tool_call_id))
    while history and history[0].role != "user":
        history.pop(0)
    return history


def _unreachable(exc: BaseException) -> bool:
    """Whether a failure comes down to the store's server not answering."""
    return any(isinstance(cause, StoreUnreachableError) for cause in causes(exc))
