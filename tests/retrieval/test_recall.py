"""Recall end to end: legs side by side, isolation, the time bound, stamps, the JSON shape."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import apsw
import pytest

from tests.fakes.embedder import HashingEmbedder
from timothy.errors import ProviderError, RecallError, StoreError
from timothy.retrieval import Recaller, RecallSettings, render_block
from timothy.retrieval.pack import line_tokens, rendered
from timothy.retrieval.recall import leg_lanes
from timothy.store import Store
from timothy.store.engine import StoreEngine
from timothy.store.postgres import PostgresStore
from timothy.store.search import MemorySearch, TextHits
from timothy.store.vectors import EmbeddingModel, Vector
from timothy.tokens import count_tokens

NOW = datetime(2025, 6, 1, tzinfo=UTC)


class ScriptedSearch:
    """The store's real legs, except those told to fail or to hang (a MemorySearch)."""

    def __init__(self, real: MemorySearch) -> None:
        self.real = real
        self.fail: set[str] = set()
        self.hang: set[str] = set()
        self.release = threading.Event()
        self.entered = threading.Event()

    def _maybe(self, leg: str) -> None:
        if leg in self.fail:
            raise StoreError(f"the {leg} index is damaged")
        if leg in self.hang:
            self.entered.set()
            self.release.wait()

    def vector_model(self) -> EmbeddingModel | None:
        return self.real.vector_model()

    def has_vectors(self, model: EmbeddingModel) -> bool:
        return self.real.has_vectors(model)

    def vector(
        self, model: EmbeddingModel, query: Vector, limit: int, *, deadline: float | None = None
    ) -> list[str]:
        self._maybe("vector")
        return self.real.vector(model, query, limit, deadline=deadline)

    def vector_hits(
        self, model: EmbeddingModel, query: Vector, limit: int, *, deadline: float | None = None
    ) -> list[tuple[str, float]]:
        self._maybe("vector")
        return self.real.vector_hits(model, query, limit, deadline=deadline)

    def text(self, query: str, limit: int, *, deadline: float | None = None) -> list[str]:
        self._maybe("text")
        return self.real.text(query, limit, deadline=deadline)

    def text_hits(self, query: str, limit: int, *, deadline: float | None = None) -> TextHits:
        self._maybe("text")
        return self.real.text_hits(query, limit, deadline=deadline)

    def named(self, query: str, *, deadline: float | None = None) -> list[str]:
        self._maybe("named")
        return self.real.named(query, deadline=deadline)

    def entity(
        self,
        query: str,
        limit: int,
        *,
        deadline: float | None = None,
        names: Sequence[str] | None = None,
    ) -> list[str]:
        self._maybe("entity")
        return self.real.entity(query, limit, deadline=deadline, names=names)

    def prepare(self) -> None:
        self.real.prepare()


@pytest.fixture
def recaller(store: Store) -> Iterator[Recaller]:
    with Recaller(store) as opened:
        yield opened


def embed_all(store: Store, embedder: HashingEmbedder) -> EmbeddingModel:
    model = store.vectors.ensure_model(embedder.model_id, embedder.dimension)
    memories = store.memories.list(status="active")
    store.vectors.put_many(
        model,
        zip(
            [m.id for m in memories],
            embedder.embed([m.content for m in memories]),
            strict=True,
        ),
    )
    store.vectors.set_active_model(model.name)
    return model


def test_a_two_part_question_recalls_both_facts(store: Store, recaller: Recaller) -> None:
    seat = store.memories.add("I prefer aisle seats on long-haul flights", type="preference")
    birthday = store.memories.add("My birthday is on 3 March")
    store.memories.add("Lisbon has mild winters")
    result = recaller.recall(
        "What seat do I prefer on long-haul flights, and when is my birthday?", now=NOW
    )
    assert {item.memory.id for item in result.items} == {seat.id, birthday.id}
    assert result.block == render_block(item.memory for item in result.items)
    assert result.tokens == count_tokens(result.block) <= result.budget == 1000
    assert result.legs == {"vector": "off", "text": "ok", "entity": "ok"}


def test_the_three_legs_fuse(store: Store) -> None:
    embedder = HashingEmbedder()
    zoe_tea = store.memories.add("Zoë drinks green tea every morning", entities=["Zoë"])
    zoe_other = store.memories.add("Zoë lives in Porto", entities=["Zoë"])
    tea = store.memories.add("Green tea helps me focus")
    store.memories.add("The car needs new tyres")
    embed_all(store, embedder)
    with Recaller(store, embedder=embedder) as recaller:
        result = recaller.recall("Does Zoë like green tea?", now=NOW)
    assert result.legs == {"vector": "ok", "text": "ok", "entity": "ok"}
    # The vector leg looks for what is asked; who is asked about is the entity leg's part.
    assert embedder.queries == ["Does like green tea?"]
    ranked = {c.memory.id: c for c in result.ranked}
    assert set(ranked[zoe_tea.id].explanation.ranks) == {"vector", "text", "entity"}
    assert result.ranked[0].memory.id == zoe_tea.id
    assert "entity" in ranked[zoe_other.id].explanation.ranks
    assert "text" in ranked[tea.id].explanation.ranks


def test_the_vector_leg_embeds_the_query_without_its_entity_names(store: Store) -> None:
    embedder = HashingEmbedder()
    for text in ("Hi!", "Thanks, see you", "Good morning"):
        store.memories.add(text, entities=["Zoë"])
    sencha = store.memories.add("Sencha is her favourite tea", entities=["Zoë"])
    store.memories.add("Max likes coffee", entities=["Max"])
    embed_all(store, embedder)
    with Recaller(store, embedder=embedder) as recaller:
        result = recaller.recall("What is Zoë's favourite tea?", now=NOW)
        recaller.recall("Zoë and Max?", now=NOW)  # nothing but names: embedded whole
        recaller.recall("What does Bob like?", now=NOW)  # not a stored entity: kept
    assert embedder.queries == [
        "What is favourite tea?",
        "Zoë and Max?",
        "What does Bob like?",
    ]
    assert result.ranked[0].memory.id == sencha.id
    assert set(result.ranked[0].explanation.ranks) == {"vector", "text", "entity"}


def test_names_that_cannot_be_read_leave_the_query_whole(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    embedder = HashingEmbedder()
    tea = store.memories.add("Sencha is her favourite tea", entities=["Zoë"])
    embed_all(store, embedder)
    search = ScriptedSearch(store.search)
    search.fail.add("named")
    with (
        Recaller(store, embedder=embedder, search=search) as recaller,
        caplog.at_level(logging.WARNING),
    ):
        result = recaller.recall("Zoë's favourite tea", now=NOW)
    assert embedder.queries == ["Zoë's favourite tea"]
    assert result.legs == {"vector": "ok", "text": "ok", "entity": "ok"}
    assert result.ranked[0].memory.id == tea.id
    assert "names could not be read" in caplog.text


def test_the_vector_leg_is_off_without_provider_model_or_vectors(store: Store) -> None:
    store.memories.add("green tea")
    embedder = HashingEmbedder()
    with Recaller(store, embedder=embedder) as recaller:
        assert recaller.recall("tea").legs["vector"] == "off"  # no model yet
        model = store.vectors.ensure_model(embedder.model_id, embedder.dimension)
        store.vectors.set_active_model(model.name)
        assert recaller.recall("tea").legs["vector"] == "off"  # a model, no vectors
    embed_all(store, embedder)
    with Recaller(store) as recaller:
        assert recaller.recall("tea").legs["vector"] == "off"  # no provider
    with Recaller(store, embedder=HashingEmbedder(model_id="test/other")) as recaller:
        assert recaller.recall("tea").legs["vector"] == "off"  # vectors of another model
    assert embedder.queries == []


def test_a_query_vector_can_be_given_directly(store: Store, recaller: Recaller) -> None:
    embedder = HashingEmbedder()
    tea = store.memories.add("green tea")
    store.memories.add("black coffee")
    embed_all(store, embedder)
    result = recaller.recall("zzz", query_vector=embedder.embed(["green tea"])[0], now=NOW)
    assert result.legs["vector"] == "ok"
    assert result.ranked[0].memory.id == tea.id


def test_a_failing_provider_drops_only_the_vector_leg(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    embedder = HashingEmbedder()
    tea = store.memories.add("green tea")
    embed_all(store, embedder)
    embedder.error = ProviderError("The embedding service did not answer.")
    with Recaller(store, embedder=embedder) as recaller, caplog.at_level(logging.WARNING):
        result = recaller.recall("green tea", now=NOW)
    assert result.legs == {
        "vector": "failed: The embedding service did not answer.",
        "text": "ok",
        "entity": "ok",
    }
    assert [item.memory.id for item in result.items] == [tea.id]
    assert "vector leg failed" in caplog.text


def test_a_failing_leg_is_dropped_and_logged(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    tea = store.memories.add("Zoë drinks green tea", entities=["Zoë"])
    search = ScriptedSearch(store.search)
    search.fail = {"text"}
    with Recaller(store, search=search) as recaller, caplog.at_level(logging.WARNING):
        result = recaller.recall("green tea for Zoë", now=NOW)
    assert result.legs["text"] == "failed: the text index is damaged"
    assert result.legs["entity"] == "ok"
    assert [item.memory.id for item in result.items] == [tea.id]
    assert "text leg failed" in caplog.text


def test_every_leg_failing_raises(store: Store) -> None:
    embedder = HashingEmbedder()
    store.memories.add("green tea", entities=["Zoë"])
    embed_all(store, embedder)
    search = ScriptedSearch(store.search)
    search.fail = {"text", "entity"}
    with Recaller(store, search=search) as recaller, pytest.raises(RecallError, match="text"):
        recaller.recall("green tea")  # the vector leg is off: every leg that ran failed
    search.fail = {"vector", "text", "entity"}
    with (
        Recaller(store, embedder=embedder, search=search) as recaller,
        pytest.raises(RecallError, match="every search failed"),
    ):
        recaller.recall("green tea")


def test_a_hanging_leg_is_dropped_at_the_time_bound(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    tea = store.memories.add("green tea")
    search = ScriptedSearch(store.search)
    search.hang = {"entity"}
    settings = RecallSettings(time_bound_seconds=0.3)
    # A leg that ignores its deadline (the store's statements stop at it) can only be left
    # behind on a thread of its own: two lanes put the entity leg on one.
    recaller = Recaller(store, settings, search=search, lanes=2)
    try:
        with caplog.at_level(logging.WARNING):
            started = time.monotonic()
            result = recaller.recall("green tea", now=NOW)
            elapsed = time.monotonic() - started
        assert search.entered.is_set()
        assert result.legs["entity"] == "failed: timed out after 0.3 s"
        assert result.legs["text"] == "ok"
        assert [item.memory.id for item in result.items] == [tea.id]
        assert 0.3 <= elapsed < 3.0
        assert "outlived" in caplog.text
        # The hung thread is still busy; the next recall gets another one.
        search.hang = set()
        assert recaller.recall("green tea", now=NOW).legs["entity"] == "ok"
    finally:
        search.release.set()
        recaller.close()


def test_a_hanging_provider_is_dropped_at_the_time_bound(store: Store) -> None:
    embedder = HashingEmbedder()
    store.memories.add("green tea")
    embed_all(store, embedder)
    embedder.release = threading.Event()
    recaller = Recaller(store, RecallSettings(time_bound_seconds=0.2), embedder=embedder)
    try:
        result = recaller.recall("green tea", now=NOW)
        assert result.legs["vector"] == "failed: timed out after 0.2 s"
        assert result.items
    finally:
        embedder.release.set()
        recaller.close()


def test_recall_stamps_retrieved_only_for_packed_memories(store: Store) -> None:
    created = NOW - timedelta(days=10)
    first = store.memories.add("tea notes one " + "detail " * 30, now=created)
    second = store.memories.add("tea notes two " + "detail " * 30, now=created)
    third = store.memories.add("tea", now=created)
    with Recaller(store) as recaller:
        probe = recaller.recall("tea notes", now=NOW, mark=False)
        assert {c.memory.id for c in probe.ranked} == {first.id, second.id, third.id}
        just_the_best = count_tokens(render_block([probe.items[0].memory]))
        result = recaller.recall("tea notes", now=NOW, budget=just_the_best)
        assert recaller.flush(timeout=10)
    packed = set(result.packed_ids)
    assert len(packed) == 1 and len(result.ranked) == 3
    for memory in (first, second, third):
        stored = store.memories.get(memory.id)
        assert stored.last_confirmed_at == created  # retrieval is not endorsement
        if memory.id in packed:
            assert stored.last_retrieved_at == NOW
        else:
            assert stored.last_retrieved_at is None


def test_no_mark_leaves_every_stamp_alone(store: Store, recaller: Recaller) -> None:
    tea = store.memories.add("green tea", now=NOW)
    assert recaller.recall("tea", now=NOW, mark=False).items
    assert recaller.flush(timeout=10)
    assert store.memories.get(tea.id).last_retrieved_at is None


def test_a_failed_stamp_is_logged_never_raised(
    data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with Store.open(data_dir) as setup:
        tea = setup.memories.add("green tea", now=NOW)
    with Store.open(data_dir, busy_timeout_ms=50) as store:
        blocker = apsw.Connection(str(store.path))
        blocker.execute("BEGIN IMMEDIATE")  # another program holds the write lock
        try:
            with Recaller(store) as recaller, caplog.at_level(logging.ERROR):
                result = recaller.recall("green tea", now=NOW)
                assert recaller.flush(timeout=10)
            assert result.packed_ids == [tea.id]
            assert "stamping last_retrieved_at failed" in caplog.text
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        assert store.memories.get(tea.id).last_retrieved_at is None


def test_nothing_found_gives_no_block(store: Store, recaller: Recaller) -> None:
    store.memories.add("green tea")
    for query in ("", "   ", "?!", "quantum chromodynamics"):
        result = recaller.recall(query, now=NOW)
        assert (result.block, result.tokens, result.items, result.ranked) == ("", 0, (), ())


def test_only_active_memories_are_recalled(store: Store, recaller: Recaller) -> None:
    active = store.memories.add("green tea", entities=["Zoë"])
    store.memories.stage("green tea staged", entities=["Zoë"])
    archived = store.memories.add("green tea archived", entities=["Zoë"])
    store.memories.archive(archived.id)
    result = recaller.recall("green tea Zoë", now=NOW)
    assert [c.memory.id for c in result.ranked] == [active.id]


def test_decay_can_be_switched_off(store: Store, recaller: Recaller) -> None:
    old = store.memories.add("green tea", now=NOW - timedelta(days=400))
    assert recaller.recall("green tea", now=NOW).ranked == ()
    (candidate,) = recaller.recall("green tea", now=NOW, decay=False).ranked
    assert candidate.memory.id == old.id and candidate.explanation.decay == 1.0


def test_a_memory_that_faded_under_the_minimum_is_listed_as_faded_never_packed(
    store: Store, recaller: Recaller
) -> None:
    old = store.memories.add("My dentist is Dr. Ana Lopes", now=NOW - timedelta(days=400))
    fresh = store.memories.add("My dentist's office is in Porto", now=NOW)
    result = recaller.recall("Who is my dentist?", now=NOW)
    assert [c.memory.id for c in result.ranked] == [fresh.id]
    assert "Ana Lopes" not in result.block
    (faded,) = result.faded
    assert faded.memory.id == old.id and faded.rank == 0
    why = faded.explanation
    assert why.score < recaller.settings.min_score
    assert why.days_unconfirmed == pytest.approx(400.0)
    assert why.score == pytest.approx(why.rrf * why.decay * why.weight)
    assert faded.floors["text"].cleared  # it was relevant: only time took it out
    data = result.to_json()
    assert [entry["id"] for entry in data["faded"]] == [old.id]
    assert data["faded"][0]["rank"] == 0
    # Confirmed again, it is recalled again.
    store.memories.confirm(old.id, now=NOW)
    again = recaller.recall("Who is my dentist?", now=NOW)
    assert old.id in [c.memory.id for c in again.ranked] and again.faded == ()


def test_without_decay_nothing_fades(store: Store, recaller: Recaller) -> None:
    store.memories.add("green tea", now=NOW - timedelta(days=400))
    assert recaller.recall("green tea", now=NOW, decay=False).faded == ()


def test_budget_defaults_to_the_setting_and_can_be_given(store: Store) -> None:
    for i in range(40):
        store.memories.add(f"tea fact {i}: " + "long detail " * 10, now=NOW)
    # The budget is under test, not relevance: a word all 40 memories share is weak text
    # evidence by design (the relevance floor would rightly admit none of them).
    with Recaller(store, RecallSettings(token_budget=200, relevance_floor=False)) as recaller:
        assert recaller.recall("tea", now=NOW).tokens <= 200
        result = recaller.recall("tea", now=NOW, budget=600)
        assert 200 < result.tokens <= 600 and result.budget == 600


def test_json_shape(store: Store, recaller: Recaller) -> None:
    store.memories.add("green tea", entities=["Zoë"], now=NOW)
    data = recaller.recall("green tea Zoë", now=NOW).to_json()
    assert list(data) == [
        "block",
        "tokens",
        "budget",
        "items",
        "ranked",
        "below_floor",
        "faded",
        "legs",
        "elapsed_ms",
    ]
    assert data["legs"] == {"vector": "off", "text": "ok", "entity": "ok"}
    (item,) = data["items"]
    assert item["ranks"] == {"vector": None, "text": 1, "entity": 1}
    # The default fusion: k 10, text and entity legs weighing 1 each.
    assert item["rrf"] == pytest.approx(2 / 11)
    assert item["decay"] == 1.0 and item["weight"] == 1.0
    assert item["score"] == pytest.approx(2 / 11)
    assert "context" not in item and "beside" not in item and "time" not in item
    assert item["tokens"] == count_tokens("- [semantic] green tea\n")
    (ranked,) = data["ranked"]
    assert ranked["id"] == item["id"] and "tokens" not in ranked
    assert isinstance(data["elapsed_ms"], float)


def test_a_huge_or_odd_query_is_handled(store: Store, recaller: Recaller) -> None:
    tea = store.memories.add("green tea", entities=["Zoë"])
    query = "Zoë " + "word " * 20_000 + "tea"
    result = recaller.recall(query, now=NOW)
    assert result.ranked[0].memory.id == tea.id
    assert recaller.recall('\x00\u202e"*NEAR(', now=NOW).block == ""


class ThreadNotingSearch(ScriptedSearch):
    """The real legs, noting the thread each one ran on."""

    def __init__(self, real: MemorySearch) -> None:
        super().__init__(real)
        self.threads: dict[str, threading.Thread] = {}

    def text_hits(self, query: str, limit: int, *, deadline: float | None = None) -> TextHits:
        self.threads["text"] = threading.current_thread()
        return super().text_hits(query, limit, deadline=deadline)

    def entity(
        self,
        query: str,
        limit: int,
        *,
        deadline: float | None = None,
        names: Sequence[str] | None = None,
    ) -> list[str]:
        self.threads["entity"] = threading.current_thread()
        return super().entity(query, limit, deadline=deadline, names=names)


class NameNotingSearch(ScriptedSearch):
    """ScriptedSearch that notes each lookup of the query's names and what the entity leg got."""

    def __init__(self, real: MemorySearch) -> None:
        super().__init__(real)
        self.lookups = 0
        self.given: list[Sequence[str] | None] = []

    def named(self, query: str, *, deadline: float | None = None) -> list[str]:
        self.lookups += 1
        return super().named(query, deadline=deadline)

    def entity(
        self,
        query: str,
        limit: int,
        *,
        deadline: float | None = None,
        names: Sequence[str] | None = None,
    ) -> list[str]:
        self.given.append(names)
        return super().entity(query, limit, deadline=deadline, names=names)


def test_the_query_names_are_looked_up_once_a_turn(store: Store) -> None:
    """The vector leg, the floor and the entity leg share one lookup of the names."""
    embedder = HashingEmbedder()
    tea = store.memories.add("Alice drinks green tea", entities=["Alice"])
    store.memories.add("Bob drinks coffee", entities=["Bob"])
    embed_all(store, embedder)
    search = NameNotingSearch(store.search)
    with Recaller(store, embedder=embedder, search=search) as recaller:
        result = recaller.recall("What does Alice drink?", now=NOW)
    assert search.lookups == 1
    assert search.given == [["alice"]]
    assert result.legs["entity"] == "ok" and tea.id in result.packed_ids


def test_when_the_names_cannot_be_read_the_entity_leg_fails_as_before(store: Store) -> None:
    store.memories.add("Alice drinks green tea", entities=["Alice"])
    search = NameNotingSearch(store.search)
    search.fail.add("named")
    with Recaller(store, search=search) as recaller:
        result = recaller.recall("What does Alice drink?", now=NOW)
    # The lookup failed, so the entity leg looked them up itself (and found Alice).
    assert search.given == [None]
    assert result.legs["entity"] == "ok" and result.items


def test_the_text_leg_runs_on_the_callers_thread_and_the_entity_leg_beside_it(
    store: Store,
) -> None:
    """Two lanes (three cores or more): the entity leg on a thread of its own."""
    tea = store.memories.add("Alice drinks green tea", entities=["Alice"])
    search = ThreadNotingSearch(store.search)
    with Recaller(store, search=search, lanes=2) as recaller:
        result = recaller.recall("green tea for Alice", now=NOW)
    assert result.legs["text"] == result.legs["entity"] == "ok"
    assert [item.memory.id for item in result.items] == [tea.id]
    assert search.threads["text"] is threading.current_thread()
    assert search.threads["entity"] is not threading.current_thread()


def test_the_text_leg_on_the_callers_thread_still_stops_at_the_deadline(store: Store) -> None:
    store.memories.add("green tea")
    with Recaller(store, RecallSettings(time_bound_seconds=1e-9)) as recaller:
        started = time.monotonic()
        with pytest.raises(RecallError) as failed:
            recaller.recall("green tea", now=NOW)
    assert failed.value.timed_out
    assert "text failed: timed out" in str(failed.value)
    assert time.monotonic() - started < 2.0


class LaneNotingSearch(ThreadNotingSearch):
    """ThreadNotingSearch that also notes the vector leg's thread."""

    def vector_hits(
        self, model: EmbeddingModel, query: Vector, limit: int, *, deadline: float | None = None
    ) -> list[tuple[str, float]]:
        self.threads["vector"] = threading.current_thread()
        return super().vector_hits(model, query, limit, deadline=deadline)


class GatedSearch(LaneNotingSearch):
    """LaneNotingSearch whose text or vector leg waits at a gate until the entity leg has
    run (on whichever thread took it), and counts the entity leg's runs."""

    def __init__(self, real: MemorySearch, gated: str) -> None:
        super().__init__(real)
        self.gated = gated
        self.entity_ran = threading.Event()
        self.entity_runs = 0

    def text_hits(self, query: str, limit: int, *, deadline: float | None = None) -> TextHits:
        if self.gated == "text":
            assert self.entity_ran.wait(10)
        return super().text_hits(query, limit, deadline=deadline)

    def vector_hits(
        self, model: EmbeddingModel, query: Vector, limit: int, *, deadline: float | None = None
    ) -> list[tuple[str, float]]:
        if self.gated == "vector":
            assert self.entity_ran.wait(10)
        return super().vector_hits(model, query, limit, deadline=deadline)

    def entity(
        self,
        query: str,
        limit: int,
        *,
        deadline: float | None = None,
        names: Sequence[str] | None = None,
    ) -> list[str]:
        self.entity_runs += 1
        try:
            return super().entity(query, limit, deadline=deadline, names=names)
        finally:
            self.entity_ran.set()


def test_one_lane_runs_the_entity_leg_after_the_text_leg_while_the_vector_leg_runs(
    store: Store,
) -> None:
    """Two cores: the vector leg (which may wait on a provider) on a thread of its own from
    the start, the text leg on the caller's; the vector leg still running when the text leg
    is done (here: held until the entity leg has run), the caller runs the entity leg."""
    embedder = HashingEmbedder()
    store.memories.add("Zoë drinks green tea every morning", entities=["Zoë"])
    embed_all(store, embedder)
    search = GatedSearch(store.search, gated="vector")
    with Recaller(store, embedder=embedder, search=search, lanes=1) as recaller:
        result = recaller.recall("Does Zoë like green tea?", now=NOW)
    assert result.legs == {"vector": "ok", "text": "ok", "entity": "ok"}
    assert search.threads["text"] is threading.current_thread()
    assert search.threads["entity"] is threading.current_thread()
    assert search.threads["vector"] is not threading.current_thread()
    assert search.entity_runs == 1
    # Listed (and fused) in the legs' usual order, whichever ran first.
    assert list(result.legs) == ["vector", "entity", "text"]


def test_one_lane_runs_the_entity_leg_after_the_vector_leg_while_the_text_leg_runs(
    store: Store,
) -> None:
    """The vector leg done while the text leg still runs (here: held until the entity leg
    has run), the other thread runs the entity leg: the legs end sooner on two cores."""
    embedder = HashingEmbedder()
    zoe = store.memories.add("Zoë drinks green tea every morning", entities=["Zoë"])
    embed_all(store, embedder)
    search = GatedSearch(store.search, gated="text")
    with Recaller(store, embedder=embedder, search=search, lanes=1) as recaller:
        result = recaller.recall("Does Zoë like green tea?", now=NOW)
    assert result.legs == {"vector": "ok", "text": "ok", "entity": "ok"}
    assert search.threads["text"] is threading.current_thread()
    assert search.threads["entity"] is search.threads["vector"]
    assert search.threads["entity"] is not threading.current_thread()
    assert search.entity_runs == 1
    assert list(result.legs) == ["vector", "entity", "text"]
    assert result.items[0].memory.id == zoe.id


def test_two_lanes_run_the_entity_and_vector_legs_on_threads_of_their_own(store: Store) -> None:
    embedder = HashingEmbedder()
    store.memories.add("Zoë drinks green tea every morning", entities=["Zoë"])
    embed_all(store, embedder)
    search = LaneNotingSearch(store.search)
    with Recaller(store, embedder=embedder, search=search, lanes=2) as recaller:
        result = recaller.recall("Does Zoë like green tea?", now=NOW)
    assert result.legs == {"vector": "ok", "text": "ok", "entity": "ok"}
    assert search.threads["entity"] is not search.threads["vector"]
    assert threading.current_thread() not in (search.threads["entity"], search.threads["vector"])


def test_a_hanging_vector_leg_on_one_lane_keeps_the_entity_leg(store: Store) -> None:
    """The vector leg has its thread to itself: a provider that hangs costs only the vector
    leg."""
    release = threading.Event()
    embedder = HashingEmbedder()
    zoe = store.memories.add("Zoë drinks green tea every morning", entities=["Zoë"])
    embed_all(store, embedder)
    embedder.embed_query = lambda text: (release.wait(10), [0.0])[1]  # type: ignore[method-assign]
    settings = RecallSettings(time_bound_seconds=0.3)
    recaller = Recaller(store, settings, embedder=embedder, lanes=1)
    try:
        result = recaller.recall("Does Zoë like green tea?", now=NOW)
    finally:
        release.set()
        recaller.close()
    assert result.legs["entity"] == result.legs["text"] == "ok"
    assert result.legs["vector"].startswith("failed: timed out")
    assert result.items[0].memory.id == zoe.id


def test_lanes_follow_the_cores(store: Store) -> None:
    assert leg_lanes(1) == 1
    assert leg_lanes(2) == 1  # a laptop: the caller's thread and one more
    assert leg_lanes(3) == 2
    assert leg_lanes(16) == 2  # at most one a leg
    with pytest.raises(ValueError, match="at least one"):
        Recaller(store, lanes=0)


# -- what recall keeps between turns (memories' rows, rendered lines) ----------------------


def _other_handle(store: StoreEngine, data_dir: Path) -> StoreEngine:
    """The same store opened a second time: its own connections, its own kept memories."""
    if isinstance(store, PostgresStore):
        return PostgresStore(store.db.conninfo, follow_changes=False)
    return Store.open(data_dir)


def test_changes_written_on_another_connection_are_seen_by_the_next_recall(
    store: StoreEngine, data_dir: Path
) -> None:
    """Recall keeps what it built from rows it read (memories, their lines): an edit, an
    archive or a forget made elsewhere between two turns is what the next turn sees."""
    first = store.memories.add("Zoë lives in Lisbon", entities=["Zoë"], now=NOW)
    other_fact = store.memories.add("Zoë plays the cello", entities=["Zoë"], now=NOW)
    with Recaller(store) as recaller:
        before = recaller.recall("Where does Zoë live?", now=NOW, mark=False)
        assert "Zoë lives in Lisbon" in before.block
        with _other_handle(store, data_dir) as other:
            edited = other.memories.supersede(first.id, "Zoë lives in Porto", now=NOW)
        after = recaller.recall("Where does Zoë live?", now=NOW, mark=False)
        assert "Zoë lives in Porto" in after.block
        assert "Lisbon" not in after.block
        assert first.id not in {c.memory.id for c in after.ranked}
        with _other_handle(store, data_dir) as other:
            other.memories.archive(edited.id)
        archived = recaller.recall("Where does Zoë live?", now=NOW, mark=False)
        assert "Porto" not in archived.block and "cello" in archived.block
        with _other_handle(store, data_dir) as other:
            other.memories.forget([other_fact.id])
        forgotten = recaller.recall("Where does Zoë live?", now=NOW, mark=False)
        assert "cello" not in forgotten.block
        assert other_fact.id not in {c.memory.id for c in forgotten.ranked}


def test_forgetting_a_memory_lets_go_of_the_kept_lines(store: StoreEngine) -> None:
    memory = store.memories.add("My locker code is 4411", entities=["locker"], now=NOW)
    with Recaller(store) as recaller:
        found = recaller.recall("What is my locker code?", now=NOW, mark=False)
        assert found.packed_ids == [memory.id]
        assert rendered.cache_info().currsize > 0 and line_tokens.cache_info().currsize > 0
        store.memories.forget([memory.id])
        assert rendered.cache_info().currsize == 0 and line_tokens.cache_info().currsize == 0
        assert recaller.recall("What is my locker code?", now=NOW, mark=False).block == ""
    # A closed recaller no longer listens to the store.
    assert all(
        getattr(listener, "__self__", None) is not recaller for listener in store.memories.listeners
    )
