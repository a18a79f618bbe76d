"""Chat through OpenAI's chat completions (or any OpenAI-compatible server): stream, tools, usage.

System blocks become one system message (texts joined by a blank line, so the stable prefix
stays byte-identical and OpenAI's automatic prefix cache keeps hitting); tool calls and
results use the `tool_calls` / role "tool" messages.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from timothy.errors import ErrorKind, ProviderError
from timothy.providers.backoff import Backoff
from timothy.providers.base import (
    CancelToken,
    ChatEvent,
    ChatMessage,
    Stop,
    SystemBlock,
    TextDelta,
    ToolCall,
    ToolCallEvent,
    ToolSpec,
    Usage,
)
from timothy.providers.broken import broke_off, cut_off, damaged
from timothy.providers.hangup import hang_up, socket_of_httpx, start_or_abandon
from timothy.providers.openai_client import (
    LazyClient,
    is_official,
    is_web_page,
    make_timeout,
    not_an_api,
    translate,
)
from timothy.providers.sdk import importing
from timothy.providers.settings import OpenAISettings

if TYPE_CHECKING:  # imported by the first request (see LazyClient)
    import openai

log = logging.getLogger(__name__)

# OpenAI's finish reasons in the words every provider's Stop uses.
STOP_REASONS = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "content_filtered",
}


def system_text(system: Sequence[SystemBlock]) -> str:
    return "\n\n".join(block.text for block in system if block.text)


def to_messages(system: Sequence[SystemBlock], messages: Sequence[ChatMessage]) -> list[Any]:
    """Our messages as chat-completions messages."""
    out: list[dict[str, Any]] = []
    text = system_text(system)
    if text:
        out.append({"role": "system", "content": text})
    for message in messages:
        if message.role == "tool":
            out.append(
                {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
            )
        elif message.role == "assistant" and message.tool_calls:
            out.append(
                {
                    "role": "assistant",
                    "content": message.content or None,
                    "tool_calls": [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": call.arguments or "{}"},
                        }
                        for call in message.tool_calls
                    ],
                }
            )
        else:
            out.append({"role": message.role, "content": message.content})
    return out


def to_tools(tools: Sequence[ToolSpec]) -> list[Any]:
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            },
        }
        for tool in tools
    ]


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


def _call_index(piece: Any, calls: dict[int, _PartialCall]) -> int:
    """Which tool call a streamed piece belongs to. OpenAI numbers them; a server that sends
    each call whole, unnumbered, gets one slot per new call id."""
    index = getattr(piece, "index", None)
    if isinstance(index, int):
        return index
    piece_id = getattr(piece, "id", None)
    for number, partial in calls.items():
        if piece_id and partial.id == piece_id:
            return number
    if not piece_id and calls:
        return max(calls)
    return max(calls, default=-1) + 1


class OpenAIChat:
    """ChatProvider for OpenAI and OpenAI-compatible servers (Ollama, LM Studio, llama.cpp)."""

    name = "openai"

    def __init__(
        self,
        settings: OpenAISettings,
        *,
        api_key: str | None = None,
        read_key: Callable[[], str | None] | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        """`read_key`: read the key with the first request instead (see `LazyClient`)."""
        self.settings = settings
        self.model = settings.chat_model
        self._client = LazyClient(settings, api_key, read_key=read_key)
        self._backoff = backoff or Backoff(total_seconds=settings.retry_seconds)

    def prepare(self) -> None:
        """Make the SDK's client now (its key read, its HTTP client and TLS context built:
        tens of milliseconds holding the GIL) on the caller's worker, not in a turn's first
        request, where it would stall the window."""
        self._client.get()

    def list_models(self) -> list[str]:
        """The server's chat models (`list_chat_models`), asked with this provider's key: the
        one its build read, so the keyring is not read again (a locked one may prompt)."""
        from timothy.providers.model_list import list_chat_models

        self._client.get()  # the key, if it was not read yet
        return list_chat_models(self.settings, self._client.key, read_keyring=False)

    @property
    def server_name(self) -> str:
        return "OpenAI" if is_official(self.settings) else "The server"

    def _fail(self, exc: Exception, timeout: float | None = None) -> ProviderError:
        return translate(
            exc,
            self.settings,
            self.model,
            self._client.key,
            what="chat",
            timeout=timeout,
            key_unread=self._client.key_unread,
        )

    def _limits(self, max_tokens: int | None) -> dict[str, Any]:
        if max_tokens is None:
            return {}
        # OpenAI's newer models take only max_completion_tokens; other servers know max_tokens
        if is_official(self.settings):
            return {"max_completion_tokens": max_tokens}
        return {"max_tokens": max_tokens}

    def stream(
        self,
        system: Sequence[SystemBlock],
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] = (),
        *,
        cancel: CancelToken | None = None,
        max_tokens: int | None = None,
    ) -> Iterator[ChatEvent]:
        extra: dict[str, Any] = self._limits(max_tokens)
        if tools:
            extra["tools"] = to_tools(tools)
        with importing():
            import openai

        def start() -> openai.Stream[Any]:
            try:
                stream: openai.Stream[Any] = self._client.get().chat.completions.create(
                    model=self.model,
                    messages=to_messages(system, messages),
                    stream=True,
                    stream_options={"include_usage": True},
                    **extra,
                )
            except openai.OpenAIError as exc:
                raise self._fail(exc) from exc
            if is_web_page(stream.response.headers):  # the SDK would find no events in it
                _discard(stream)
                raise self._fail(not_an_api(self.settings))
            return stream

        if cancel is not None and cancel.cancelled:
            yield Stop("cancelled")
            return
        stream: openai.Stream[Any] | None
        try:
            if cancel is None:
                stream = self._backoff.call(start)
            else:
                stream = start_or_abandon(
                    lambda: self._backoff.call(start, cancel=cancel), cancel, _discard
                )
        except ProviderError as exc:
            if exc.kind is not ErrorKind.CANCELLED:
                raise
            stream = None
        if stream is None:  # cancelled before the reply began
            yield Stop("cancelled")
            return
        yield from self._events(stream, cancel)

    def _events(
        self, stream: openai.Stream[Any], cancel: CancelToken | None
    ) -> Iterator[ChatEvent]:
        with importing():
            import openai

        calls: dict[int, _PartialCall] = {}
        usage: Usage | None = None
        finish: str | None = None

        def abort() -> None:
            hang_up(socket_of_httpx(stream.response))

        unregister = cancel.on_cancel(abort) if cancel is not None else None
        try:
            for chunk in stream:
                if cancel is not None and cancel.cancelled:
                    break
                if chunk.usage is not None:
                    details = chunk.usage.prompt_tokens_details
                    usage = Usage(
                        input_tokens=chunk.usage.prompt_tokens or 0,
                        output_tokens=chunk.usage.completion_tokens or 0,
                        cached_tokens=(details.cached_tokens or 0) if details else 0,
                    )
                for choice in chunk.choices[:1]:
                    delta = choice.delta
                    if delta is not None and delta.content:
                        if not isinstance(delta.content, str):  # the SDK does not check
                            raise TypeError(f"a text delta of type {type(delta.content)}")
                        yield TextDelta(delta.content)
                    for piece in (delta.tool_calls if delta is not None else None) or []:
                        partial = calls.setdefault(_call_index(piece, calls), _PartialCall())
                        partial.id = piece.id or partial.id
                        function = getattr(piece, "function", None)
                        if function is not None:
                            name = function.name or ""
                            # OpenAI sends the name once; some servers repeat it every chunk
                            if name and name != partial.name:
                                partial.name += name
                            partial.arguments += function.arguments or ""
                    if choice.finish_reason:
                        finish = choice.finish_reason
        except openai.APIConnectionError as exc:
            if cancel is None or not cancel.cancelled:
                if isinstance(exc, openai.APITimeoutError):
                    raise self._fail(exc) from exc
                raise broke_off(self.server_name, exc) from exc
        except openai.OpenAIError as exc:
            if cancel is None or not cancel.cancelled:
                raise self._fail(exc) from exc
        except Exception as exc:  # a line the SDK could not parse, a chunk of the wrong shape
            if cancel is None or not cancel.cancelled:
                raise damaged(self.server_name, exc) from exc
        finally:
            if unregister is not None:
                unregister()
            try:
                stream.close()
            except Exception:
                log.debug("closing the stream failed", exc_info=True)
        if cancel is not None and cancel.cancelled:
            # what arrived was already yielded; a half-streamed tool call is not safe to run
            yield Stop("cancelled")
            return
        if finish is None:
            # every complete reply ends with a finish reason; a stream that stops before one
            # was cut off, and its tool calls may be half-written
            raise cut_off(self.server_name)
        for index in sorted(calls):
            partial = calls[index]
            yield ToolCallEvent(
                ToolCall(
                    id=partial.id or f"call_{index}",
                    name=partial.name,
                    arguments=partial.arguments or "{}",
                )
            )
        if usage is not None:
            yield usage
        yield Stop(STOP_REASONS.get(finish or "stop", finish or "end_turn"))

    def complete(
        self,
        system: Sequence[SystemBlock],
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ) -> str:
        with importing():
            import openai

        client = self._client.get()
        if timeout is not None:
            client = client.with_options(timeout=make_timeout(timeout))
        extra = self._limits(max_tokens)

        def attempt() -> Any:
            try:
                response = client.chat.completions.create(
                    model=self.model, messages=to_messages(system, messages), **extra
                )
            except openai.OpenAIError as exc:
                raise self._fail(exc, timeout) from exc
            if isinstance(response, str):  # the SDK hands back a body that is not JSON as text
                raise self._fail(not_an_api(self.settings), timeout)
            return response

        # A damaged answer is not asked for again: it is read after the retries.
        return self._text_of(self._backoff.call(attempt))

    def _text_of(self, response: Any) -> str:
        """The text of a plain reply; a body of the wrong shape (the SDK does not check) is a
        damaged reply, never an AttributeError deep in extraction or compaction."""
        try:
            text = response.choices[0].message.content if response.choices else ""
        except (AttributeError, IndexError, KeyError, TypeError) as exc:
            raise damaged(self.server_name, exc) from exc
        if text is not None and not isinstance(text, str):
            raise damaged(self.server_name, TypeError(f"a reply's text of type {type(text)}"))
        return text or ""


def _discard(stream: Any) -> None:
    """Close a reply that arrived after its caller cancelled (closing ends the connection)."""
    try:
        stream.close()
    except Exception:
        log.debug("closing an abandoned stream failed", exc_info=True)
