"""A fake OpenAI-compatible server: chat completions (SSE and plain), embeddings, the model
list (`GET /v1/models`), errors, hangs.

Speaks the wire format the `openai` SDK parses; tests script it through `Scriptable` verbs and
read back `chat_requests` / `embedding_requests`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

from tests.fakes.http_fake import Exchange, FakeServer, RecordedRequest
from tests.fakes.script import Script, Scriptable, Step, fake_embedding

# The status each OpenAI error code comes with, and its `type`.
ERRORS: dict[int, tuple[str, str, str]] = {
    400: ("invalid_request_error", "invalid_request", "Invalid request."),
    401: ("invalid_request_error", "invalid_api_key", "Incorrect API key provided: sk-te***."),
    403: ("invalid_request_error", "model_access_denied", "You have no access to this model."),
    404: (
        "invalid_request_error",
        "model_not_found",
        "The model `gpt-none` does not exist or you do not have access to it.",
    ),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for requests."),
    500: ("server_error", "server_error", "The server had an error processing your request."),
    503: ("server_error", "overloaded", "The engine is currently overloaded."),
}

WEB_PAGE = b"<!doctype html><html><head><title>Router</title></head><body>Log in</body></html>"

EMBEDDING_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class OpenAIServer(FakeServer, Scriptable):
    """`base_url` is what an OpenAI client (or OpenAISettings.base_url) points at."""

    def __init__(self) -> None:
        super().__init__()
        self.script = Script()
        self.api_key: str | None = None  # when set, other keys get 401 like OpenAI's
        self.embeddings_enabled = True  # False: /v1/embeddings is 404, like a chat-only server
        self.embedding_models: dict[str, int] = dict(EMBEDDING_DIMENSIONS)
        # What GET /v1/models lists (None: the route is 404, as on a server that lists none),
        # after `models_delay` seconds.
        self.models: list[str] | None = ["gpt-4o-mini", *EMBEDDING_DIMENSIONS]
        self.models_delay = 0.0
        # True: stream each tool call whole in one chunk with no "index", as some
        # OpenAI-compatible servers do (OpenAI numbers them and splits the arguments)
        self.whole_tool_calls = False
        # Set: every request gets an HTML page with this status, as from an address that is a
        # web server rather than the API (200: a router's login page; 405 or 501: a server
        # that takes no POST).
        self.web_page: int | None = None
        self._ids = 0

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"

    def settings(self, **overrides: Any) -> Any:
        """OpenAISettings pointing here, with short timeouts fit for tests."""
        from timothy.settings import OpenAISettings

        values: dict[str, Any] = {"base_url": self.base_url, "timeout_seconds": 5.0}
        values.update(overrides)
        return OpenAISettings(**values)

    # -- scripting (OpenAI-specific) ---------------------------------------------------

    def fail(
        self,
        status: int,
        *,
        code: str | None = None,
        message: str | None = None,
        on: str = "chat",
        times: int | None = 1,
        retry_after: float | str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Answer the next request(s) with an OpenAI error body and this HTTP status (and
        `retry_after` as the header, `headers` besides, e.g. `retry-after-ms`)."""
        self.script.push(
            Step(
                status=status,
                error_code=code,
                error_message=message,
                retry_after=retry_after,
                headers=tuple((headers or {}).items()),
            ),
            on="embeddings" if on == "embeddings" else "chat",
            times=times,
        )

    # -- what was received -------------------------------------------------------------

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r.json for r in self.requests if r.operation == "chat"]

    @property
    def embedding_requests(self) -> list[dict[str, Any]]:
        return [r.json for r in self.requests if r.operation == "embeddings"]

    # -- answering ---------------------------------------------------------------------

    def handle(self, exchange: Exchange) -> None:
        request = exchange.request
        body = request.json if request.body else {}
        request.model = body.get("model") if isinstance(body, dict) else None
        if request.method == "POST" and request.path == "/v1/chat/completions":
            request.operation = "chat"
        elif request.method == "POST" and request.path == "/v1/embeddings":
            request.operation = "embeddings"
        elif request.method == "GET" and request.path.rstrip("/") == "/v1/models":
            request.operation = "models"
        self.record(request)
        if self.web_page is not None:
            exchange.send(self.web_page, WEB_PAGE, "text/html; charset=utf-8")
            return
        if request.operation == "":
            exchange.send_json(404, {"error": "not found"})
            return
        if self.api_key is not None:
            given = request.headers.get("authorization", "")
            if given != f"Bearer {self.api_key}":
                self._send_error(exchange, Step(status=401))
                return
        if request.operation == "models":
            self._models(exchange)
        elif request.operation == "embeddings":
            self._embeddings(exchange, body)
        else:
            self._chat(exchange, body)

    def _next_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}{self._ids}"

    def _send_error(self, exchange: Exchange, step: Step) -> None:
        kind, code, message = ERRORS.get(step.status, ("server_error", "error", "Error."))
        headers = dict(step.headers)
        if step.retry_after is not None:
            headers["retry-after"] = str(step.retry_after)
        exchange.send_json(
            step.status,
            {
                "error": {
                    "message": step.error_message or message,
                    "type": kind,
                    "param": None,
                    "code": step.error_code or code,
                }
            },
            headers,
        )

    def _prelude(self, exchange: Exchange, step: Step) -> bool:
        """Delay, hang or fail as scripted; False when the answer is already given."""
        if step.delay:
            exchange.pause(step.delay, self.stopping)
        if step.hang:
            exchange.wait_for_disconnect(self.stopping)
            return False
        if step.is_error:
            self._send_error(exchange, step)
            return False
        return True

    # -- the model list ----------------------------------------------------------------

    def _models(self, exchange: Exchange) -> None:
        if self.models_delay:
            exchange.pause(self.models_delay, self.stopping)
        if self.models is None:
            exchange.send_json(404, {"error": "404 page not found"})
            return
        data = [
            {"id": name, "object": "model", "created": 0, "owned_by": "fake"}
            for name in self.models
        ]
        exchange.send_json(200, {"object": "list", "data": data})

    # -- embeddings --------------------------------------------------------------------

    def _embeddings(self, exchange: Exchange, body: dict[str, Any]) -> None:
        step = self.script.next("embeddings") or Step()
        if not self._prelude(exchange, step):
            return
        model = str(body.get("model"))
        if not self.embeddings_enabled:
            exchange.send_json(404, {"error": "404 page not found"})
            return
        if model not in self.embedding_models:
            self._send_error(
                exchange,
                Step(status=404, error_message=f"The model `{model}` does not exist."),
            )
            return
        inputs = body.get("input")
        texts: Sequence[str] = [inputs] if isinstance(inputs, str) else list(inputs or [])
        if not texts or any(not isinstance(t, str) or not t for t in texts):
            self._send_error(exchange, Step(status=400, error_message="'input' is invalid."))
            return
        dimension = int(body.get("dimensions") or self.embedding_models[model])
        data = [
            {"object": "embedding", "index": i, "embedding": fake_embedding(text, dimension)}
            for i, text in enumerate(texts)
        ]
        tokens = sum(len(t.split()) for t in texts)
        exchange.send_json(
            200,
            {
                "object": "list",
                "data": data,
                "model": model,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    # -- chat ----------------------------------------------------------------------------

    def _chat(self, exchange: Exchange, body: dict[str, Any]) -> None:
        from tests.fakes.script import DEFAULT_REPLY

        step = self.script.next("chat") or DEFAULT_REPLY
        if not self._prelude(exchange, step):
            return
        if step.raw is not None:
            exchange.send(200, step.raw)
            return
        model = str(body.get("model"))
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._chat_stream(exchange, step, model, include_usage)
        else:
            self._chat_plain(exchange, step, model)

    def _finish_reason(self, step: Step) -> str:
        if step.stop_reason is not None:
            return step.stop_reason
        return "tool_calls" if step.tool_calls else "stop"

    def _usage(self, step: Step) -> dict[str, Any]:
        prompt, completion, cached = step.token_usage()
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached},
        }

    def _chat_plain(self, exchange: Exchange, step: Step, model: str) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": step.text or None}
        if step.tool_calls:
            message["tool_calls"] = [
                {
                    "id": tool.id or self._next_id("call_"),
                    "type": "function",
                    "function": {"name": tool.name, "arguments": tool.arguments_json},
                }
                for tool in step.tool_calls
            ]
        exchange.send_json(
            200,
            {
                "id": self._next_id("chatcmpl-"),
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {"index": 0, "message": message, "finish_reason": self._finish_reason(step)}
                ],
                "usage": self._usage(step),
            },
        )

    def _chat_stream(self, exchange: Exchange, step: Step, model: str, include_usage: bool) -> None:
        completion_id = self._next_id("chatcmpl-")
        created = int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
            choices = (
                []
                if step.empty_choices
                else [{"index": 0, "delta": delta, "finish_reason": finish}]
            )
            value = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": choices,
            }
            return f"data: {json.dumps(value)}\n\n".encode()

        exchange.start_stream("text/event-stream")
        exchange.write_chunk(chunk({"role": "assistant", "content": ""}))
        while step.endless:  # until the client hangs up (the write raises ClientGone)
            exchange.write_chunk(chunk({"content": step.text}))
        for number, piece in enumerate(step.text_chunks()):
            if step.stall_after is not None and number >= step.stall_after:
                exchange.wait_for_disconnect(self.stopping)
                return
            if step.interval and number:
                exchange.pause(step.interval, self.stopping)
            exchange.write_chunk(chunk({"content": piece}))
            if number == 0:
                for garbage in step.garbage:
                    exchange.write_chunk(garbage)
        if not step.text_chunks():
            for garbage in step.garbage:
                exchange.write_chunk(garbage)
        if step.stall_after is not None:
            exchange.wait_for_disconnect(self.stopping)
            return
        if step.stream_error is not None:
            error = {"error": {"message": step.error_message, "type": step.stream_error}}
            exchange.write_chunk(f"data: {json.dumps(error)}\n\n".encode())
            exchange.end_stream()
            return
        for index, tool in enumerate(step.tool_calls):
            arguments = tool.arguments_json
            if self.whole_tool_calls:
                whole = {
                    "id": tool.id or self._next_id("call_"),
                    "type": "function",
                    "function": {"name": tool.name, "arguments": arguments},
                }
                exchange.write_chunk(chunk({"tool_calls": [whole]}))
                continue
            half = len(arguments) // 2
            exchange.write_chunk(
                chunk(
                    {
                        "tool_calls": [
                            {
                                "index": index,
                                "id": tool.id or self._next_id("call_"),
                                "type": "function",
                                "function": {"name": tool.name, "arguments": ""},
                            }
                        ]
                    }
                )
            )
            for part in (arguments[:half], arguments[half:]):
                exchange.write_chunk(
                    chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
                )
        if step.ending == "eof":
            exchange.end_stream()
            return
        if step.ending == "hangup":
            exchange.hang_up()
            return
        exchange.write_chunk(chunk({}, self._finish_reason(step)))
        if include_usage:
            value = {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [],
                "usage": self._usage(step),
            }
            exchange.write_chunk(f"data: {json.dumps(value)}\n\n".encode())
        exchange.write_chunk(b"data: [DONE]\n\n")
        exchange.end_stream()


def last_request(server: FakeServer, operation: str) -> RecordedRequest:
    """The most recent request of one kind (raises if there was none)."""
    for request in reversed(server.requests):
        if request.operation == operation:
            return request
    raise AssertionError(f"no {operation} request was received")
