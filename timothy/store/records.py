"""The plain data that crosses every boundary: a memory and its vocabulary."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any


class MemoryType(StrEnum):
    SEMANTIC = "semantic"
    PREFERENCE = "preference"
    EPISODIC = "episodic"
    PROCEDURAL = "procedural"


class MemoryStatus(StrEnum):
    STAGED = "staged"
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    REJECTED = "rejected"
    ARCHIVED = "archived"


class MemorySource(StrEnum):
    EXTRACTION = "extraction"
    REMEMBER = "remember"
    MANUAL = "manual"
    IMPORT = "import"
    CONSOLIDATION = "consolidation"


MAX_CONTENT_CHARS = 20_000
MAX_ENTITY_CHARS = 200


def utc_now() -> datetime:
    return datetime.now(UTC)


def format_time(moment: datetime) -> str:
    """The one stored form of a moment: UTC, microseconds, `Z`; sorts as text."""
    if moment.tzinfo is None:
        raise ValueError("naive datetime: every moment must carry its time zone")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime:
    """Parse an ISO 8601 moment; a moment without a zone is taken as UTC."""
    moment = datetime.fromisoformat(text.strip())
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def _time_or_none(moment: datetime | None) -> str | None:
    return None if moment is None else format_time(moment)


@dataclass(frozen=True, slots=True)
class Memory:
    id: str
    type: MemoryType
    content: str
    status: MemoryStatus
    confidence: float
    source: MemorySource
    session_id: str | None
    supersedes: str | None
    superseded_by: str | None
    created_at: datetime
    last_confirmed_at: datetime | None
    last_retrieved_at: datetime | None
    entities: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Every field as JSON-ready values (times as ISO 8601 UTC strings)."""
        return {
            "id": self.id,
            "type": self.type.value,
            "content": self.content,
            "status": self.status.value,
            "confidence": self.confidence,
            "source": self.source.value,
            "session_id": self.session_id,
            "supersedes": self.supersedes,
            "superseded_by": self.superseded_by,
            "created_at": format_time(self.created_at),
            "last_confirmed_at": _time_or_none(self.last_confirmed_at),
            "last_retrieved_at": _time_or_none(self.last_retrieved_at),
            "entities": list(self.entities),
        }


class MessageRole(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"  # a tool's result, answering one of the assistant's tool calls
    SUMMARY = "summary"  # compacted older turns, as the model sees them


class MessageStatus(StrEnum):
    COMPLETE = "complete"
    STREAMING = "streaming"
    CANCELLED = "cancelled"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class StoredToolCall:
    id: str
    name: str
    arguments: str  # JSON text as the model produced it

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    title: str
    title_source: str  # "none" | "fallback" | "auto" | "owner"
    provider: str | None
    model: str | None
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "title_source": self.title_source,
            "provider": self.provider,
            "model": self.model,
            "created_at": format_time(self.created_at),
            "updated_at": format_time(self.updated_at),
            "deleted_at": _time_or_none(self.deleted_at),
        }


@dataclass(frozen=True, slots=True)
class Message:
    id: str
    session_id: str
    role: MessageRole
    content: str
    created_at: datetime
    status: MessageStatus = MessageStatus.COMPLETE
    tool_calls: tuple[StoredToolCall, ...] = ()
    tool_call_id: str | None = None
    error: str | None = None
    provider: str | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    memory_block: str | None = None  # the exact block the model saw on this turn
    recall: dict[str, Any] | None = None  # the recall explanation for that block
    compacted_by: str | None = None  # the summary message that replaced it for the model

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "session_id": self.session_id,
            "role": self.role.value,
            "content": self.content,
            "status": self.status.value,
            "tool_calls": [call.to_json() for call in self.tool_calls],
            "tool_call_id": self.tool_call_id,
            "error": self.error,
            "provider": self.provider,
            "model": self.model,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens,
            "memory_block": self.memory_block,
            "recall": self.recall,
            "compacted_by": self.compacted_by,
            "created_at": format_time(self.created_at),
        }
