"""A conversation as the owner reads it: the stored messages shaped into the transcript.

Tool steps fold into the reply they led to (a `remember` call shows as the fact it saved),
and a compaction summary sits where the turns it stands for end. Only the active branch is
shown; an owner message that was edited, or a reply that was regenerated, carries its
versions (the first message of each), so the owner can switch between them. The app and any other
front end show these records; none of them re-reads the store's messages itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

from timothy.errors import NotFoundError
from timothy.memory.remember import saved_memory_id
from timothy.store.engine import SessionRepo, StoreEngine
from timothy.store.records import Memory, Message, MessageRole, MessageStatus, RecallRecord
from timothy.store.sessions import branch_of, children_of


@dataclass(frozen=True, slots=True)
class TranscriptMessage:
    """One saved turn as the transcript shows it (or, for "summary", where older turns were
    summarised for the model: the transcript shows a divider there, not a bubble)."""

    id: str
    role: Literal["user", "assistant", "summary"]
    content: str
    created_at: datetime
    # For assistant turns: what recall gave the model, or None when recall did not run
    # (memories off for the provider, recall failed or timed out).
    recall: RecallRecord | None = None
    stopped: bool = False  # the reply was cancelled part-way; content is partial
    error: str | None = None  # the reply failed: why, in a sentence
    remembered: tuple[Memory, ...] = ()  # facts the `remember` tool saved during this turn
    compacted: int = 0  # for a summary: how many messages it stands for
    # The versions of this message (an edited owner message, a regenerated reply): the id
    # that starts each, oldest first; this one is versions[version]. One version: ().
    versions: tuple[str, ...] = ()
    version: int = 0
    # For replies: the model that wrote it, and what the provider reported of its tokens.
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    tokens_per_second: float | None = None


def entry_of(message: Message, remembered: tuple[Memory, ...] = ()) -> TranscriptMessage | None:
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
        recall=message.recall,
        stopped=unfinished,
        error=message.error if message.status is MessageStatus.FAILED else None,
        remembered=remembered,
        model=message.model,
        input_tokens=message.input_tokens,
        output_tokens=message.output_tokens,
        tokens_per_second=message.tokens_per_second,
    )


def _summary(message: Message, compacted: int) -> TranscriptMessage:
    return TranscriptMessage(
        message.id, "summary", message.content, message.created_at, compacted=compacted
    )


def _remembered(store: StoreEngine, stored: Sequence[Message]) -> dict[str, Memory]:
    """Tool call id -> the memory its `remember` call saved (as it is now)."""
    ids: dict[str, str] = {}
    for message in stored:
        if message.role is MessageRole.TOOL and message.tool_call_id:
            memory_id = saved_memory_id(message.content)
            if memory_id is not None:
                ids[message.tool_call_id] = memory_id
    if not ids:
        return {}
    memories = store.memories.get_many(list(ids.values()))
    return {call: memories[m] for call, m in ids.items() if m in memories}


def _versions(
    message: Message, children: dict[str | None, list[Message]]
) -> tuple[tuple[str, ...], int]:
    """The versions `message` is one of: its parent's children of the same role."""
    siblings = [m.id for m in children.get(message.parent_id, []) if m.role is message.role]
    if len(siblings) < 2:
        return (), 0
    return tuple(siblings), siblings.index(message.id)


def transcript(
    store: StoreEngine, session_id: str, sessions: SessionRepo | None = None
) -> list[TranscriptMessage]:
    """The active branch of conversation `session_id` as the owner reads it, oldest first
    (`sessions`: where it is kept, when not in the store: a temporary conversation)."""
    repository = sessions or store.sessions
    # The active branch's end first, then the messages: a turn that writes in between only
    # adds messages after that end, so the branch is whole. (The other order could read an
    # end newer than the messages read, which no message leads to: an empty transcript.)
    try:
        leaf = repository.get(session_id).active_leaf
    except NotFoundError:
        return []  # a conversation that is gone (a memory's source, purged)
    everything = repository.messages(session_id)
    if not everything:
        return []
    stored = branch_of(everything, leaf)
    children = children_of(everything)
    # Each turn's reply versions hang on the first message after the owner's: that one
    # carries them (shown on the first reply entry of the turn).
    reply_versions: tuple[tuple[str, ...], int] = ((), 0)
    versions_shown = True
    asked: str | None = None  # the owner message of the turn being read
    # A summary is shown where the turns it stands for end, not where it was written
    # (compaction runs as a turn starts, so it is stored after that turn's question).
    last_compacted: dict[str, str] = {}
    counts: dict[str, int] = {}
    for message in stored:
        if message.compacted_by is not None:
            last_compacted[message.compacted_by] = message.id
            counts[message.compacted_by] = counts.get(message.compacted_by, 0) + 1
    placed_after: dict[str, list[Message]] = {}
    for summary in (m for m in stored if m.role is MessageRole.SUMMARY):
        anchor = last_compacted.get(summary.id)
        if anchor is not None:
            placed_after.setdefault(anchor, []).append(summary)
    remembered = _remembered(store, stored)
    shown: list[TranscriptMessage] = []
    pending: list[Memory] = []
    for message in stored:
        if message.role is MessageRole.TOOL:
            memory = remembered.get(message.tool_call_id or "")
            if memory is not None:
                pending.append(memory)
        elif message.role is MessageRole.SUMMARY:
            if message.id not in last_compacted:
                shown.append(_summary(message, 0))
        else:
            if message.role is MessageRole.USER:
                versions_shown = False
                reply_versions = ((), 0)
                asked = message.id
            elif message.role is MessageRole.ASSISTANT and message.parent_id == asked:
                reply_versions = _versions(message, children)
            entry = entry_of(message, tuple(pending))
            if entry is not None:
                if entry.role == "user":
                    versions, version = _versions(message, children)
                    entry = replace(entry, versions=versions, version=version)
                elif not versions_shown:
                    entry = replace(entry, versions=reply_versions[0], version=reply_versions[1])
                    versions_shown = True
                shown.append(entry)
                if entry.role == "assistant":
                    pending = []
        for summary in placed_after.get(message.id, ()):
            shown.append(_summary(summary, counts.get(summary.id, 0)))
    return shown
