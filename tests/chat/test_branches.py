"""Edit and resend, reply versions, temporary chats, per-reply usage and per-conversation
instructions, through the engine against the fake servers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.chat.conftest import MakeEngine, run
from tests.fakes.bedrock_server import BedrockServer
from tests.fakes.openai_server import OpenAIServer
from tests.fakes.script import call
from timothy.chat.engine import TEMPORARY_NOTE
from timothy.chat.events import RecallFinished, TurnFinished, TurnStarted
from timothy.chat.prompt import INSTRUCTIONS_INTRO, STABLE_PREFIX
from timothy.chat.transcript import transcript
from timothy.store.engine import StoreEngine
from timothy.store.records import MemoryStatus
from timothy.store.scratch import scratch_sessions


def streamed(server: OpenAIServer) -> list[dict[str, Any]]:
    return [r for r in server.chat_requests if r.get("stream")]


def said(request: dict[str, Any]) -> list[str]:
    return [str(m["content"]) for m in request["messages"] if m["role"] != "system"]


def started(events: list[object]) -> TurnStarted:
    first = events[0]
    assert isinstance(first, TurnStarted)
    return first


def finished(events: list[object]) -> TurnFinished:
    last = events[-1]
    assert isinstance(last, TurnFinished), last
    return last


def test_an_edit_is_answered_from_its_own_branch_and_the_old_one_is_kept(
    store: StoreEngine, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    engine = make_engine(openai_server, use_memories=False)
    openai_server.reply("Paris is lovely.")
    session = started(run(engine.send("Plan a weekend in Paris"))).session
    assert engine.wait_idle(10)  # the title is written in the background
    openai_server.reply("Take the train.")
    second = run(engine.send("How do I get there?", session_id=session.id))
    question = started(second).user_message

    openai_server.reply("Rome by plane, then.")
    edited = run(engine.edit(session.id, question.id, "How do I get to Rome instead?"))
    assert finished(edited).message.content == "Rome by plane, then."
    # the model saw the new branch only: the old question and its answer are not there
    assert said(streamed(openai_server)[-1]) == [
        "Plan a weekend in Paris",
        "Paris is lovely.",
        "How do I get to Rome instead?",
    ]
    shown = transcript(store, session.id)
    assert [m.content for m in shown] == [
        "Plan a weekend in Paris",
        "Paris is lovely.",
        "How do I get to Rome instead?",
        "Rome by plane, then.",
    ]
    assert shown[2].versions == (question.id, started(edited).user_message.id)
    assert shown[2].version == 1
    assert shown[0].versions == ()
    # switching back shows the first branch whole, and the next turn follows it
    store.sessions.select_branch(session.id, question.id)
    assert [m.content for m in transcript(store, session.id)][-2:] == [
        "How do I get there?",
        "Take the train.",
    ]
    openai_server.reply("About two hours.")
    run(engine.send("How long is it?", session_id=session.id))
    assert said(streamed(openai_server)[-1])[-3:] == [
        "How do I get there?",
        "Take the train.",
        "How long is it?",
    ]


def test_regenerate_adds_a_version_and_keeps_the_earlier_reply(
    store: StoreEngine, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    engine = make_engine(openai_server, use_memories=False)
    openai_server.reply("First try.")
    session = started(run(engine.send("Name a colour"))).session
    assert engine.wait_idle(10)
    openai_server.reply("Second try.")
    again = run(engine.regenerate(session.id))
    assert finished(again).message.content == "Second try."
    assert said(streamed(openai_server)[-1]) == ["Name a colour"]
    shown = transcript(store, session.id)
    assert [m.content for m in shown] == ["Name a colour", "Second try."]
    assert len(shown[1].versions) == 2 and shown[1].version == 1
    store.sessions.select_branch(session.id, shown[1].versions[0])
    shown = transcript(store, session.id)
    assert [m.content for m in shown] == ["Name a colour", "First try."]
    assert shown[1].version == 0


def test_a_regenerated_reply_that_fails_empty_leaves_the_earlier_one(
    store: StoreEngine, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    engine = make_engine(openai_server, use_memories=False)
    openai_server.reply("Kept.")
    session = started(run(engine.send("Say something"))).session
    assert engine.wait_idle(10)
    openai_server.fail(400, message="Bad request.")
    run(engine.regenerate(session.id))
    assert [m.content for m in transcript(store, session.id)] == ["Say something", "Kept."]


def test_a_temporary_chat_recalls_nothing_offers_no_tool_and_stays_out_of_the_store(
    store: StoreEngine, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    store.memories.add("My cat is called Miso", type="semantic")
    engine = make_engine(openai_server)
    scratch = scratch_sessions()
    openai_server.reply("I cannot recall anything here.")
    events = run(engine.send("What is my cat called?", scratch=scratch))
    recall = next(e for e in events if isinstance(e, RecallFinished))
    assert recall.block == "" and recall.note == TEMPORARY_NOTE
    session = started(events).session
    openai_server.reply("", tool_calls=[call("remember", {"content": "The owner has a dog"})])
    openai_server.reply("Noted nowhere.")
    run(engine.send("Remember that I have a dog", session_id=session.id, scratch=scratch))
    assert engine.wait_idle(10)
    requests = openai_server.chat_requests
    assert all(r.get("stream") for r in requests)  # no title, no extraction
    assert all("tools" not in r for r in requests)
    assert "Miso" not in str(requests)
    assert store.sessions.list() == []
    assert [m.content for m in store.memories.list(status=MemoryStatus.STAGED)] == []
    assert len(store.memories.list(status=MemoryStatus.ACTIVE)) == 1
    assert [m.content for m in transcript(store, session.id, scratch)] == [
        "What is my cat called?",
        "I cannot recall anything here.",
        "Remember that I have a dog",
        "Noted nowhere.",
    ]


def test_usage_and_speed_are_stored_with_the_reply(
    store: StoreEngine, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    engine = make_engine(openai_server, use_memories=False)
    openai_server.reply("one two three four", usage=(120, 40, 0), interval=0.05)
    reply = finished(run(engine.send("Count to four"))).message
    stored = store.sessions.message(reply.id)
    assert (stored.input_tokens, stored.output_tokens) == (120, 40)
    assert stored.model == openai_server.settings().chat_model
    assert stored.reply_ms is not None and stored.reply_ms >= 100
    assert stored.tokens_per_second is not None and 0 < stored.tokens_per_second <= 400
    shown = transcript(store, reply.session_id)[-1]
    assert (shown.input_tokens, shown.output_tokens, shown.model) == (120, 40, stored.model)


def test_bedrock_usage_from_the_stream_metadata_is_stored(
    store: StoreEngine, bedrock_server: BedrockServer, make_engine: MakeEngine
) -> None:
    engine = make_engine(bedrock_server, use_memories=False)
    bedrock_server.reply("Hello there, owner.", usage=(77, 9, 0))
    reply = finished(run(engine.send("Hi"))).message
    stored = store.sessions.message(reply.id)
    assert (stored.input_tokens, stored.output_tokens) == (77, 9)
    assert stored.model == "us.amazon.nova-lite-v1:0"


def test_instructions_follow_the_prefix_which_stays_byte_identical(
    store: StoreEngine, openai_server: OpenAIServer, make_engine: MakeEngine, tmp_path: Path
) -> None:
    engine = make_engine(openai_server, use_memories=False)
    openai_server.reply("Oui.", times=2)
    run(engine.send("Bonjour", instructions="Answer in French only."))
    assert engine.wait_idle(10)
    run(engine.send("Hello", instructions="Answer like a pirate."))
    assert engine.wait_idle(10)
    first, second = (r["messages"][0]["content"] for r in streamed(openai_server))
    assert first[: len(STABLE_PREFIX)].encode() == second[: len(STABLE_PREFIX)].encode()
    assert first.startswith(STABLE_PREFIX + "\n\n" + INSTRUCTIONS_INTRO + "\nAnswer in French")
    assert "Answer like a pirate." in second and "pirate" not in first
    session = store.sessions.list()[0]
    assert store.sessions.get(session.id).instructions in (
        "Answer in French only.",
        "Answer like a pirate.",
    )


class ReplyLandsMidRead:
    """The store's conversations, with a turn's reply written by another connection right
    after the first read a caller makes: the moment a transcript read can race a turn."""

    def __init__(self, store: StoreEngine, session_id: str, question_id: str) -> None:
        self.sessions = store.sessions
        self.session_id = session_id
        self.question_id = question_id
        self.landed = False

    def _land(self) -> None:
        if not self.landed:
            self.landed = True
            self.sessions.add_message(
                self.session_id, "assistant", "Porto, usually.", parent_id=self.question_id
            )

    def get(self, session_id: str) -> Any:
        found = self.sessions.get(session_id)
        self._land()
        return found

    def messages(self, session_id: str) -> Any:
        found = self.sessions.messages(session_id)
        self._land()
        return found


def test_a_reply_written_while_the_transcript_is_read_never_empties_it(
    store: StoreEngine,
) -> None:
    session = store.sessions.create(title="Porto")
    store.sessions.add_message(session.id, "user", "Tell me about Porto")
    store.sessions.add_message(session.id, "assistant", "A city on the Douro.")
    question = store.sessions.add_message(session.id, "user", "Which is cheaper?")
    racing = ReplyLandsMidRead(store, session.id, question.id)
    shown = transcript(store, session.id, racing)  # type: ignore[arg-type]
    assert racing.landed
    # Read as the conversation stood before the reply, or after it: never as nothing.
    assert [m.content for m in shown][:3] == [
        "Tell me about Porto",
        "A city on the Douro.",
        "Which is cheaper?",
    ]
    assert [m.content for m in transcript(store, session.id)][-1] == "Porto, usually."
