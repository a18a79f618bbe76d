"""The fakes speak the real wire formats: botocore's own decoder accepts our event stream,
and one script drives both providers to the same events."""

from __future__ import annotations

import json

import pytest
from botocore.eventstream import ChecksumMismatch, EventStreamBuffer

from tests.fakes import eventstream
from tests.fakes.bedrock_server import BedrockServer
from tests.fakes.openai_server import OpenAIServer
from tests.fakes.script import Scriptable, call
from timothy.providers.backoff import Backoff
from timothy.providers.base import ChatEvent, ChatMessage, ChatProvider, SystemBlock, ToolSpec
from timothy.providers.bedrock_chat import BedrockChat
from timothy.providers.openai_chat import OpenAIChat


def test_event_stream_messages_decode_with_botocore_and_carry_real_crcs() -> None:
    body = {"contentBlockIndex": 0, "delta": {"text": "Hi"}}
    raw = eventstream.event("contentBlockDelta", body) + eventstream.exception(
        "throttlingException", "slow down"
    )
    buffer = EventStreamBuffer()
    buffer.add_data(raw)
    first, second = list(buffer)
    assert first.headers == {
        ":event-type": "contentBlockDelta",
        ":content-type": "application/json",
        ":message-type": "event",
    }
    assert json.loads(first.payload) == body
    assert second.headers[":exception-type"] == "throttlingException"

    corrupted = bytearray(eventstream.event("messageStop", {"stopReason": "end_turn"}))
    corrupted[-6] ^= 0xFF  # a payload byte: the message CRC no longer matches
    buffer = EventStreamBuffer()
    buffer.add_data(bytes(corrupted))
    with pytest.raises(ChecksumMismatch):
        list(buffer)


def _script(server: Scriptable) -> None:
    server.reply(
        "Let me note that.",
        tool_calls=[
            call("remember", {"content": "aisle seats"}, id="t1"),
            call("remember", {"content": "birthday 3 March"}, id="t2"),
        ],
        usage=(300, 12, 256),
    )
    server.reply("Done.", usage=(320, 2, 256))


def _run(provider: ChatProvider) -> list[list[ChatEvent]]:
    tools = [ToolSpec("remember", "Save a fact.", {"type": "object"})]
    system = [SystemBlock("You are Timothy.", cache_after=True)]
    return [
        list(provider.stream(system, [ChatMessage("user", "note these")], tools)),
        list(provider.stream(system, [ChatMessage("user", "thanks")], tools)),
    ]


def test_one_script_gives_the_same_events_from_both_providers(
    openai_server: OpenAIServer, bedrock_server: BedrockServer
) -> None:
    fast = Backoff(max_attempts=1)
    _script(openai_server)
    _script(bedrock_server)
    from_openai = _run(OpenAIChat(openai_server.settings(), backoff=fast))
    from_bedrock = _run(BedrockChat(bedrock_server.settings(), backoff=fast))
    assert from_openai == from_bedrock
    assert [type(e).__name__ for e in from_openai[0]] == [
        "TextDelta",
        "TextDelta",
        "TextDelta",
        "TextDelta",
        "ToolCallEvent",
        "ToolCallEvent",
        "Usage",
        "Stop",
    ]


def test_every_request_is_recorded_with_its_model(
    openai_server: OpenAIServer, bedrock_server: BedrockServer
) -> None:
    OpenAIChat(openai_server.settings()).complete([], [ChatMessage("user", "a")])
    BedrockChat(bedrock_server.settings()).complete([], [ChatMessage("user", "b")])
    assert [(r.operation, r.model) for r in openai_server.requests] == [("chat", "gpt-4o-mini")]
    assert [(r.operation, r.model) for r in bedrock_server.requests] == [
        ("Converse", "us.amazon.nova-lite-v1:0")
    ]
    assert openai_server.chat_requests[0]["messages"][-1] == {"role": "user", "content": "a"}
    assert bedrock_server.chat_requests[0]["messages"][-1]["content"] == [{"text": "b"}]
