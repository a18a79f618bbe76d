"""What a turn tells its caller as it happens, and what background work reports later."""

from __future__ import annotations

from dataclasses import dataclass

from timothy.store.records import Memory, Message, RecallRecord, Session


@dataclass(frozen=True, slots=True)
class TurnStarted:
    session: Session
    user_message: Message  # already saved: it survives whatever fails after
    new_session: bool


@dataclass(frozen=True, slots=True)
class RecallFinished:
    block: str  # "" when there is none
    tokens: int
    recall: RecallRecord | None  # what recall found, when it ran
    note: str | None  # why there is no block: "off for this provider", "timed out", ...
    # Why the memory server turned this computer's login away, when that is why recall did
    # not run (a server that only does not answer leaves it None): the transcript says so.
    server_refused: str | None = None


@dataclass(frozen=True, slots=True)
class ReplyDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolStarted:
    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolFinished:
    call_id: str
    name: str
    result: str


@dataclass(frozen=True, slots=True)
class MemorySaved:
    """The `remember` tool saved a fact, or staged it for the owner's review; undoable."""

    memory: Memory
    staged: bool
    # Why it was staged, to follow "Saved for your review: " ("it came from text you
    # pasted", "you asked to review every fact before it is saved"); None when saved.
    staged_because: str | None = None


@dataclass(frozen=True, slots=True)
class UsageReported:
    input_tokens: int
    output_tokens: int
    cached_tokens: int


@dataclass(frozen=True, slots=True)
class TurnFinished:
    message: Message  # the final assistant message (status complete or cancelled)


@dataclass(frozen=True, slots=True)
class TurnFailed:
    error: str  # a plain sentence for the owner
    kind: str
    message: Message | None  # the partial reply kept (status failed), if anything arrived


TurnEvent = (
    TurnStarted
    | RecallFinished
    | ReplyDelta
    | ToolStarted
    | ToolFinished
    | MemorySaved
    | UsageReported
    | TurnFinished
    | TurnFailed
)


@dataclass(frozen=True, slots=True)
class FactsProposed:
    session_id: str
    memories: tuple[Memory, ...]  # staged, waiting for the owner


@dataclass(frozen=True, slots=True)
class TitleChanged:
    session: Session


@dataclass(frozen=True, slots=True)
class SessionCompacted:
    session_id: str
    summary: Message
    compacted: int  # how many messages the summary replaced


BackgroundEvent = FactsProposed | TitleChanged | SessionCompacted
