"""The two protocols every vendor implements, and the plain data that flows through them.

The chat turn, extraction and consolidation see only these types, never a vendor's SDK.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

from timothy.errors import ErrorKind, ProviderError

__all__ = [
    "CancelToken",
    "ChatEvent",
    "ChatMessage",
    "ChatProvider",
    "EmbeddingProvider",
    "ErrorKind",
    "ProviderError",
    "Stop",
    "SystemBlock",
    "TextDelta",
    "ToolCall",
    "ToolCallEvent",
    "ToolSpec",
    "Usage",
]

log = logging.getLogger(__name__)

# What a tool call's id and name may hold: every vendor accepts these (Bedrock accepts
# nothing else, and refuses the whole conversation for one id or name outside them).
MAX_TOOL_WORD_CHARS = 64
_TOOL_WORD = re.compile(rf"^[A-Za-z0-9_-]{{1,{MAX_TOOL_WORD_CHARS}}}$")
_NOT_TOOL_CHARACTER = re.compile(r"[^A-Za-z0-9_-]")


def is_tool_word(text: str) -> bool:
    """Whether `text` is a tool call id or name every vendor accepts."""
    return _TOOL_WORD.match(text) is not None


def tool_name(name: str) -> str:
    """`name` as a tool name every vendor accepts (its other characters made "_")."""
    return _NOT_TOOL_CHARACTER.sub("_", name)[:MAX_TOOL_WORD_CHARS] or "unnamed"


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
    """Tokens of one reply, as the vendor counted them (sent when the vendor reports them).

    `input_tokens` counts the whole prompt, cached part included; `cached_tokens` is the part
    read from the provider's prompt cache.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0


@dataclass(frozen=True, slots=True)
class Stop:
    reason: str  # "end_turn", "tool_use", "max_tokens", "cancelled", or the vendor's word


ChatEvent = TextDelta | ToolCallEvent | Usage | Stop
"""A stream yields text deltas, then each tool call whole (arguments complete), then Usage
when the vendor reports it, then exactly one Stop."""


class CancelToken:
    """Set from any thread to stop a stream; the provider closes its connection at once.

    A provider registers what to do on cancel (`on_cancel`) for the life of one request, so a
    stream blocked waiting for the server is cut off rather than waiting for its timeout.
    """

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []

    def cancel(self) -> None:
        with self._lock:
            if self._event.is_set():
                return
            self._event.set()
            callbacks = list(self._callbacks)
        for callback in callbacks:
            try:
                callback()
            except Exception:  # cancelling must never raise into the caller (often the GUI)
                log.debug("cancel callback failed", exc_info=True)

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def wait(self, timeout: float) -> bool:
        """Sleep up to `timeout` seconds; True (early) if cancelled meanwhile."""
        return self._event.wait(timeout)

    def on_cancel(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Run `callback` when cancelled (now, if already); returns a function to unregister."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)

                def unregister() -> None:
                    with self._lock, contextlib.suppress(ValueError):
                        self._callbacks.remove(callback)

                return unregister
        callback()
        return lambda: None


@runtime_checkable
class ChatProvider(Protocol):
    @property
    def name(self) -> str:
        """The vendor: "openai" or "bedrock"."""
        ...

    @property
    def model(self) -> str:
        """The model id requests go to."""
        ...

    def stream(
        self,
        system: Sequence[SystemBlock],
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] = (),
        *,
        cancel: CancelToken | None = None,
        max_tokens: int | None = None,
    ) -> Iterator[ChatEvent]:
        """Stream a reply as events, ending with one Stop. Raises ProviderError.

        Cancelling closes the connection; the stream then ends with Stop("cancelled") after
        whatever had arrived. Throttling before the first event is retried with backoff.
        """
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
    @property
    def model_id(self) -> str:
        """The name vectors are stored under, e.g. "openai/text-embedding-3-small"."""
        ...

    @property
    def dimension(self) -> int:
        """How many numbers each vector has (may ask the server once, for unknown models)."""
        ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Vectors of documents (bulk path, batched). Raises ProviderError."""
        ...

    def embed_query(self, text: str) -> list[float]:
        """The vector of a search query (the vendor's query path where it has one)."""
        ...
