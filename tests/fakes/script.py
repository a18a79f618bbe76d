"""What a fake provider server should answer next: replies, tool calls, errors, stalls, hangs.

Tests queue steps on a server (`server.reply("Hi")`, `server.fail(429)`, `server.hang()`);
each incoming chat request takes the next step. Both fakes (OpenAI and Bedrock) read the same
steps, so one script can drive either provider and the resulting events can be compared.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import threading
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

Channel = Literal["chat", "embeddings"]
# How a stream ends: "done" as the vendor ends it (OpenAI: a finish reason, usage, `[DONE]`;
# Bedrock: messageStop, metadata); "eof": the body just ends after the content, with none of
# that; "hangup": the connection drops in the middle of the body.
Ending = Literal["done", "eof", "hangup"]


@dataclass(frozen=True)
class ToolUse:
    """A tool call the fake model makes."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    @property
    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


def call(
    name: str, arguments: dict[str, Any] | str | None = None, *, id: str | None = None
) -> ToolUse:
    """Shorthand for scripting: `server.reply(tool_calls=[call("remember", {"content": ...})])`."""
    return ToolUse(name, {} if arguments is None else arguments, id)


@dataclass(frozen=True)
class Step:
    """One scripted answer. Exactly one of: a reply, an error, a hang."""

    text: str = ""
    tool_calls: tuple[ToolUse, ...] = ()
    chunks: tuple[str, ...] | None = None  # how the text is split into stream deltas
    usage: tuple[int, int, int] | None = None  # (input, output, cached) tokens
    stop_reason: str | None = None  # vendor word; default from whether tools were called
    delay: float = 0.0  # seconds before the first byte of the answer
    interval: float = 0.0  # stream: seconds between deltas (a slow model's pace)
    stall_after: int | None = None  # stream: send this many text deltas, then go silent
    hang: bool = False  # accept the request and never answer
    status: int = 200
    error_code: str | None = None
    error_message: str | None = None
    retry_after: float | str | None = None  # seconds, or an HTTP date, sent as `retry-after`
    headers: tuple[tuple[str, str], ...] = ()  # more headers on an error answer
    stream_error: str | None = None  # stream: fail mid-stream with this vendor error
    # Hostile streams (tests of what a broken or malicious server can send):
    garbage: tuple[bytes, ...] = ()  # raw bytes written as they are, after the first delta
    ending: Ending = "done"
    empty_choices: bool = False  # OpenAI: every chunk carries `"choices": []`
    raw: bytes | None = None  # a plain (not streamed) answer: this body, as it is, with 200
    endless: bool = False  # stream: send the text over and over until the client leaves

    @property
    def is_error(self) -> bool:
        return self.status >= 400

    def text_chunks(self) -> list[str]:
        if self.chunks is not None:
            return list(self.chunks)
        if not self.text:
            return []
        # split after each space, so deltas look like a model's and re-join exactly
        return re.findall(r"\S*\s*", self.text)[:-1] or [self.text]

    def token_usage(self) -> tuple[int, int, int]:
        if self.usage is not None:
            return self.usage
        output = len(self.text.split()) + 5 * len(self.tool_calls)
        return (25, max(output, 1), 0)


DEFAULT_REPLY = Step(text="Hello from the fake server.")


class Script:
    """A queue of steps per channel; an empty chat queue answers DEFAULT_REPLY."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[Channel, deque[tuple[Step, int | None]]] = {
            "chat": deque(),
            "embeddings": deque(),
        }

    def push(self, step: Step, *, on: Channel = "chat", times: int | None = 1) -> None:
        """Queue `step` for the next `times` requests (None: every request from then on)."""
        with self._lock:
            self._queues[on].append((step, times))

    def next(self, channel: Channel) -> Step | None:
        with self._lock:
            queue = self._queues[channel]
            if not queue:
                return None
            step, times = queue[0]
            if times is not None:
                if times <= 1:
                    queue.popleft()
                else:
                    queue[0] = (step, times - 1)
            return step

    def pending(self, channel: Channel = "chat") -> int:
        with self._lock:
            return len(self._queues[channel])

    def clear(self) -> None:
        with self._lock:
            for queue in self._queues.values():
                queue.clear()


class Scriptable:
    """The scripting verbs both fake servers share."""

    script: Script

    def reply(
        self,
        text: str = "",
        *,
        tool_calls: Sequence[ToolUse] = (),
        chunks: Sequence[str] | None = None,
        usage: tuple[int, int, int] | None = None,
        stop_reason: str | None = None,
        delay: float = 0.0,
        interval: float = 0.0,
        times: int | None = 1,
    ) -> None:
        """The model's next answer: text (streamed in `chunks`, or word by word, `interval`
        seconds apart), tool calls."""
        self.script.push(
            Step(
                text=text,
                tool_calls=tuple(tool_calls),
                chunks=None if chunks is None else tuple(chunks),
                usage=usage,
                stop_reason=stop_reason,
                delay=delay,
                interval=interval,
            ),
            times=times,
        )

    def stall(
        self,
        text: str,
        *,
        after: int = 1,
        chunks: Sequence[str] | None = None,
        delay: float = 0.0,
    ) -> None:
        """Stream the first `after` deltas of `text`, then go silent (until the client leaves)."""
        self.script.push(
            Step(
                text=text,
                chunks=None if chunks is None else tuple(chunks),
                stall_after=after,
                delay=delay,
            )
        )

    def hang(self, *, on: Channel = "chat", times: int | None = 1) -> None:
        """Accept the next request(s) and never answer, until the client gives up."""
        self.script.push(Step(hang=True), on=on, times=times)

    def misbehave(
        self,
        text: str = "",
        *,
        tool_calls: Sequence[ToolUse] = (),
        garbage: Sequence[bytes] = (),
        ending: Ending = "done",
        empty_choices: bool = False,
    ) -> None:
        """Stream a reply the way a broken or hostile server would: `garbage` bytes after the
        first delta (malformed SSE lines, damaged event-stream frames), an early `ending`,
        chunks with no choices."""
        self.script.push(
            Step(
                text=text,
                tool_calls=tuple(tool_calls),
                garbage=tuple(garbage),
                ending=ending,
                empty_choices=empty_choices,
            )
        )

    def answer_raw(self, body: bytes) -> None:
        """Answer the next plain (not streamed) chat request with these bytes as its 200 body:
        JSON of a shape the vendor never sends."""
        self.script.push(Step(raw=body))

    def endless(self, text: str = "word ") -> None:
        """Stream `text` as one delta over and over, never ending the reply, until the client
        leaves."""
        self.script.push(Step(text=text, endless=True))

    def fail_midstream(self, error: str, *, text: str = "", message: str = "It broke.") -> None:
        """Start streaming `text`, then fail with the vendor's mid-stream error."""
        self.script.push(Step(text=text, stream_error=error, error_message=message))


def fake_embedding(text: str, dimension: int) -> list[float]:
    """A deterministic unit vector where texts sharing words are close (bag of hashed words).

    Good enough for tests of the vector leg: "aisle seat" is nearer "aisle seats" than
    "birthday cake". Not a language model.
    """
    total = np.zeros(dimension, dtype=np.float64)
    words = re.findall(r"\w+", text.casefold()) or [""]
    for word in words:
        total += _word_vector(word[:5], dimension)  # crude stemming: "seats" ~ "seat"
    norm = float(np.linalg.norm(total)) or 1.0
    return [float(x) for x in total / norm]


@functools.lru_cache(maxsize=4096)
def _word_vector(stem: str, dimension: int) -> npt.NDArray[np.float64]:
    seed = int.from_bytes(hashlib.sha256(stem.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dimension)
