"""Compaction: older turns become one summary, the newest stay verbatim, extraction runs first."""

from __future__ import annotations

import json

import pytest

from tests.chat.conftest import MakeEngine, run
from tests.fakes.openai_server import OpenAIServer
from timothy.chat.events import BackgroundEvent, SessionCompacted, TurnFailed, TurnFinished
from timothy.chat.prompt import SUMMARY_INTRO
from timothy.chat.settings import ChatSettings
from timothy.memory.settings import MemoryPolicySettings
from timothy.store import Store
from timothy.store.records import MessageRole

SMALL = ChatSettings(context_window_tokens=400, compact_at_share=0.5, keep_recent_messages=2)


def words(label: str, n: int = 30) -> str:
    return " ".join(f"{label}{i}" for i in range(n))


def test_compaction_keeps_recent_turns_and_extracts_first(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    engine = make_engine(openai_server, chat_settings=SMALL)
    heard: list[BackgroundEvent] = []
    engine.background_listeners.append(heard.append)
    first_user = "My cat is called Miso. " + words("alpha")
    openai_server.reply(words("reply-one"))
    events = run(engine.send(first_user))
    session_id = events[0].session.id  # type: ignore[union-attr]
    assert engine.wait_idle(10)  # the title and extraction calls get the default reply
    openai_server.reply(words("reply-two"))
    run(engine.send(words("bravo"), session_id=session_id))
    assert engine.wait_idle(10)
    assert engine.transcript_tokens(session_id) > 200

    before = len(openai_server.chat_requests)
    openai_server.reply(
        json.dumps(
            {
                "facts": [
                    {
                        "content": "The owner's cat is called Miso",
                        "entities": ["Miso"],
                        "confidence": 0.9,
                    }
                ]
            }
        )
    )
    openai_server.reply("The owner introduced their cat Miso and talked about alpha things.")
    openai_server.reply("Third answer.")
    run(engine.send("And now the third question?", session_id=session_id))
    assert engine.wait_idle(10)

    requests = openai_server.chat_requests[before:]
    extraction, summary, turn = requests[0], requests[1], requests[2]
    assert not extraction.get("stream") and "durable facts" in json.dumps(extraction)
    assert "My cat is called Miso" in json.dumps(extraction["messages"])
    assert not summary.get("stream") and "Summarise" in json.dumps(summary["messages"])
    assert turn.get("stream")
    system = turn["messages"][0]["content"]
    assert f"{SUMMARY_INTRO}\nThe owner introduced" in system
    assert "introduced their cat Miso" in system
    sent = [m["content"] for m in turn["messages"][1:]]
    assert sent[0].startswith("bravo0")  # the kept turns start at an owner message
    assert all("alpha0" not in text for text in sent)
    assert sent[-1] == "And now the third question?"

    stored = store.sessions.messages(session_id)
    [summary_message] = [m for m in stored if m.role is MessageRole.SUMMARY]
    compacted = [m for m in stored if m.compacted_by == summary_message.id]
    assert [m.content for m in compacted] == [first_user, words("reply-one")]
    assert len(stored) == 7  # 3 turns and the summary: nothing the owner said is deleted
    staged = store.memories.list(status="staged", session_id=session_id)
    assert [m.content for m in staged] == ["The owner's cat is called Miso"]
    assert [e.compacted for e in heard if isinstance(e, SessionCompacted)] == [2]


def test_a_failed_summary_leaves_the_conversation_whole(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    engine = make_engine(openai_server, chat_settings=SMALL)
    engine.policy = MemoryPolicySettings(extraction_enabled=False)
    openai_server.reply(words("one"))
    events = run(engine.send(words("alpha")))
    session_id = events[0].session.id  # type: ignore[union-attr]
    assert engine.wait_idle(10)
    openai_server.reply(words("two"))
    run(engine.send(words("bravo"), session_id=session_id))
    assert engine.wait_idle(10)
    openai_server.fail(400)  # the summary call
    openai_server.reply("Still here.")
    events = run(engine.send("third", session_id=session_id))
    assert events[-1].message.content == "Still here."  # type: ignore[union-attr]
    stored = store.sessions.messages(session_id)
    assert not [m for m in stored if m.role is MessageRole.SUMMARY]
    assert all(m.compacted_by is None for m in stored)


# The words of a local server (llama.cpp) whose model's window is smaller than the settings'.
OVERFLOW = "the request exceeds the available context size (n_ctx: 4096), try increasing it"


def test_a_model_that_says_too_long_gets_the_conversation_compacted_and_asked_again(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    # The settings think the window is large: no compaction is due by their count.
    roomy = ChatSettings(context_window_tokens=128_000, keep_recent_messages=1)
    engine = make_engine(openai_server, chat_settings=roomy)
    engine.policy = MemoryPolicySettings(extraction_enabled=False)
    heard: list[BackgroundEvent] = []
    engine.background_listeners.append(heard.append)
    openai_server.reply(words("one"))
    events = run(engine.send(words("alpha")))
    session_id = events[0].session.id  # type: ignore[union-attr]
    assert engine.wait_idle(10)

    openai_server.fail(400, code="exceed_context_size_error", message=OVERFLOW)
    openai_server.reply("The owner talked about alpha things.")  # the summary
    openai_server.reply("Answered after all.")
    events = run(engine.send("And the second question?", session_id=session_id))
    assert engine.wait_idle(10)

    assert not [e for e in events if isinstance(e, TurnFailed)]
    [finished] = [e for e in events if isinstance(e, TurnFinished)]
    assert finished.message.content == "Answered after all."
    retried = openai_server.chat_requests[-1]
    assert "The owner talked about alpha things." in retried["messages"][0]["content"]
    stored = store.sessions.messages(session_id)
    assert [m.content for m in stored if m.role is MessageRole.ASSISTANT] == [
        words("one"),
        "Answered after all.",
    ]  # the refused attempt left no empty reply behind
    assert [e.compacted for e in heard if isinstance(e, SessionCompacted)] == [2]


def test_too_long_with_nothing_older_to_summarise_says_what_to_do(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    engine = make_engine(openai_server, chat_settings=SMALL)
    openai_server.fail(400, code="exceed_context_size_error", message=OVERFLOW)
    events = run(engine.send("One very long first message"))
    [failed] = [e for e in events if isinstance(e, TurnFailed)]
    assert failed.kind == "context_too_long"
    assert "at most 4096 tokens" in failed.error
    assert "Start a new chat" in failed.error
    assert len(openai_server.chat_requests) == 1  # nothing to compact: not asked again
    session_id = events[0].session.id  # type: ignore[union-attr]
    [kept] = store.sessions.messages(session_id)
    assert kept.content == "One very long first message"


# Plain answers of a shape no vendor sends: the extraction call before compaction gets one.
DAMAGED_ANSWERS = {
    "openai_server": b'{"id": "x", "object": "chat.completion", "created": 0, "model": "m",'
    b' "choices": [{"index": 0, "message": {"role": "assistant", "content": 42},'
    b' "finish_reason": "stop"}]}',
    "bedrock_server": b'{"output": {"message": {"role": "assistant", "content":'
    b' [{"text": {"facts": []}}]}}, "stopReason": "end_turn",'
    b' "usage": {"inputTokens": 1, "outputTokens": 1, "totalTokens": 2}}',
}


@pytest.mark.parametrize("server_name", list(DAMAGED_ANSWERS))
def test_a_damaged_extraction_answer_does_not_stop_compaction(
    store: Store, make_engine: MakeEngine, request: pytest.FixtureRequest, server_name: str
) -> None:
    server = request.getfixturevalue(server_name)
    engine = make_engine(server, chat_settings=SMALL)
    server.reply(words("reply-one"))
    events = run(engine.send("My cat is called Miso. " + words("alpha")))
    session_id = events[0].session.id  # type: ignore[union-attr]
    assert engine.wait_idle(10)
    server.reply(words("reply-two"))
    run(engine.send(words("bravo"), session_id=session_id))
    assert engine.wait_idle(10)
    server.answer_raw(DAMAGED_ANSWERS[server_name])  # the extraction before compaction
    server.reply("The owner introduced their cat Miso.")  # the summary
    server.reply("Third answer.")
    third = run(engine.send("And now the third question?", session_id=session_id))
    assert next(e for e in third if isinstance(e, TurnFinished)).message.content == (
        "Third answer."
    )
    stored = store.sessions.messages(session_id)
    [summary] = [m for m in stored if m.role is MessageRole.SUMMARY]
    assert summary.content == "The owner introduced their cat Miso."
    assert engine.wait_idle(10)
    assert store.memories.list(status="staged", session_id=session_id) == []
