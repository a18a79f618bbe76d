"""A fake Bedrock runtime: Converse, ConverseStream (event-stream framing), InvokeModel (Titan).

`boto3` points at it with `endpoint_url`, dummy credentials and an explicit region; errors
come back in the rest-json shape botocore parses (`x-amzn-ErrorType` header, `message` body).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from tests.fakes import eventstream
from tests.fakes.http_fake import Exchange, FakeServer
from tests.fakes.script import DEFAULT_REPLY, Script, Scriptable, Step, fake_embedding

# Bedrock error codes and the HTTP status each comes with.
ERROR_STATUS = {
    "ValidationException": 400,
    "ServiceQuotaExceededException": 400,
    "UnrecognizedClientException": 403,
    "ExpiredTokenException": 403,
    "AccessDeniedException": 403,
    "ResourceNotFoundException": 404,
    "ModelTimeoutException": 408,
    "ModelErrorException": 424,
    "ThrottlingException": 429,
    "ModelNotReadyException": 429,
    "InternalServerException": 500,
    "ServiceUnavailableException": 503,
}
DEFAULT_MESSAGES = {
    "ThrottlingException": "Too many requests, please wait before trying again.",
    "AccessDeniedException": "You don't have access to the model with the specified model ID.",
    "ValidationException": "The provided model identifier is invalid.",
    "ResourceNotFoundException": "Model not found.",
    "UnrecognizedClientException": "The security token included in the request is invalid.",
    "ModelTimeoutException": "Model has timed out in processing the request.",
    "InternalServerException": "The server encountered an internal error.",
    "ServiceUnavailableException": "Service is unavailable.",
}

CHAT_MODELS = {
    "amazon.nova-micro-v1:0",
    "amazon.nova-lite-v1:0",
    "amazon.nova-pro-v1:0",
    "amazon.nova-premier-v1:0",
    "amazon.nova-2-lite-v1:0",
    "anthropic.claude-3-haiku-20240307-v1:0",
    "anthropic.claude-3-5-haiku-20241022-v1:0",
    "anthropic.claude-sonnet-4-20250514-v1:0",
}
_GEOGRAPHY = re.compile(r"^(us|eu|apac|jp|au|ca|us-gov|global)\.")
TITAN_V1 = "amazon.titan-embed-text-v1"
TITAN_V2 = "amazon.titan-embed-text-v2:0"
_PATH = re.compile(r"^/model/(?P<model>.+)/(?P<action>converse|converse-stream|invoke)$")
_OPERATIONS = {"converse": "Converse", "converse-stream": "ConverseStream", "invoke": "InvokeModel"}
# What Converse accepts as a toolUseId and as a tool's name (its API reference: 1 to 64
# characters of these); a conversation holding anything else is refused whole.
_TOOL_WORD = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def tool_problem(body: Any) -> str | None:
    """Why Bedrock would refuse a Converse request's tool blocks, or None: an id or a name
    it does not accept, the same toolUseId used twice, a result answering no tool use."""
    used: set[str] = set()
    for message in body.get("messages") or []:
        for block in message.get("content") or []:
            use = block.get("toolUse")
            if use is not None:
                use_id, name = str(use.get("toolUseId", "")), str(use.get("name", ""))
                if not _TOOL_WORD.match(use_id):
                    return f"Value '{use_id}' at 'toolUse.toolUseId' failed to satisfy constraint"
                if not _TOOL_WORD.match(name):
                    return f"Value '{name}' at 'toolUse.name' failed to satisfy constraint"
                if use_id in used:
                    return f"The toolUseId {use_id} is used more than once."
                used.add(use_id)
            result = block.get("toolResult")
            if result is not None and str(result.get("toolUseId", "")) not in used:
                return "A toolResult block answers no toolUse block before it."
    return None


class BedrockServer(FakeServer, Scriptable):
    """Answers like bedrock-runtime; `denied_models` get AccessDeniedException."""

    region = "us-east-1"

    def __init__(self) -> None:
        super().__init__()
        self.script = Script()
        self.denied_models: set[str] = set()
        self.chat_models: set[str] = set(CHAT_MODELS)  # ids without the geography prefix
        self._ids = 0

    def settings(self, **overrides: Any) -> Any:
        """BedrockSettings pointing here, with short timeouts fit for tests."""
        from timothy.settings import BedrockSettings

        values: dict[str, Any] = {
            "region": self.region,
            "endpoint_url": self.url,
            "timeout_seconds": 5.0,
        }
        values.update(overrides)
        return BedrockSettings(**values)

    # -- scripting (Bedrock-specific) --------------------------------------------------

    def fail(
        self,
        code: str,
        *,
        message: str | None = None,
        on: str = "chat",
        times: int | None = 1,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Answer the next request(s) with this Bedrock error, e.g. "ThrottlingException"
        (with `headers` besides, e.g. `Retry-After`)."""
        self.script.push(
            Step(
                status=ERROR_STATUS.get(code, 400),
                error_code=code,
                error_message=message or DEFAULT_MESSAGES.get(code, code),
                headers=tuple((headers or {}).items()),
            ),
            on="embeddings" if on == "embeddings" else "chat",
            times=times,
        )

    # -- what was received -------------------------------------------------------------

    def requests_for(self, operation: str) -> list[dict[str, Any]]:
        """JSON bodies of every request to one operation ("Converse", "InvokeModel", ...)."""
        return [r.json for r in self.requests if r.operation == operation]

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return [r.json for r in self.requests if r.operation in ("Converse", "ConverseStream")]

    @property
    def embedding_requests(self) -> list[dict[str, Any]]:
        return self.requests_for("InvokeModel")

    # -- answering ---------------------------------------------------------------------

    def handle(self, exchange: Exchange) -> None:
        request = exchange.request
        match = _PATH.match(request.path) if request.method == "POST" else None
        if match:
            request.model = match["model"]
            request.operation = _OPERATIONS[match["action"]]
        self.record(request)
        if not match:
            self._error(exchange, "UnknownOperationException", "Unknown operation", 404)
            return
        model = match["model"]
        if "AWS4-HMAC-SHA256" not in request.headers.get("authorization", ""):
            self._error(exchange, "MissingAuthenticationTokenException", "Missing token", 403)
            return
        channel = "embeddings" if request.operation == "InvokeModel" else "chat"
        step = self.script.next(channel) or (DEFAULT_REPLY if channel == "chat" else Step())
        if step.delay:
            exchange.pause(step.delay, self.stopping)
        if step.hang:
            exchange.wait_for_disconnect(self.stopping)
            return
        if step.is_error:
            self._error(
                exchange,
                step.error_code or "InternalServerException",
                step.error_message,
                headers=dict(step.headers),
            )
            return
        if model in self.denied_models:
            self._error(exchange, "AccessDeniedException", None)
            return
        try:
            body = request.json
        except ValueError:
            self._error(exchange, "ValidationException", "Malformed input request.")
            return
        if request.operation == "InvokeModel":
            self._invoke(exchange, model, body)
        elif _GEOGRAPHY.sub("", model) not in self.chat_models:
            self._error(
                exchange, "ValidationException", "The provided model identifier is invalid."
            )
        elif (problem := tool_problem(body)) is not None:
            self._error(exchange, "ValidationException", problem)
        elif request.operation == "Converse":
            self._converse(exchange, step)
        else:
            self._converse_stream(exchange, step)

    def _error(
        self,
        exchange: Exchange,
        code: str,
        message: str | None,
        status: int = 0,
        *,
        headers: dict[str, str] | None = None,
    ) -> None:
        exchange.send_json(
            status or ERROR_STATUS.get(code, 400),
            {"message": message or DEFAULT_MESSAGES.get(code, code)},
            {
                "x-amzn-ErrorType": f"{code}:http://internal.amazon.com/coral/com.amazon.bedrock/",
                "x-amzn-RequestId": "fake-request-id",
                **(headers or {}),
            },
        )

    def _next_id(self) -> str:
        self._ids += 1
        return f"tooluse_fake{self._ids}"

    @staticmethod
    def _stop_reason(step: Step) -> str:
        if step.stop_reason is not None:
            return step.stop_reason
        return "tool_use" if step.tool_calls else "end_turn"

    @staticmethod
    def _usage(step: Step) -> dict[str, int]:
        prompt, completion, cached = step.token_usage()
        # Bedrock counts cache reads apart from inputTokens
        return {
            "inputTokens": prompt - cached,
            "outputTokens": completion,
            "totalTokens": prompt + completion,
            "cacheReadInputTokens": cached,
            "cacheWriteInputTokens": 0,
        }

    # -- InvokeModel (Titan embeddings) ------------------------------------------------

    def _invoke(self, exchange: Exchange, model: str, body: Any) -> None:
        if model not in (TITAN_V1, TITAN_V2):
            self._error(
                exchange, "ValidationException", "The provided model identifier is invalid."
            )
            return
        if not isinstance(body, dict) or not isinstance(body.get("inputText"), str):
            self._error(exchange, "ValidationException", "Malformed input request: inputText")
            return
        text = body["inputText"]
        allowed = {"inputText"} if model == TITAN_V1 else {"inputText", "dimensions", "normalize"}
        extra = sorted(set(body) - allowed)
        if extra:
            self._error(
                exchange,
                "ValidationException",
                f"Malformed input request: extraneous key [{extra[0]}] is not permitted",
            )
            return
        if not text.strip():
            self._error(exchange, "ValidationException", "Malformed input request: empty text")
            return
        dimension = 1536
        if model == TITAN_V2:
            dimension = int(body.get("dimensions", 1024))
            if dimension not in (256, 512, 1024):
                self._error(exchange, "ValidationException", "dimensions must be 256, 512 or 1024")
                return
        vector = fake_embedding(text, dimension)
        answer: dict[str, Any] = {"embedding": vector, "inputTextTokenCount": len(text.split())}
        if model == TITAN_V2:
            answer["embeddingsByType"] = {"float": vector}
        exchange.send_json(200, answer, {"x-amzn-bedrock-input-token-count": "1"})

    # -- Converse ----------------------------------------------------------------------

    def _converse(self, exchange: Exchange, step: Step) -> None:
        if step.raw is not None:
            exchange.send(200, step.raw)
            return
        content: list[dict[str, Any]] = []
        if step.text:
            content.append({"text": step.text})
        for tool in step.tool_calls:
            content.append(
                {
                    "toolUse": {
                        "toolUseId": tool.id or self._next_id(),
                        "name": tool.name,
                        "input": json.loads(tool.arguments_json or "{}"),
                    }
                }
            )
        exchange.send_json(
            200,
            {
                "output": {"message": {"role": "assistant", "content": content}},
                "stopReason": self._stop_reason(step),
                "usage": self._usage(step),
                "metrics": {"latencyMs": 12},
            },
        )

    def _converse_stream(self, exchange: Exchange, step: Step) -> None:
        exchange.start_stream(
            "application/vnd.amazon.eventstream", {"x-amzn-RequestId": "fake-request-id"}
        )
        send = exchange.write_chunk
        send(eventstream.event("messageStart", {"role": "assistant"}))
        index = 0
        pieces = step.text_chunks()
        while step.endless:  # until the client hangs up (the write raises ClientGone)
            delta = {"contentBlockIndex": index, "delta": {"text": step.text}}
            send(eventstream.event("contentBlockDelta", delta))
        for number, piece in enumerate(pieces):
            if step.stall_after is not None and number >= step.stall_after:
                exchange.wait_for_disconnect(self.stopping)
                return
            if step.interval and number:
                exchange.pause(step.interval, self.stopping)
            send(
                eventstream.event(
                    "contentBlockDelta", {"contentBlockIndex": index, "delta": {"text": piece}}
                )
            )
            if number == 0:
                for garbage in step.garbage:
                    send(garbage)
        if not pieces:
            for garbage in step.garbage:
                send(garbage)
        if step.stall_after is not None:
            exchange.wait_for_disconnect(self.stopping)
            return
        if step.stream_error is not None:
            send(eventstream.exception(step.stream_error, step.error_message or "It broke."))
            exchange.end_stream()
            return
        if pieces:
            send(eventstream.event("contentBlockStop", {"contentBlockIndex": index}))
            index += 1
        for tool in step.tool_calls:
            send(
                eventstream.event(
                    "contentBlockStart",
                    {
                        "contentBlockIndex": index,
                        "start": {
                            "toolUse": {"toolUseId": tool.id or self._next_id(), "name": tool.name}
                        },
                    },
                )
            )
            arguments = tool.arguments_json
            half = len(arguments) // 2
            for part in (arguments[:half], arguments[half:]):
                send(
                    eventstream.event(
                        "contentBlockDelta",
                        {"contentBlockIndex": index, "delta": {"toolUse": {"input": part}}},
                    )
                )
            send(eventstream.event("contentBlockStop", {"contentBlockIndex": index}))
            index += 1
        if step.ending == "eof":
            exchange.end_stream()
            return
        if step.ending == "hangup":
            exchange.hang_up()
            return
        send(eventstream.event("messageStop", {"stopReason": self._stop_reason(step)}))
        send(
            eventstream.event(
                "metadata", {"usage": self._usage(step), "metrics": {"latencyMs": 12}}
            )
        )
        exchange.end_stream()
