"""Hostile provider replies: a server that sends garbage on the wire. Each turn ends with a
plain message (a failure in one sentence, or a completed turn where that is right), the
owner's message and any partial reply are kept, and nothing is staged or saved from garbage.

The fakes are real HTTP servers writing the bytes (SSE for OpenAI, event-stream frames for
Bedrock), so the real `openai` and `boto3` clients parse them.
"""

from __future__ import annotations

import json

import pytest

from tests.chat.conftest import MakeEngine, run
from tests.conftest import run_timothy
from tests.fakes import eventstream
from tests.fakes.bedrock_server import BedrockServer
from tests.fakes.openai_server import OpenAIServer
from tests.fakes.script import call
from timothy.chat.engine import (
    EMPTY_REPLY,
    MAX_REPLY_CHARS,
    MAX_TOOL_ARGUMENT_CHARS,
    TOO_LONG_REPLY,
    TOOL_LOOP,
)
from timothy.chat.events import (
    MemorySaved,
    ReplyDelta,
    TurnEvent,
    TurnFailed,
    TurnFinished,
)
from timothy.chat.settings import ChatSettings
from timothy.settings import Settings, save_settings
from timothy.store import Store
from timothy.store.records import MessageRole, MessageStatus, StoredToolCall

OWNER = "I live in Porto and my cat is called Miso. Tell me a story."
PARTIAL = "Once upon a time in Porto"
# Words a parser or an SDK would say; the owner must never see them.
TECHNICAL = ("Traceback", "JSONDecodeError", "Expecting", "AttributeError", "object has no")
TECHNICAL += ("Checksum", "codec", "None", "0x", "Error:")


def plain(sentence: str) -> bool:
    return sentence.endswith(".") and not any(word in sentence for word in TECHNICAL)


def nothing_kept_from_garbage(store: Store) -> None:
    assert store.memories.list() == []  # nothing saved, nothing staged


def failed_turn(events: list[TurnEvent]) -> TurnFailed:
    [failed] = [e for e in events if isinstance(e, TurnFailed)]
    assert plain(failed.error), failed.error
    assert not [e for e in events if isinstance(e, TurnFinished)]
    return failed


def session_of(events: list[TurnEvent]) -> str:
    return events[0].session.id  # type: ignore[union-attr]


OPENAI_GARBAGE = {
    "a line that is not JSON": b"data: {not json at all\n\n",
    "a chunk of the wrong shape": b'data: {"choices": "everything"}\n\n',
    "a delta of the wrong shape": b'data: {"choices": [{"index": 0, "delta": 42}]}\n\n',
    "a JSON list instead of a chunk": b"data: [1, 2, 3]\n\n",
    "text that is a number": b'data: {"choices": [{"index": 0, "delta": {"content": 42}}]}\n\n',
    "text that is a list": b'data: {"choices": [{"index": 0, "delta": {"content": ["a"]}}]}\n\n',
    "bytes that are not UTF-8": b"data: \xff\xfe\xfd\n\n",
}


@pytest.mark.parametrize("name", list(OPENAI_GARBAGE))
def test_malformed_sse_keeps_the_partial_reply_and_fails_plainly(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine, name: str
) -> None:
    engine = make_engine(openai_server)
    openai_server.misbehave(PARTIAL, garbage=[OPENAI_GARBAGE[name]])
    events = run(engine.send(OWNER))
    failed = failed_turn(events)
    assert failed.error == "The server sent a damaged reply; try again."
    assert failed.message is not None and failed.message.status is MessageStatus.FAILED
    assert failed.message.content == "Once "  # what arrived before the garbage
    kept = store.sessions.messages(session_of(events))
    assert [(m.role, m.content) for m in kept] == [
        (MessageRole.USER, OWNER),
        (MessageRole.ASSISTANT, "Once "),
    ]
    assert engine.wait_idle(10)
    nothing_kept_from_garbage(store)


@pytest.mark.parametrize(
    ("ending", "error"),
    [
        ("eof", "The server stopped before the reply was complete; try again."),
        ("hangup", "The connection to the server broke off in the middle of the reply; try again."),
    ],
)
def test_a_stream_that_stops_early_is_not_a_complete_reply(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine, ending: str, error: str
) -> None:
    engine = make_engine(openai_server)
    openai_server.misbehave(PARTIAL, ending=ending)  # type: ignore[arg-type]
    events = run(engine.send(OWNER))
    failed = failed_turn(events)
    assert failed.error == error
    assert failed.message is not None and failed.message.content == PARTIAL
    assert engine.wait_idle(10)
    nothing_kept_from_garbage(store)


def test_a_tool_call_from_a_stream_cut_short_never_runs(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    engine = make_engine(openai_server)
    openai_server.misbehave(
        tool_calls=[call("remember", {"content": "The owner's cat is called Miso"})],
        ending="eof",
    )
    events = run(engine.send("Please remember that my cat is called Miso"))
    failed_turn(events)
    assert not [e for e in events if isinstance(e, MemorySaved)]
    kept = store.sessions.messages(session_of(events))
    assert [m.role for m in kept] == [MessageRole.USER]
    nothing_kept_from_garbage(store)


def test_an_empty_choices_list_is_an_empty_reply(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    engine = make_engine(openai_server)
    openai_server.misbehave("Hello", empty_choices=True)
    events = run(engine.send(OWNER))
    failed = failed_turn(events)
    assert failed.message is None
    assert [m.role for m in store.sessions.messages(session_of(events))] == [MessageRole.USER]
    nothing_kept_from_garbage(store)


def test_a_reply_with_nothing_in_it_fails_plainly(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    engine = make_engine(openai_server)
    openai_server.reply("")  # a finish reason, usage, [DONE]: and not one word
    events = run(engine.send(OWNER))
    failed = failed_turn(events)
    assert failed.error == "The provider sent an empty reply; try again."
    assert [m.role for m in store.sessions.messages(session_of(events))] == [MessageRole.USER]
    assert engine.wait_idle(10)
    nothing_kept_from_garbage(store)


@pytest.mark.parametrize("server_name", ["openai_server", "bedrock_server"])
def test_truncated_tool_arguments_reach_the_model_as_an_error(
    store: Store, make_engine: MakeEngine, request: pytest.FixtureRequest, server_name: str
) -> None:
    server = request.getfixturevalue(server_name)
    engine = make_engine(server)
    server.reply(tool_calls=[call("remember", '{"content": "The owner pays all invoi', id="t-1")])
    server.reply("Sorry, I could not save that.")
    events = run(engine.send("Please remember that I pay all invoices by card"))
    finished = next(e for e in events if isinstance(e, TurnFinished)).message
    assert finished.content == "Sorry, I could not save that."
    assert not [e for e in events if isinstance(e, MemorySaved)]
    assert engine.wait_idle(10)
    assert store.memories.list(status="active") == []
    assert [m.source.value for m in store.memories.list()] in ([], ["extraction"])


@pytest.mark.parametrize("server_name", ["openai_server", "bedrock_server"])
def test_a_megabyte_of_tool_arguments_is_refused_unread(
    store: Store, make_engine: MakeEngine, request: pytest.FixtureRequest, server_name: str
) -> None:
    server = request.getfixturevalue(server_name)
    engine = make_engine(server)
    huge = {"content": "The owner " + "x" * 1_048_576}
    server.reply(tool_calls=[call("remember", huge, id="t-1")])
    server.reply("That was too long to save.")
    events = run(engine.send("Please remember this"))
    finished = next(e for e in events if isinstance(e, TurnFinished)).message
    assert finished.content == "That was too long to save."
    assert not [e for e in events if isinstance(e, MemorySaved)]
    assert store.memories.list() == []
    stored = store.sessions.messages(session_of(events))
    [with_call] = [m for m in stored if m.tool_calls]
    assert len(with_call.tool_calls[0].arguments) < MAX_TOOL_ARGUMENT_CHARS
    [result] = [m for m in stored if m.role is MessageRole.TOOL]
    assert "too long" in result.content
    # The megabyte is not sent back to the model on the next round either.
    assert len(server.requests[-1].body) < 100_000


@pytest.mark.parametrize("server_name", ["openai_server", "bedrock_server"])
def test_a_call_to_an_unknown_tool_gets_an_error_result(
    store: Store, make_engine: MakeEngine, request: pytest.FixtureRequest, server_name: str
) -> None:
    server = request.getfixturevalue(server_name)
    engine = make_engine(server)
    server.reply(tool_calls=[call('delete_all_memories"}, {"x', {"really": True}, id="t-1")])
    server.reply("I cannot do that.")
    events = run(engine.send("Clean up please"))
    finished = next(e for e in events if isinstance(e, TurnFinished)).message
    assert finished.content == "I cannot do that."
    [result] = [
        m for m in store.sessions.messages(session_of(events)) if m.role is MessageRole.TOOL
    ]
    assert "there is no tool named" in json.loads(result.content)["error"]
    assert store.memories.list() == []


BEDROCK_GARBAGE = {
    "a frame that fails its checksum": eventstream.event(
        "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "X"}}
    )[:-4]
    + b"\0\0\0\0",
    "bytes that are not a frame": b"this is not an event-stream frame, just junk bytes!!",
    "an event of the wrong shape": eventstream.event(
        "contentBlockDelta", {"contentBlockIndex": "zero", "delta": 5}
    ),
    "text that is a number": eventstream.event(
        "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": 42}}
    ),
    "text that is an object": eventstream.event(
        "contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": {"a": 1}}}
    ),
}


@pytest.mark.parametrize("name", list(BEDROCK_GARBAGE))
def test_bedrock_damaged_frames_keep_the_partial_reply(
    store: Store, bedrock_server: BedrockServer, make_engine: MakeEngine, name: str
) -> None:
    engine = make_engine(bedrock_server)
    bedrock_server.misbehave(PARTIAL, garbage=[BEDROCK_GARBAGE[name]])
    events = run(engine.send(OWNER))
    failed = failed_turn(events)
    assert failed.error == "Bedrock sent a damaged reply; try again."
    assert failed.message is not None and failed.message.content == "Once "
    assert engine.wait_idle(10)
    nothing_kept_from_garbage(store)


@pytest.mark.parametrize(
    ("ending", "error"),
    [
        ("eof", "Bedrock stopped before the reply was complete; try again."),
        ("hangup", "The connection to Bedrock broke off in the middle of the reply; try again."),
    ],
)
def test_bedrock_stream_that_stops_early(
    store: Store, bedrock_server: BedrockServer, make_engine: MakeEngine, ending: str, error: str
) -> None:
    engine = make_engine(bedrock_server)
    bedrock_server.misbehave(
        PARTIAL,
        tool_calls=[call("remember", {"content": "The owner lives in Porto"})],
        ending=ending,  # type: ignore[arg-type]
    )
    events = run(engine.send(OWNER))
    failed = failed_turn(events)
    assert failed.error == error
    assert failed.message is not None and failed.message.content == PARTIAL
    assert engine.wait_idle(10)
    nothing_kept_from_garbage(store)


def test_timothy_chat_says_it_plainly_and_keeps_the_message(
    store: Store, openai_server: OpenAIServer
) -> None:
    save_settings(Settings(chat_provider="openai", openai=openai_server.settings()))
    openai_server.misbehave(PARTIAL, garbage=[b"data: {not json\n\n"])
    result = run_timothy("chat", "--new", OWNER)
    assert result.returncode == 1
    assert result.stdout == "Once \n"
    assert "The server sent a damaged reply; try again." in result.stderr
    assert "message was kept" in result.stderr
    assert not any(word in result.stderr for word in TECHNICAL[:5])
    [session] = store.sessions.list()
    assert [m.content for m in store.sessions.messages(session.id)] == [OWNER, "Once "]
    assert store.memories.list() == []


@pytest.mark.parametrize("kind", [["preference"], {"is": "semantic"}])
@pytest.mark.parametrize("server_name", ["openai_server", "bedrock_server"])
def test_a_remember_type_that_is_not_a_word_is_read_as_a_plain_fact(
    store: Store,
    make_engine: MakeEngine,
    request: pytest.FixtureRequest,
    server_name: str,
    kind: object,
) -> None:
    server = request.getfixturevalue(server_name)
    engine = make_engine(server)
    fact = {"content": "The owner's dentist is Dr Ana Lopes", "type": kind}
    server.reply(tool_calls=[call("remember", fact, id="t-1")])
    server.reply("Noted.")
    events = run(engine.send("Please remember that my dentist is Dr Ana Lopes"))
    finished = next(e for e in events if isinstance(e, TurnFinished)).message
    assert finished.content == "Noted."
    [saved] = [e for e in events if isinstance(e, MemorySaved)]
    memory = store.memories.get(saved.memory.id)
    assert (memory.content, memory.type.value) == (fact["content"], "semantic")
    [result] = [
        m for m in store.sessions.messages(session_of(events)) if m.role is MessageRole.TOOL
    ]
    assert json.loads(result.content)["status"] == "saved"


@pytest.mark.parametrize("server_name", ["openai_server", "bedrock_server"])
def test_fifty_remember_calls_for_one_fact_save_it_once(
    store: Store, make_engine: MakeEngine, request: pytest.FixtureRequest, server_name: str
) -> None:
    server = request.getfixturevalue(server_name)
    engine = make_engine(server)
    store.memories.add("The owner's sister Maria lives in Lisbon")
    fact = "The owner's dentist is Dr Ana Lopes"
    spellings = [fact, f"  {fact} ", fact.upper()]
    server.reply(
        tool_calls=[call("remember", {"content": spellings[n % 3]}, id=f"t-{n}") for n in range(50)]
    )
    server.reply("Noted.")
    events = run(engine.send("Please remember that my dentist is Dr Ana Lopes"))
    [saved] = [e for e in events if isinstance(e, MemorySaved)]  # one fact, one undo
    assert saved.memory.content == fact and not saved.staged
    assert [m.content for m in store.memories.list(status="active", text="dentist")] == [fact]
    results = [
        json.loads(m.content)
        for m in store.sessions.messages(session_of(events))
        if m.role is MessageRole.TOOL
    ]
    assert len(results) == 50
    assert {(r["saved"], r["id"]) for r in results} == {(True, saved.memory.id)}
    assert engine.wait_idle(10)
    # Later turns recall the fact once, beside the others, not fifty times over.
    server.reply("Dr Ana Lopes; Maria lives in Lisbon.")
    run(engine.send("Who is my dentist, and where does my sister Maria live?"))
    system = last_system_prompt(server)
    assert system.count("Dr Ana Lopes") == 1 and "Maria lives in Lisbon" in system


def last_system_prompt(server: OpenAIServer | BedrockServer) -> str:
    """The system prompt of the last streamed request, as one text."""
    if isinstance(server, OpenAIServer):
        streamed = [r for r in server.chat_requests if r.get("stream")]
        return str(streamed[-1]["messages"][0]["content"])
    system = server.requests_for("ConverseStream")[-1]["system"]
    return "\n\n".join(block["text"] for block in system if "text" in block)


@pytest.mark.parametrize("server_name", ["openai_server", "bedrock_server"])
@pytest.mark.parametrize(
    "ids",
    [("t-1", "t-1"), ('t 1"}', "t-2"), ("x" * 100, "t-2")],
    ids=["the same id twice", "an id with quotes", "an id of 100 characters"],
)
def test_tool_call_ids_a_vendor_refuses_never_break_later_turns(
    store: Store,
    make_engine: MakeEngine,
    request: pytest.FixtureRequest,
    server_name: str,
    ids: tuple[str, str],
) -> None:
    server = request.getfixturevalue(server_name)
    engine = make_engine(server)
    server.reply(
        tool_calls=[
            call("remember", {"content": "The owner's dentist is Dr Ana Lopes"}, id=ids[0]),
            call("remember", {"content": "The owner lives in Porto"}, id=ids[1]),
        ]
    )
    server.reply("Noted both.")
    events = run(engine.send("Please remember my dentist is Dr Ana Lopes and I live in Porto"))
    assert next(e for e in events if isinstance(e, TurnFinished)).message.content == "Noted both."
    assert len([e for e in events if isinstance(e, MemorySaved)]) == 2
    stored = store.sessions.messages(session_of(events))
    [with_calls] = [m for m in stored if m.tool_calls]
    kept_ids = [c.id for c in with_calls.tool_calls]
    results = [m.tool_call_id for m in stored if m.role is MessageRole.TOOL]
    assert len(set(kept_ids)) == 2 and results == kept_ids
    # Every later turn sends these calls back; the vendor must take them (Bedrock's fake
    # refuses ids and names Converse refuses, and an id used twice).
    assert engine.wait_idle(10)  # the title and extraction calls are answered first
    server.reply("Dr Ana Lopes, in Porto.")
    later = run(engine.send("Who is my dentist?", session_id=session_of(events)))
    assert next(e for e in later if isinstance(e, TurnFinished)).message.content == (
        "Dr Ana Lopes, in Porto."
    )
    assert engine.wait_idle(10)
    assert len(store.memories.list(status="active")) == 2


def test_a_tool_name_bedrock_refuses_never_breaks_later_turns(
    store: Store, bedrock_server: BedrockServer, make_engine: MakeEngine
) -> None:
    engine = make_engine(bedrock_server)
    bedrock_server.reply(tool_calls=[call('delete all"}, {"x', {"really": True}, id="t-1")])
    bedrock_server.reply("I cannot do that.")
    events = run(engine.send("Clean up please"))
    assert next(e for e in events if isinstance(e, TurnFinished)).message.content == (
        "I cannot do that."
    )
    assert engine.wait_idle(10)
    bedrock_server.reply("Hello again.")
    later = run(engine.send("Hello?", session_id=session_of(events)))
    assert not [e for e in later if isinstance(e, TurnFailed)]
    assert store.memories.list() == []


def test_an_id_used_again_in_a_later_round_is_made_new(
    store: Store, bedrock_server: BedrockServer, make_engine: MakeEngine
) -> None:
    engine = make_engine(bedrock_server)
    for fact in ("The owner's dentist is Dr Ana Lopes", "The owner lives in Porto"):
        bedrock_server.reply(tool_calls=[call("remember", {"content": fact}, id="call_0")])
    bedrock_server.reply("Noted both.")
    events = run(engine.send("Please remember my dentist is Dr Ana Lopes and I live in Porto"))
    assert next(e for e in events if isinstance(e, TurnFinished)).message.content == "Noted both."
    ids = [c.id for m in store.sessions.messages(session_of(events)) for c in m.tool_calls]
    assert len(ids) == len(set(ids)) == 2


@pytest.mark.parametrize("server_name", ["openai_server", "bedrock_server"])
@pytest.mark.parametrize("endless", [False, True], ids=["2 MB", "never ends"])
def test_a_reply_far_past_its_length_limit_is_cut_off_and_kept(
    store: Store,
    make_engine: MakeEngine,
    request: pytest.FixtureRequest,
    server_name: str,
    endless: bool,
) -> None:
    server = request.getfixturevalue(server_name)
    engine = make_engine(server)
    if endless:
        server.endless("All work and no play. " * 50)
    else:
        text = "word " * 400_000  # 2 MB, whatever max_tokens asked for
        # Sent as a server streams, a piece at a time: all at once, the whole 2 MB could sit
        # in the sockets' buffers before the cut, and no write of the server's would fail.
        server.reply(
            text, chunks=[text[i : i + 20_000] for i in range(0, len(text), 20_000)], interval=0.02
        )
    events = run(engine.send(OWNER))
    failed = failed_turn(events)
    assert failed.error == TOO_LONG_REPLY
    shown = "".join(e.text for e in events if isinstance(e, ReplyDelta))
    assert len(shown) == MAX_REPLY_CHARS
    kept = store.sessions.messages(session_of(events))
    assert [(m.role, m.status, m.content) for m in kept] == [
        (MessageRole.USER, MessageStatus.COMPLETE, OWNER),
        (MessageRole.ASSISTANT, MessageStatus.FAILED, shown),
    ]
    assert server.wait_for_disconnect(5)  # the connection was closed, not read to its end
    assert engine.wait_idle(10)
    nothing_kept_from_garbage(store)
    server.reply("Shorter now.")
    later = run(engine.send("Please be brief.", session_id=session_of(events)))
    assert next(e for e in later if isinstance(e, TurnFinished)).message.content == "Shorter now."


@pytest.mark.parametrize("server_name", ["openai_server", "bedrock_server"])
def test_an_empty_reply_after_a_tool_result_fails_plainly(
    store: Store, make_engine: MakeEngine, request: pytest.FixtureRequest, server_name: str
) -> None:
    server = request.getfixturevalue(server_name)
    engine = make_engine(server)
    fact = "The owner's dentist is Dr Ana Lopes"
    server.reply(tool_calls=[call("remember", {"content": fact}, id="t-1")])
    server.reply("")  # a finish reason and not one word after the tool's result
    events = run(engine.send("Please remember that my dentist is Dr Ana Lopes"))
    failed = failed_turn(events)
    assert failed.error == EMPTY_REPLY and failed.message is None
    assert [e.memory.content for e in events if isinstance(e, MemorySaved)] == [fact]
    kept = store.sessions.messages(session_of(events))
    assert [m.role for m in kept] == [MessageRole.USER, MessageRole.ASSISTANT, MessageRole.TOOL]
    assert engine.wait_idle(10)
    server.reply("Dr Ana Lopes.")
    later = run(engine.send("Who is my dentist?", session_id=session_of(events)))
    assert next(e for e in later if isinstance(e, TurnFinished)).message.content == "Dr Ana Lopes."
    assert [m.content for m in store.memories.list(status="active")] == [fact]


@pytest.mark.parametrize("server_name", ["openai_server", "bedrock_server"])
def test_a_model_that_calls_tools_forever_is_stopped_and_says_so(
    store: Store, make_engine: MakeEngine, request: pytest.FixtureRequest, server_name: str
) -> None:
    server = request.getfixturevalue(server_name)
    rounds = 3
    engine = make_engine(server, chat_settings=ChatSettings(max_tool_rounds=rounds))
    fact = "The owner's dentist is Dr Ana Lopes"
    server.reply(tool_calls=[call("remember", {"content": fact})], times=None)
    events = run(engine.send("Please remember that my dentist is Dr Ana Lopes"))
    failed = failed_turn(events)
    assert failed.error == TOOL_LOOP and failed.message is None
    assert len(server.chat_requests) == rounds + 1  # bounded: then the turn ends
    assert len([e for e in events if isinstance(e, MemorySaved)]) == 1  # saved once
    kept = store.sessions.messages(session_of(events))
    assert [m.role for m in kept] == [MessageRole.USER] + [
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
    ] * rounds
    assert engine.wait_idle(10)
    server.script.clear()
    server.reply("Dr Ana Lopes.")
    later = run(engine.send("Who is my dentist?", session_id=session_of(events)))
    assert next(e for e in later if isinstance(e, TurnFinished)).message.content == "Dr Ana Lopes."
    assert [m.content for m in store.memories.list(status="active")] == [fact]


def test_a_conversation_saved_with_ids_bedrock_refuses_goes_on_unchanged(
    store: Store, bedrock_server: BedrockServer, make_engine: MakeEngine
) -> None:
    # Saved before the engine made ids sendable: an id with quotes, one id used twice (its
    # two results answering in order), one of 100 characters, and a name with a quote.
    bad = ['t 1"}', "t-1", "t-1", "x" * 100]
    session = store.sessions.create(title="Older")
    store.sessions.add_message(session.id, "user", "Remember these please")
    store.sessions.add_message(
        session.id,
        "assistant",
        "",
        tool_calls=[
            StoredToolCall(bad[0], 'remember"', '{"content": "The owner lives in Porto"}'),
            StoredToolCall(bad[1], "remember", '{"content": "The owner has a cat"}'),
        ],
    )
    store.sessions.add_message(session.id, "tool", "saved Porto", tool_call_id=bad[0])
    store.sessions.add_message(session.id, "tool", "saved cat", tool_call_id=bad[1])
    store.sessions.add_message(
        session.id,
        "assistant",
        "",
        tool_calls=[
            StoredToolCall(bad[2], "remember", '{"content": "The cat is Miso"}'),
            StoredToolCall(bad[3], "remember", '{"content": "The owner likes tea"}'),
        ],
    )
    store.sessions.add_message(session.id, "tool", "saved Miso", tool_call_id=bad[2])
    store.sessions.add_message(session.id, "tool", "saved tea", tool_call_id=bad[3])
    store.sessions.add_message(session.id, "assistant", "Noted all four.")
    before = store.sessions.messages(session.id)

    engine = make_engine(bedrock_server)
    bedrock_server.reply("Your cat is Miso.")
    events = run(engine.send("What is my cat called?", session_id=session.id))
    assert not [e for e in events if isinstance(e, TurnFailed)]
    assert next(e for e in events if isinstance(e, TurnFinished)).message.content == (
        "Your cat is Miso."
    )
    # Sent: every id and name one Converse takes, each result with its own call's id.
    sent = bedrock_server.requests_for("ConverseStream")[0]["messages"]
    uses = [b["toolUse"] for m in sent for b in m["content"] if "toolUse" in b]
    results = [b["toolResult"] for m in sent for b in m["content"] if "toolResult" in b]
    assert [u["name"] for u in uses] == ["remember_", "remember", "remember", "remember"]
    assert len({u["toolUseId"] for u in uses}) == 4
    assert [r["toolUseId"] for r in results] == [u["toolUseId"] for u in uses]
    assert [r["content"][0]["text"] for r in results] == [
        "saved Porto",
        "saved cat",
        "saved Miso",
        "saved tea",
    ]
    assert uses[1]["toolUseId"] == "t-1"  # a good id goes as it is
    # The stored conversation keeps what it held.
    assert engine.wait_idle(10)
    after = store.sessions.messages(session.id)
    assert [(m.id, m.tool_calls, m.tool_call_id) for m in after[: len(before)]] == [
        (m.id, m.tool_calls, m.tool_call_id) for m in before
    ]
