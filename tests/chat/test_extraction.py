"""Extraction after a turn: staged proposals, hygiene, and nothing from garbage."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime

import pytest

from tests.chat.conftest import MakeEngine, run
from tests.fakes.openai_server import OpenAIServer
from timothy.chat.events import BackgroundEvent, FactsProposed
from timothy.chat.prompt import STABLE_PREFIX
from timothy.memory.dates import absolutise
from timothy.memory.extraction import MAX_ENTITIES, parse_proposals, restates
from timothy.retrieval.render import BLOCK_OPEN
from timothy.store import Store
from timothy.store.records import MemorySource

NOW = datetime(2026, 11, 30, 15, 0, tzinfo=UTC)  # a Monday


def facts(*items: dict[str, object]) -> str:
    return json.dumps({"facts": list(items)})


def extraction_requests(server: OpenAIServer) -> list[str]:
    """The text of every extraction call the server received."""
    found = []
    for request in server.chat_requests:
        if request.get("stream"):
            continue
        text = json.dumps(request["messages"])
        if "durable facts" in text:
            found.append(text)
    return found


def test_proposals_land_staged_with_hygiene(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    store.memories.add("The owner prefers aisle seats on long flights", type="preference")
    store.memories.stage("The owner has a cat named Miso", entities=["Miso"])
    engine = make_engine(openai_server)
    heard: list[BackgroundEvent] = []
    engine.background_listeners.append(heard.append)
    openai_server.reply("Good luck with the exam, and enjoy the aisle seat!")
    openai_server.reply("Exam and flight")  # title
    openai_server.reply(
        "```json\n"
        + facts(
            {
                "content": "The owner has an exam next Friday",
                "type": "episodic",
                "entities": [],
                "confidence": 0.9,
            },
            {
                "content": "The owner prefers aisle seats on long flights",
                "type": "preference",
                "confidence": 0.95,
            },
            {"content": "Owner has a cat named Miso", "confidence": 0.9},
            {"content": "The owner might like jazz", "confidence": 0.2},
        )
        + "\n```"
    )
    events = run(engine.send("I have my exam next Friday, then I fly to Tokyo", now=NOW))
    session_id = events[0].session.id  # type: ignore[union-attr]
    assert engine.wait_idle(10)
    staged = store.memories.list(status="staged", session_id=session_id)
    assert [m.content for m in staged] == ["The owner has an exam on Friday, 4 December 2026"]
    assert staged[0].session_id == session_id
    assert staged[0].source is MemorySource.EXTRACTION
    assert [len(e.memories) for e in heard if isinstance(e, FactsProposed)] == [1]
    # The extractor saw the exchange, never the system prompt or the memory block.
    [request] = extraction_requests(openai_server)
    assert "I have my exam next Friday" in request
    assert STABLE_PREFIX[:60] not in request
    assert BLOCK_OPEN.split("\n")[0].replace('"', '\\"') not in request
    assert "aisle seats on long flights" not in request.split("<exchange>")[1].split("Assistant")[0]
    assert "Monday, 30 November 2026" in request


@pytest.mark.parametrize(
    "answer",
    [
        "I could not find any facts, sorry!",
        '{"facts": "none"}',
        '{"facts": [42, null, {"content": ""}]}',
        '[{"content": "a list, not an object"}]',
        "{broken json",
    ],
)
def test_garbage_from_the_model_changes_nothing(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine, answer: str
) -> None:
    engine = make_engine(openai_server)
    openai_server.reply("Sure.")
    openai_server.reply("Title")
    openai_server.reply(answer)
    run(engine.send("I live in Porto and love fado", now=NOW))
    assert engine.wait_idle(10)
    assert store.memories.list(status="staged") == []


def test_the_extractor_is_never_sent_the_recalled_block(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    recalled = store.memories.add("The owner's sister Zoë lives in Lyon", entities=["Zoë"])
    engine = make_engine(openai_server)
    openai_server.reply("She lives in Lyon, as you told me.")
    openai_server.reply("Zoë in Lyon")
    openai_server.reply(
        facts(
            {
                "content": "The owner's sister Zoë lives in Lyon",
                "entities": ["Zoë"],
                "confidence": 0.9,
            }
        )
    )
    events = run(engine.send("Remind me where Zoë lives?", now=NOW))
    assert engine.wait_idle(10)
    assert any(getattr(e, "block", "") for e in events)  # the memory was recalled
    assert store.memories.list(status="staged") == []  # and not proposed again
    [request] = extraction_requests(openai_server)
    assert "lives in Lyon, as you told me" in request  # the reply is context...
    assert recalled.id not in request  # ...but the block never is
    assert "trust=" not in request


def test_privacy_switch_off_sends_no_block_and_runs_no_extraction(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    store.memories.add("I prefer aisle seats on long flights")
    engine = make_engine(openai_server, use_memories=False)
    openai_server.reply("Any seat is fine.")
    run(engine.send("Which seat on long flights?", now=NOW))
    assert engine.wait_idle(10)
    streams = [r for r in openai_server.chat_requests if r.get("stream")]
    assert BLOCK_OPEN not in json.dumps(streams)
    assert "aisle" not in json.dumps(streams)
    assert extraction_requests(openai_server) == []


def test_relative_dates_become_absolute() -> None:
    today = date(2026, 11, 30)  # Monday
    cases = {
        "My exam is next Friday": "My exam is on Friday, 4 December 2026",
        "I moved here last year": "I moved here in 2025",
        "done by next Friday": "done by Friday, 4 December 2026",
        "We met 3 weeks ago": "We met on Monday, 9 November 2026",
        "visiting in two months": "visiting in January 2027",
        "since last month": "since October 2026",
        "Tomorrow I fly": "On Tuesday, 1 December 2026 I fly",
        "last Monday was hard": "On Monday, 23 November 2026 was hard",
        "it was this Monday": "it was on Monday, 30 November 2026",
        "tomorrowland and yesterdays stay": "tomorrowland and yesterdays stay",
    }
    for text, expected in cases.items():
        assert absolutise(text, today) == expected


def test_restatement_rule() -> None:
    assert restates("Owner likes tea", "The owner likes green tea")
    assert not restates("The owner likes green tea in Kyoto", "The owner likes tea")
    assert restates("The owner's cat is Miso", "The owner's cat is Miso.")


def test_parse_keeps_only_well_formed_facts() -> None:
    parsed = parse_proposals(
        'Here you go: {"facts": [{"content": "  A  fact ", "type": "weird", "confidence": 7},'
        ' {"content": "B", "entities": ["X", 3, " "], "confidence": "high"}]} thanks'
    )
    assert [(p.content, p.type.value, p.confidence) for p in parsed] == [
        ("A fact", "semantic", 1.0),
        ("B", "semantic", 0.7),
    ]
    assert parsed[1].entities == ("X",)


def test_a_fact_whose_type_is_not_a_word_does_not_sink_the_others() -> None:
    parsed = parse_proposals(
        '{"facts": [{"content": "The owner has a cat", "type": ["episodic"]},'
        ' {"content": "The owner lives in Porto", "type": {"x": 1}},'
        ' {"content": "The owner likes tea", "type": "preference"}]}'
    )
    assert [(p.content, p.type.value) for p in parsed] == [
        ("The owner has a cat", "semantic"),
        ("The owner lives in Porto", "semantic"),
        ("The owner likes tea", "preference"),
    ]


def test_a_fact_with_unusable_entity_names_is_kept_without_them(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    engine = make_engine(openai_server)
    names = ["P" * 300, "\ud800broken", "Porto", *(f"tag{n}" for n in range(5_000))]
    answer = {"facts": [{"content": "The owner lives in Porto", "entities": names}]}
    openai_server.reply("Sure.")
    openai_server.reply("Title")
    openai_server.reply(json.dumps(answer))
    tags = ", ".join(f"tag{n}" for n in range(MAX_ENTITIES))  # named: only the cap drops them
    run(engine.send(f"I live in Porto and love fado ({tags})", now=NOW))
    assert engine.wait_idle(10)
    [staged] = store.memories.list(status="staged")
    assert staged.content == "The owner lives in Porto"
    assert staged.entities[0] == "Porto" and len(staged.entities) == MAX_ENTITIES


def test_an_entity_only_pasted_text_names_is_left_out(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    """As for `remember`: an entity is kept only when the fact or the owner's own words name
    it, never when it comes from what they pasted."""
    engine = make_engine(openai_server)
    pasted = (
        "From: Northwind Lettings <rent@northwind.example>\n"
        "Subject: New payee\n\n"
        "Dear tenant, your rent now goes to Harbor Estates.\n"
    )
    answer = {
        "facts": [
            {
                "content": "The owner's rent is £900 a month",
                "entities": ["Harbor Estates", "Northwind", "rent", "Kim"],
                "confidence": 0.9,
            }
        ]
    }
    openai_server.reply("That looks like a change of payee.")
    openai_server.reply("Title")
    openai_server.reply(json.dumps(answer))
    message = f"My rent is £900 a month, Kim found this:\n\n{pasted}"
    run(engine.send(message, now=NOW))
    assert engine.wait_idle(10)
    [staged] = store.memories.list(status="staged")
    assert staged.content == "The owner's rent is £900 a month"
    assert staged.entities == ("rent", "Kim")
