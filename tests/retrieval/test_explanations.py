"""The floors' sentences ("why") are written when first read, and read as they always were.

explanations.json holds what each floor said before the sentences were written lazily:
every kind of verdict, its sentence and its JSON (what a turn's record keeps and the Last
recall view shows) must stay word for word the same.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from timothy.retrieval.floor import (
    Background,
    BelowFloor,
    entity_verdicts,
    second_opinion,
    text_verdicts,
    vector_verdicts,
    vouch_for_named,
)
from timothy.retrieval.settings import RecallSettings
from timothy.store.records import (
    LegVerdict,
    Memory,
    MemorySource,
    MemoryStatus,
    MemoryType,
    RecallRecord,
)
from timothy.store.search import TextHits

EXPECTED = Path(__file__).with_name("explanations.json")


def cases() -> dict[str, Any]:
    s = RecallSettings()
    off = replace(s, relevance_floor=False)
    bg = Background(
        "m",
        ("The weather is nice today.", "I like turtles.", "Numbers go up."),
        np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]]),
    )
    q = [0.6, 0.5, 0.4]
    hits = [("a", 0.95), ("b", 0.5), ("c", 0.12345)]
    out: dict[str, Any] = {}
    out["vector"] = vector_verdicts(hits, q, bg, s)
    out["vector_off"] = vector_verdicts(hits, q, bg, off)
    out["vector_pending"] = vector_verdicts(hits, q, None, s, pending=True)
    out["vector_nobg"] = vector_verdicts(hits, q, None, s)
    th = TextHits(
        ["a", "d", "e"],
        {"a": ("adoption", "agency"), "d": ("agency",), "e": ()},
        {"adoption": 1, "agency": 3},
        40,
    )
    out["text"] = text_verdicts(th, s)
    out["text_personal"] = text_verdicts(th, s, personal=True)
    out["text_off"] = text_verdicts(th, off)
    th2 = TextHits(["f"], {"f": ("today",)}, {"today": 30}, 40)
    out["text_none"] = text_verdicts(th2, s)
    out["second"] = second_opinion(out["text"], out["vector"], s)
    now = datetime(2025, 1, 1, tzinfo=UTC)
    mem = {
        i: Memory(
            id=i,
            type=MemoryType.EPISODIC,
            content="x",
            status=MemoryStatus.ACTIVE,
            confidence=1.0,
            source=MemorySource.IMPORT,
            session_id=None,
            supersedes=None,
            superseded_by=None,
            created_at=now,
            last_confirmed_at=now,
            last_retrieved_at=None,
            entities=("Caroline Smith",),
        )
        for i in "abcdef"
    }
    out["vouched_text"] = vouch_for_named(out["second"], mem, ["caroline smith"])
    out["vouched_vector"] = vouch_for_named(out["vector"], mem, ["Caroline Smith"])
    out["entity"] = entity_verdicts(["a", "b"])
    out["below"] = {
        i: BelowFloor(mem[i], {"vector": out["vector"][i], "text": out["text_none"]["f"]})
        for i in ["c"]
    }
    return out


def shown(out: dict[str, Any]) -> dict[str, Any]:
    res = {}
    for k, v in out.items():
        if k == "below":
            res[k] = {i: [b.reason, b.to_json()] for i, b in v.items()}
        else:
            res[k] = {i: [x.why, x.to_json()] for i, x in v.items()}
    return res


def test_every_verdict_reads_as_before() -> None:
    assert shown(cases()) == json.loads(EXPECTED.read_text(encoding="utf-8"))


def test_a_sentence_is_written_once_when_first_read() -> None:
    written: list[str] = []

    def write() -> str:
        written.append("x")
        return "the reason"

    verdict = LegVerdict("text", 1, True, 1.0, 0.5, write)
    assert written == []
    assert verdict.why == "the reason" and verdict.why == "the reason"
    assert written == ["x"]
    assert verdict.reason == "the reason"


def test_a_lazy_verdict_is_stored_and_read_back_as_a_written_one() -> None:
    """What a turn stores and reads back says what recall's verdict said."""
    for verdicts in cases().values():
        for verdict in verdicts.values():
            floors = verdict.floors if isinstance(verdict, BelowFloor) else {"x": verdict}
            for one in floors.values():
                stored = json.loads(json.dumps(one.to_json()))
                again = LegVerdict.from_json(one.leg, stored)
                assert again.why == one.why
                assert again.to_json() == stored
                written = replace(one, reason=one.why)
                assert written == one and written.to_json() == one.to_json()


def test_a_record_round_trips_with_its_sentences() -> None:
    made = cases()
    record = RecallRecord(
        block="",
        tokens=0,
        budget=1000,
        items=(),
        ranked=(),
        legs={"vector": "ok", "text": "ok", "entity": "ok"},
        elapsed_ms=1.0,
        below_floor=tuple(b.recalled() for b in made["below"].values()),
    )
    stored = json.loads(json.dumps(record.to_json()))
    again = RecallRecord.from_json(stored)
    assert again.to_json() == stored
    assert again.below_floor[0].reason == made["below"]["c"].reason
