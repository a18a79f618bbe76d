"""Chat through Amazon Bedrock's Converse / ConverseStream (Amazon Nova and other models).

Tools travel as `toolConfig`, calls as `toolUse` blocks, results as `toolResult` blocks in a
user message. A `cachePoint` goes right after the stable system prefix (the block marked
`cache_after`), but only on models that accept one: see `supports_cache_point`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections import defaultdict, deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import botocore.eventstream
import botocore.exceptions
import urllib3.exceptions

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
    is_tool_word,
    tool_name,
)
from timothy.providers.bedrock_client import make_client, region_of, translate
from timothy.providers.broken import broke_off, cut_off, damaged
from timothy.providers.hangup import hang_up, socket_of_urllib3, start_or_abandon
from timothy.providers.settings import BedrockSettings

log = logging.getLogger(__name__)

# Models whose Converse API accepts cachePoint blocks (Bedrock prompt caching). Amazon Nova
# (Micro, Lite, Pro, Premier, Nova 2) and the Claude models AWS lists for prompt caching;
# any other model would reject the request, so it gets no cache point.
CACHE_POINT_MODEL_PREFIXES = (
    "amazon.nova-",
    "anthropic.claude-3-5-haiku",
    "anthropic.claude-3-7-sonnet",
    "anthropic.claude-sonnet-4",
    "anthropic.claude-opus-4",
    "anthropic.claude-haiku-4",
)
# Cross-region inference profile ids put a geography before the model id: "us.amazon.nova-…".
_GEOGRAPHIES = ("us.", "eu.", "apac.", "jp.", "au.", "ca.", "us-gov.", "global.")


def base_model(model_id: str) -> str:
    """The foundation model id inside an inference-profile id or a model ARN."""
    model = model_id.rsplit("/", 1)[-1] if model_id.startswith("arn:") else model_id
    for geography in _GEOGRAPHIES:
        if model.startswith(geography):
            return model[len(geography) :]
    return model


def supports_cache_point(model_id: str) -> bool:
    return base_model(model_id).startswith(CACHE_POINT_MODEL_PREFIXES)


def to_system(system: Sequence[SystemBlock], model: str) -> list[dict[str, Any]]:
    cache = supports_cache_point(model)
    out: list[dict[str, Any]] = []
    for block in system:
        if block.text.strip():
            out.append({"text": block.text})
        if block.cache_after and cache and out and "text" in out[-1]:
            out.append({"cachePoint": {"type": "default"}})
    return out


def _tool_input(call: ToolCall) -> dict[str, Any]:
    try:
        value = json.loads(call.arguments or "{}")
    except ValueError:
        log.warning("tool call %s had arguments that are not JSON; sending {}", call.name)
        return {}
    return value if isinstance(value, dict) else {"value": value}


class _SentIds:
    """The tool call ids of one request as Converse takes them. A conversation saved before
    the engine made ids sendable (or by another app's version) may hold an id Converse
    refuses (quotes, spaces, over 64 characters) or one id used twice, and Bedrock refuses
    the whole request for it, on every later turn. Such an id is sent as a new one, derived
    from the old and its place (the same on every turn, so the prompt cache still matches);
    each tool result is sent with the id its call was sent with. The stored conversation is
    not changed."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        # A stored id -> the ids its calls were sent with, not yet answered by a result.
        self._unanswered: defaultdict[str, deque[str]] = defaultdict(deque)
        self._last: dict[str, str] = {}  # a stored id -> the id its latest call was sent with
        self._calls = 0

    def of_call(self, stored: str) -> str:
        self._calls += 1
        sent = stored
        tries = 0
        while not is_tool_word(sent) or sent in self._used:
            tries += 1
            seed = f"{self._calls}:{tries}:{stored}".encode()
            sent = f"tooluse_{hashlib.sha256(seed).hexdigest()[:24]}"
        if sent != stored:
            log.debug("a stored tool call id Converse refuses was sent as a new one")
        self._used.add(sent)
        self._unanswered[stored].append(sent)
        self._last[stored] = sent
        return sent

    def of_result(self, stored: str) -> str:
        unanswered = self._unanswered.get(stored)
        if unanswered:
            return unanswered.popleft()
        return self._last.get(stored, stored)


def to_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """Our messages as Converse messages: roles alternate (neighbours of one role merge), tool
    results ride in a user message, no text block is blank, and tool ids and names are ones
    Converse takes (Bedrock refuses the whole request otherwise: see `_SentIds`)."""
    out: list[dict[str, Any]] = []
    ids = _SentIds()
    for message in messages:
        blocks: list[dict[str, Any]] = []
        if message.role == "tool":
            role = "user"
            blocks.append(
                {
                    "toolResult": {
                        "toolUseId": ids.of_result(message.tool_call_id or ""),
                        "content": [{"text": message.content or "(no output)"}],
                    }
                }
            )
        elif message.role == "assistant":
            role = "assistant"
            if message.content.strip():
                blocks.append({"text": message.content})
            for call in message.tool_calls:
                blocks.append(
                    {
                        "toolUse": {
                            "toolUseId": ids.of_call(call.id),
                            "name": tool_name(call.name),
                            "input": _tool_input(call),
                        }
                    }
                )
        else:
            role = "user"
            blocks.append({"text": message.content if message.content.strip() else "…"})
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    if out and out[0]["role"] != "user":  # Converse insists a conversation opens with the user
        out.insert(0, {"role": "user", "content": [{"text": "…"}]})
    return out


def to_tool_config(tools: Sequence[ToolSpec]) -> dict[str, Any]:
    return {
        "tools": [
            {
                "toolSpec": {
                    "name": tool.name,
                    "description": tool.description or tool.name,
                    "inputSchema": {"json": tool.parameters},
                }
            }
            for tool in tools
        ]
    }


def to_usage(usage: dict[str, Any]) -> Usage:
    cached = int(usage.get("cacheReadInputTokens") or 0)
    written = int(usage.get("cacheWriteInputTokens") or 0)
    return Usage(
        input_tokens=int(usage.get("inputTokens") or 0) + cached + written,
        output_tokens=int(usage.get("outputTokens") or 0),
        cached_tokens=cached,
    )


@dataclass
class _PartialCall:
    id: str
    name: str
    arguments: str = ""


class BedrockChat:
    """ChatProvider for Amazon Bedrock (default: Amazon Nova Lite via its US inference profile)."""

    name = "bedrock"

    def __init__(self, settings: BedrockSettings, *, backoff: Backoff | None = None) -> None:
        self.settings = settings
        self.model = settings.chat_model
        self._client = make_client(settings)
        self.region = region_of(self._client)
        self._backoff = backoff or Backoff(total_seconds=settings.retry_seconds)
        self._clients_by_timeout: dict[float, Any] = {}
        self._lock = threading.Lock()

    def _fail(self, exc: Exception, timeout: float | None = None) -> ProviderError:
        bound = self.settings.timeout_seconds if timeout is None else timeout
        return translate(exc, model=self.model, region=self.region, what="chat", timeout=bound)

    def _midstream(self, exc: Exception) -> ProviderError:
        """What a failure in the middle of a streamed reply means to the owner: a damaged
        reply (a frame that fails its checksum, an event of the wrong shape), a connection
        that broke off, or whatever Bedrock itself reported (a throttling exception, ...)."""
        if isinstance(exc, botocore.eventstream.ParserError | AttributeError | TypeError):
            return damaged("Bedrock", exc)
        if isinstance(exc, ValueError | KeyError):
            return damaged("Bedrock", exc)
        timeouts = botocore.exceptions.ReadTimeoutError | urllib3.exceptions.ReadTimeoutError
        connection = urllib3.exceptions.ProtocolError | botocore.exceptions.ConnectionError
        if isinstance(exc, connection) and not isinstance(exc, timeouts):
            return broke_off("Bedrock", exc)
        return self._fail(exc)

    def request(
        self,
        system: Sequence[SystemBlock],
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] = (),
        max_tokens: int | None = None,
    ) -> dict[str, Any]:
        """The Converse request body (also what ConverseStream takes)."""
        body: dict[str, Any] = {"modelId": self.model, "messages": to_messages(messages)}
        blocks = to_system(system, self.model)
        if blocks:
            body["system"] = blocks
        if tools:
            body["toolConfig"] = to_tool_config(tools)
        if max_tokens is not None:
            body["inferenceConfig"] = {"maxTokens": max_tokens}
        return body

    def stream(
        self,
        system: Sequence[SystemBlock],
        messages: Sequence[ChatMessage],
        tools: Sequence[ToolSpec] = (),
        *,
        cancel: CancelToken | None = None,
        max_tokens: int | None = None,
    ) -> Iterator[ChatEvent]:
        body = self.request(system, messages, tools, max_tokens)

        def start() -> Any:
            try:
                return self._client.converse_stream(**body)["stream"]
            except Exception as exc:
                raise self._fail(exc) from exc

        if cancel is not None and cancel.cancelled:
            yield Stop("cancelled")
            return
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

    def _events(self, stream: Any, cancel: CancelToken | None) -> Iterator[ChatEvent]:
        open_calls: dict[int, _PartialCall] = {}
        calls: list[_PartialCall] = []
        usage: Usage | None = None
        stop_reason: str | None = None
        raw = getattr(stream, "_raw_stream", None)

        def abort() -> None:
            hang_up(socket_of_urllib3(raw))

        unregister = cancel.on_cancel(abort) if cancel is not None else None
        try:
            for event in stream:
                if cancel is not None and cancel.cancelled:
                    break
                if "contentBlockDelta" in event:
                    payload = event["contentBlockDelta"]
                    delta = payload.get("delta", {})
                    if delta.get("text"):
                        if not isinstance(delta["text"], str):  # botocore does not check
                            raise TypeError(f"a text delta of type {type(delta['text'])}")
                        yield TextDelta(delta["text"])
                    elif "toolUse" in delta:
                        index = int(payload.get("contentBlockIndex", 0))
                        if index in open_calls:
                            open_calls[index].arguments += delta["toolUse"].get("input", "")
                elif "contentBlockStart" in event:
                    payload = event["contentBlockStart"]
                    tool = payload.get("start", {}).get("toolUse")
                    if tool is not None:
                        open_calls[int(payload.get("contentBlockIndex", 0))] = _PartialCall(
                            id=str(tool.get("toolUseId", "")), name=str(tool.get("name", ""))
                        )
                elif "contentBlockStop" in event:
                    index = int(event["contentBlockStop"].get("contentBlockIndex", 0))
                    if index in open_calls:
                        calls.append(open_calls.pop(index))
                elif "messageStop" in event:
                    stop_reason = str(event["messageStop"].get("stopReason", "end_turn"))
                elif "metadata" in event:
                    usage = to_usage(event["metadata"].get("usage", {}))
        except Exception as exc:
            if cancel is None or not cancel.cancelled:
                raise self._midstream(exc) from exc
        finally:
            if unregister is not None:
                unregister()
            try:
                stream.close()
            except Exception:
                log.debug("closing the Bedrock stream failed", exc_info=True)
        if cancel is not None and cancel.cancelled:
            yield Stop("cancelled")
            return
        if stop_reason is None:
            # every complete reply ends with messageStop; without it the reply was cut off,
            # and its tool calls may be half-written
            raise cut_off("Bedrock")
        for number, call in enumerate(calls):
            yield ToolCallEvent(
                ToolCall(
                    id=call.id or f"tooluse_{number}",
                    name=call.name,
                    arguments=call.arguments or "{}",
                )
            )
        if usage is not None:
            yield usage
        yield Stop(stop_reason or "end_turn")

    def _client_for(self, timeout: float | None) -> Any:
        if timeout is None:
            return self._client
        with self._lock:
            client = self._clients_by_timeout.get(timeout)
            if client is None:
                client = make_client(self.settings, read_timeout=timeout)
                self._clients_by_timeout[timeout] = client
            return client

    def complete(
        self,
        system: Sequence[SystemBlock],
        messages: Sequence[ChatMessage],
        *,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ) -> str:
        body = self.request(system, messages, (), max_tokens)
        client = self._client_for(timeout)

        def attempt() -> Any:
            try:
                return client.converse(**body)
            except Exception as exc:
                raise self._fail(exc, timeout) from exc

        # A damaged answer is not asked for again: it is read after the retries.
        return _text_of(self._backoff.call(attempt))


def _text_of(response: Any) -> str:
    """The text of a Converse reply; a body of the wrong shape (botocore does not check) is a
    damaged reply, never an AttributeError deep in extraction or compaction."""
    try:
        content = response.get("output", {}).get("message", {}).get("content", [])
        texts = [block.get("text", "") for block in content]
    except (AttributeError, TypeError) as exc:
        raise damaged("Bedrock", exc) from exc
    if not all(isinstance(text, str) for text in texts):
        raise damaged("Bedrock", TypeError("a reply's text that is not a string"))
    return "".join(texts)


def _discard(stream: Any) -> None:
    """Close a reply that arrived after its caller cancelled (closing ends the connection)."""
    try:
        stream.close()
    except Exception:
        log.debug("closing an abandoned stream failed", exc_info=True)
