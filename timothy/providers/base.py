"""The two protocols every vendor implements, and the plain data that flows through them.

The chat turn, extraction and consolidation see only these types, never a vendor's SDK.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol, runtime_checkable

from timothy.errors import ProviderError

__all__ = ["ProviderError"]


class ErrorKind(StrEnum):
    AUTH = "auth"  # bad or missing key / credentials
    MODEL_NOT_FOUND = "model_not_found"
    ACCESS_DENIED = "access_denied"  # e.g. no access to the model in this region
    THROTTLED = "throttled"
    TIMEOUT = "timeout"
    UNREACHABLE = "unreachable"
    BAD_REQUEST = "bad_request"
    SERVER = "server"
    CANCELLED = "cancelled"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class SystemBlock:
    """A piece of the system prompt; `cache_after` puts a prompt-cache point right after it."""

    text: str
    cache_after: bool = False


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON Schema of the arguments object


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, exactly as the model produced it


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: Literal["user", "assistant", "tool"]
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None  # for role == "tool": the call this answers


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallEvent:
    call: ToolCall


@dataclass(frozen=True, slots=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Stop:
    reason: str  # "end_turn", "tool_use", "max_tokens", "cancelled", or the vendor's word


ChatEvent = TextDelta | ToolCallEvent | Usage | Stop


@dataclass
class CancelToken:
    """Set from any thread to stop a stream; the provider closes its connection."""

    _event: threading.Event = field(default_factory=threading.Event)

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


@runtime_checkable
class ChatProvider(Protocol):
    name: str  # "openai", "bedrock", ...
    model: str

    def stream(
        self,
        system: Sequence[SystemBlock],
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] = (),
        *,
        cancel: CancelToken | None = None,
        max_tokens: int | None = None,
    ) -> Iterator[ChatEvent]:
        """Stream a reply as events, ending with one Stop. Raises ProviderError."""
        ...

    def complete(
        self,
        system: Sequence[SystemBlock],
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ) -> str:
        """One non-streaming reply's text (extraction, titles, merges). Raises ProviderError."""
        ...


@runtime_checkable
class EmbeddingProvider(Protocol):
    model_id: str  # the name vectors are stored under, e.g. "openai/text-embedding-3-small"
    dimension: int

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of documents (bulk path, batched). Raises ProviderError."""
        ...

    def embed_query(self, text: str) -> list[float]:
        """The vector of a search query (the vendor's query path where it has one)."""
        ...
