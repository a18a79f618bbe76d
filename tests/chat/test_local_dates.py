"""Dates in the owner's time zone: what the chat prompt says, what extraction is told, and
what "tomorrow" becomes when stored, all agree with the owner's own calendar.

The slip this guards against: at 03:00 UTC on Tuesday 1 December, five hours west of UTC it
is still Monday 30 November. The chat prompt said Monday, extraction said Tuesday, and
"tomorrow" was stored as 2 December.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

from tests.chat.conftest import MakeEngine, run
from tests.conftest import run_timothy
from tests.fakes.openai_server import OpenAIServer
from tests.fakes.script import call
from timothy.chat.events import MemorySaved
from timothy.chat.settings import ChatSettings
from timothy.memory.dates import local_date
from timothy.settings import Settings, save_settings
from timothy.store import Store
from timothy.store.records import MemoryStatus

WEST_5 = timezone(timedelta(hours=-5))
LATE_MONDAY = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)  # Monday 30 November, 22:00 west
EXAM_TOMORROW = json.dumps(
    {"facts": [{"content": "The owner has an exam tomorrow", "confidence": 0.9}]}
)


def extraction_texts(server: OpenAIServer) -> list[str]:
    return [
        json.dumps(r["messages"])
        for r in server.chat_requests
        if not r.get("stream") and "durable facts" in json.dumps(r["messages"])
    ]


def chat_system(server: OpenAIServer) -> str:
    streams = [r for r in server.chat_requests if r.get("stream")]
    return str(streams[-1]["messages"][0]["content"])


def test_the_owners_date_is_the_one_local_date() -> None:
    assert local_date(LATE_MONDAY, WEST_5).isoformat() == "2026-11-30"
    assert local_date(LATE_MONDAY, UTC).isoformat() == "2026-12-01"


def test_prompt_extraction_and_stored_dates_agree_west_of_utc(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    engine = make_engine(openai_server, tz=WEST_5)
    openai_server.reply("Good luck tomorrow!")
    openai_server.reply("Exam tomorrow")  # the title
    openai_server.reply(EXAM_TOMORROW)
    run(engine.send("I have my exam tomorrow", now=LATE_MONDAY))
    assert engine.wait_idle(10)

    assert "Current date and time: Monday, 30 November 2026, 22:00" in chat_system(openai_server)
    [extraction] = extraction_texts(openai_server)
    assert "Today is Monday, 30 November 2026" in extraction
    assert "1 December" not in extraction
    [staged] = store.memories.list(status="staged")
    assert staged.content == "The owner has an exam on Tuesday, 1 December 2026"


def test_a_remembered_tomorrow_is_the_owners_tomorrow(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    engine = make_engine(openai_server, tz=WEST_5)
    openai_server.reply(
        tool_calls=[call("remember", {"content": "The owner has a dentist appointment tomorrow"})]
    )
    openai_server.reply("Noted.")
    events = run(
        engine.send("Please remember that my dentist appointment is tomorrow", now=LATE_MONDAY)
    )
    [saved] = [e for e in events if isinstance(e, MemorySaved)]
    assert saved.staged is False
    memory = store.memories.get(saved.memory.id)
    assert memory.status is MemoryStatus.ACTIVE
    assert memory.content == "The owner has a dentist appointment on Tuesday, 1 December 2026"


def test_compaction_counts_relative_dates_from_the_day_they_were_said(
    store: Store, openai_server: OpenAIServer, make_engine: MakeEngine
) -> None:
    """Turns said on Monday evening (local) and compacted on Thursday: "tomorrow" in them is
    still Tuesday 1 December, as it was when the owner said it."""
    settings = ChatSettings(keep_recent_messages=2)
    engine = make_engine(openai_server, tz=WEST_5, chat_settings=settings)
    engine.policy = engine.policy.__class__(extraction_enabled=False)  # only compaction's
    openai_server.reply("Good luck!")
    events = run(engine.send("My exam is tomorrow", now=LATE_MONDAY))
    session_id = events[0].session.id  # type: ignore[union-attr]
    openai_server.reply("Sure.")
    run(engine.send("Thanks", session_id=session_id, now=LATE_MONDAY + timedelta(days=3)))
    assert engine.wait_idle(10)
    engine.policy = engine.policy.__class__(extraction_enabled=True)

    openai_server.reply(EXAM_TOMORROW)
    openai_server.reply("The owner mentioned an exam.")  # the summary
    compacted = engine.compact(session_id, now=LATE_MONDAY + timedelta(days=3))
    assert compacted is not None
    [extraction] = extraction_texts(openai_server)
    assert "Today is Monday, 30 November 2026" in extraction
    [staged] = store.memories.list(status="staged")
    assert staged.content == "The owner has an exam on Tuesday, 1 December 2026"


def test_timothy_chat_uses_the_machines_zone(store: Store, openai_server: OpenAIServer) -> None:
    """The CLI, as the slip was found: `timothy chat` with TZ five hours west."""
    save_settings(Settings(chat_provider="openai", openai=openai_server.settings()))
    openai_server.reply("Good luck tomorrow!")
    openai_server.reply("Exam tomorrow")  # the title
    openai_server.reply(EXAM_TOMORROW)
    result = run_timothy(
        "chat",
        "--new",
        "--now",
        "2026-12-01T03:00:00Z",
        "I have my exam tomorrow",
        env={"TZ": "XST+5"},  # POSIX: a zone called XST, five hours west of UTC
    )
    assert result.returncode == 0, result.stderr
    assert "Current date and time: Monday, 30 November 2026, 22:00 (XST)" in chat_system(
        openai_server
    )
    [extraction] = extraction_texts(openai_server)
    assert "Today is Monday, 30 November 2026" in extraction
    [staged] = store.memories.list(status="staged")
    assert staged.content == "The owner has an exam on Tuesday, 1 December 2026"
