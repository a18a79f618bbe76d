"""The relevance floor: each leg admits a hit only on evidence, for any embedding model."""

from __future__ import annotations

import dataclasses
import itertools
import json
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import run_timothy
from tests.fakes.embedder import HashingEmbedder
from timothy.errors import InvalidInputError
from timothy.memory.embedding import backfill
from timothy.providers.base import EmbeddingProvider
from timothy.providers.local import LocalEmbedder
from timothy.retrieval import Recaller, RecallResult, RecallSettings
from timothy.retrieval.background import BACKGROUND
from timothy.retrieval.floor import _rejudged, english_weight, store_weight, term_weight
from timothy.store import Store
from timothy.store.records import LegVerdict

NOW = datetime(2026, 1, 15, tzinfo=UTC)

FACTS = [
    "The owner is allergic to penicillin; it gave them hives as a child.",
    "The owner's dentist is Dr. Ana Lopes; the next check-up is in June.",
    "The owner plays bass guitar in a covers band.",
    "The owner's mortgage is fixed at 4.1% until November 2026.",
    "The family has a ginger cat, aged 7.",
    "The owner is training for the Manchester Marathon in April.",
    "The owner keeps an allotment with tomatoes and runner beans.",
    "The owner's passport expires in August 2027.",
]
# Each on-topic question needs FACTS[index] and shares no word with it: only the vector leg
# can find it.
ON_TOPIC = [
    ("Can I take amoxicillin for this ear infection?", 0),
    ("Who should I see about my cracked tooth?", 1),
    ("What instrument do I perform with?", 2),
    ("When does my home loan rate end?", 3),
]
OFF_TOPIC = [
    "Hello there, how are you today?",
    "What is the capital of Australia?",
    "Write a haiku about the sea.",
    "ok",
]


class CompressedEmbedder:
    """Another vector space with another similarity scale: MiniLM's vectors projected at
    random into 1,024 dimensions and pushed towards one common direction, so every cosine
    bunches up near 0.9 (as with some production models). Not a rescaling of MiniLM's
    cosines: the projection moves each pair's similarity by its own amount."""

    def __init__(self, inner: EmbeddingProvider) -> None:
        self.inner = inner
        self.model_id = "test/compressed-1024"
        self.dimension = 1024
        rng = np.random.default_rng(7)
        self.projection = rng.normal(size=(1024, inner.dimension)) / np.sqrt(1024)
        common = rng.normal(size=1024)
        self.common = common / np.linalg.norm(common)

    def _squeeze(self, vectors: Sequence[Sequence[float]]) -> list[list[float]]:
        rows = np.asarray(vectors, dtype=np.float64) @ self.projection.T
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        rows = rows + 2.5 * self.common
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        return [list(map(float, row)) for row in rows]

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._squeeze(self.inner.embed(texts))

    def embed_query(self, text: str) -> list[float]:
        return self._squeeze([self.inner.embed_query(text)])[0]


@pytest.fixture(scope="module")
def minilm() -> LocalEmbedder:
    return LocalEmbedder()


def fill(store: Store, embedder: EmbeddingProvider) -> list[str]:
    ids = [store.memories.add(fact, now=NOW).id for fact in FACTS]
    assert backfill(store, embedder, batch_size=16).complete
    return ids


def vector_verdicts(result: RecallResult) -> dict[str, bool]:
    """memory id -> whether its vector hit cleared the floor (every hit the leg returned)."""
    found = {c.memory.id: c.floors for c in result.ranked}
    found.update({b.memory.id: b.floors for b in result.below_floor})
    return {i: floors["vector"].cleared for i, floors in found.items() if "vector" in floors}


@pytest.mark.parametrize("space", ["minilm", "compressed"])
def test_the_vector_floor_holds_in_two_similarity_scales(
    store: Store, minilm: LocalEmbedder, space: str
) -> None:
    embedder: EmbeddingProvider = minilm if space == "minilm" else CompressedEmbedder(minilm)
    ids = fill(store, embedder)
    with Recaller(store, embedder=embedder) as recaller:
        for question, needed in ON_TOPIC:
            result = recaller.recall(question, now=NOW, mark=False)
            verdicts = vector_verdicts(result)
            assert verdicts[ids[needed]], question
            assert ids[needed] in result.packed_ids, question
            # It stands out: most of the store stays below the floor.
            assert sum(verdicts.values()) <= len(FACTS) // 2, question
        for message in OFF_TOPIC:
            result = recaller.recall(message, now=NOW, mark=False)
            assert result.items == (), message
            assert result.block == ""
            assert not any(vector_verdicts(result).values()), message
            if message != "ok":  # "ok" has no term to embed: the leg does not run
                assert result.below_floor, message
    if space == "compressed":
        # The scales differ: in this space every memory is at least as similar to an
        # off-topic message as MiniLM's best on-topic match ever is, so no absolute
        # cosine threshold could serve both spaces.
        query = np.asarray(embedder.embed_query(OFF_TOPIC[1]))
        facts = np.asarray(embedder.embed(FACTS))
        assert (facts @ query).min() > 0.8


def test_the_vector_floor_counts_for_a_store_of_one(store: Store, minilm: LocalEmbedder) -> None:
    allergy = store.memories.add(FACTS[0], now=NOW)
    assert backfill(store, minilm).complete
    with Recaller(store, embedder=minilm) as recaller:
        assert recaller.recall(ON_TOPIC[0][0], now=NOW).packed_ids == [allergy.id]
        assert recaller.recall("What is the capital of Australia?", now=NOW).items == ()


def test_a_query_of_common_words_matches_nothing_in_the_text_leg(store: Store) -> None:
    store.memories.add("Started the new job today, good first day at work", now=NOW)
    store.memories.add("Had a good time with the neighbours", now=NOW)
    dentist = store.memories.add("My dentist is Dr. Ana Lopes", now=NOW)
    with Recaller(store) as recaller:
        small_talk = recaller.recall("Hello, how are you today? Good day at work?", now=NOW)
        assert small_talk.items == () and small_talk.ranked == ()
        # The text leg found them, and each stayed below its floor, with why.
        assert len(small_talk.below_floor) == 2
        for below in small_talk.below_floor:
            verdict = below.floors["text"]
            assert not verdict.cleared
            assert verdict.value is not None and verdict.floor is not None
            assert verdict.value < verdict.floor
            assert "term evidence" in below.reason
        # A rare word is evidence, even in a store of three memories.
        assert recaller.recall("who is my dentist?", now=NOW).packed_ids == [dentist.id]


def test_common_words_weigh_little_even_when_rare_in_the_store() -> None:
    settings = RecallSettings()
    # "today" is in 1 of 70 memories: rare in the store, yet common in English.
    assert store_weight(1, 70, settings) > settings.text_min_evidence
    assert term_weight("today", 1, 70, settings) < settings.text_min_evidence
    assert term_weight("penicillin", 1, 70, settings) >= settings.text_min_evidence
    # A word's forms are as common as the word.
    assert english_weight("checking", 200.0) == english_weight("check", 200.0)


def test_a_name_still_recalls_through_the_entity_leg(store: Store) -> None:
    mara = store.memories.add("Likes it sunny", entities=["Mara"], now=NOW)
    store.memories.add("The boiler was serviced", now=NOW)
    with Recaller(store) as recaller:
        result = recaller.recall("How is Mara?", now=NOW)
    assert result.packed_ids == [mara.id]
    assert result.ranked[0].floors["entity"].cleared


def test_a_named_memory_counts_in_every_leg_that_found_it(store: Store) -> None:
    store.memories.add("Said it was a good day today", entities=["Zoë"], now=NOW)
    store.memories.add("It was a good day today", now=NOW)
    with Recaller(store) as recaller:
        result = recaller.recall("Was it a good day today for Zoë?", now=NOW)
    [zoe] = result.ranked
    assert zoe.floors["text"].cleared and "names Zoë" in zoe.floors["text"].why
    assert set(zoe.explanation.ranks) == {"text", "entity"}
    [other] = result.below_floor
    assert not other.floors["text"].cleared


def test_a_name_typed_without_its_accents_counts_in_every_leg(store: Store) -> None:
    store.memories.add("Said it was a good day today", entities=["Zoë"], now=NOW)
    store.memories.add("It was a good day today", now=NOW)
    with Recaller(store) as recaller:
        result = recaller.recall("Was it a good day today for Zoe?", now=NOW)
    [zoe] = result.ranked
    assert zoe.floors["text"].cleared and "names Zoë" in zoe.floors["text"].why
    assert set(zoe.explanation.ranks) == {"text", "entity"}


def test_without_the_floor_every_hit_is_fused(store: Store) -> None:
    store.memories.add("Started the new job today", now=NOW)
    with Recaller(store, RecallSettings(relevance_floor=False)) as recaller:
        assert len(recaller.recall("how are you today?", now=NOW).items) == 1


@pytest.mark.parametrize(
    "setting",
    [
        {"text_min_evidence": -1.0},
        {"vector_floor_margin": float("nan")},
        {"text_prior_memories": -5.0},
        {"common_word_rank_scale": 0.0},
    ],
)
def test_floor_settings_are_checked(setting: dict[str, float]) -> None:
    with pytest.raises(InvalidInputError):
        RecallSettings(**setting)  # type: ignore[arg-type]


def test_recall_json_shows_the_floors(data_dir: Path) -> None:
    def add(*args: str) -> str:
        result = run_timothy("memories", "add", *args, "--json")
        assert result.returncode == 0, result.stderr
        return str(json.loads(result.stdout)["id"])

    dentist = add("My dentist is Dr. Ana Lopes")
    today = add("Started the new job today")
    found = run_timothy("recall", "--json", "--no-mark", "who is my dentist?")
    assert found.returncode == 0, found.stderr
    data = json.loads(found.stdout)
    [ranked] = data["ranked"]
    assert ranked["id"] == dentist
    assert ranked["floors"]["text"]["cleared"] is True
    assert ranked["floors"]["text"]["value"] >= ranked["floors"]["text"]["floor"]
    assert set(ranked["floors"]["text"]["terms"]) == {"dentist"}
    assert ranked["floors"]["text"]["rank"] == 1
    assert [item["id"] for item in data["items"]] == [dentist]
    assert data["below_floor"] == []

    silent = run_timothy("recall", "--json", "--no-mark", "how are you today?")
    assert silent.returncode == 0, silent.stderr
    data = json.loads(silent.stdout)
    assert data["items"] == [] and data["ranked"] == [] and data["block"] == ""
    [below] = data["below_floor"]
    assert below["id"] == today
    assert below["floors"]["text"]["cleared"] is False
    assert below["floors"]["text"]["value"] < below["floors"]["text"]["floor"]
    assert "term evidence" in below["reason"]


def test_a_question_about_the_owner_needs_less_text_evidence(store: Store) -> None:
    car = store.memories.add("The owner's car is a 2012 Volvo", now=NOW)
    with Recaller(store) as recaller:
        # "car" is a common English word: enough when the owner asks about themself...
        assert recaller.recall("What car do I drive?", now=NOW).packed_ids == [car.id]
        # ...not in a general question.
        general = recaller.recall("Is a car faster than a train?", now=NOW)
        assert general.items == ()
        [below] = general.below_floor
        assert below.memory.id == car.id


_GATED = itertools.count()


class GatedEmbedder(HashingEmbedder):
    """Embeds the background sentences only once `gate` is set (memories at once)."""

    def __init__(self) -> None:
        # A model of its own each time: the background is kept for the process per model,
        # and this test runs once per store engine.
        super().__init__(model_id=f"test/gated-background-{next(_GATED)}")
        self.gate = threading.Event()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if set(texts) <= set(BACKGROUND):
            self.gate.wait()
        return super().embed(texts)


def test_a_turn_does_not_wait_for_the_background_sentences(store: Store) -> None:
    embedder = GatedEmbedder()
    tea = store.memories.add("green tea in the morning", now=NOW)
    assert backfill(store, embedder).complete
    with Recaller(store, embedder=embedder, wait_for_background=False) as recaller:
        first = recaller.recall("morning green tea", now=NOW, mark=False)
        assert first.legs["vector"] == "ok"
        verdict = first.ranked[0].floors["vector"]  # the text leg admitted the memory
        assert not verdict.cleared and "still being embedded" in verdict.why
        embedder.gate.set()
        for thread in threading.enumerate():
            if thread.name == "recall-background":
                thread.join(timeout=30)
        second = recaller.recall("morning green tea", now=NOW, mark=False)
        assert second.ranked[0].memory.id == tea.id
        assert second.ranked[0].floors["vector"].cleared


def test_a_verdict_judged_again_keeps_every_other_field() -> None:
    """The floor's second looks (the vector leg's contradiction, a named entity) change a
    verdict's outcome, floor and reason, and nothing else: as dataclasses.replace would
    (a field added to LegVerdict and not carried over fails here)."""
    verdict = LegVerdict("text", 4, True, 1.25, 1.0, "term evidence 1.25 >= 1", {"tea": 1.25})
    for cleared, floor in ((False, 2.5), (True, None)):
        again = _rejudged(verdict, cleared, floor, lambda: "judged again")
        expected = dataclasses.replace(verdict, cleared=cleared, floor=floor, reason="judged again")
        for field in dataclasses.fields(LegVerdict):
            if field.name != "reason":
                assert getattr(again, field.name) == getattr(expected, field.name), field.name
        assert again.why == "judged again"
        assert again == expected
