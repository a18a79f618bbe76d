"""The ranking departures of issue 17, each pinned to hand-computed numbers: leg weights and
k, the conversational neighbourhood, the days a question names; and the article's path when
they are off."""

from __future__ import annotations

import dataclasses
import threading
from datetime import UTC, date, datetime, timedelta

import pytest

from tests.fakes.embedder import HashingEmbedder
from timothy.errors import InvalidInputError
from timothy.retrieval import Recaller, RecallSettings
from timothy.retrieval.context import in_context, seeds
from timothy.retrieval.fusion import fuse
from timothy.retrieval.when import at_time, named_days
from timothy.store import Store
from timothy.store.memories import Neighbour
from timothy.store.records import Memory, MemorySource, MemoryStatus, MemoryType

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)
ARTICLE = RecallSettings.article()
DEFAULTS = RecallSettings()


def memory(
    memory_id: str,
    *,
    memory_type: MemoryType = MemoryType.EPISODIC,
    session: str | None = "s1",
    made: datetime = NOW,
) -> Memory:
    return Memory(
        id=memory_id,
        type=memory_type,
        content=f"memory {memory_id}",
        status=MemoryStatus.ACTIVE,
        confidence=1.0,
        source=MemorySource.EXTRACTION,
        session_id=session,
        supersedes=None,
        superseded_by=None,
        created_at=made,
        last_confirmed_at=made,
        last_retrieved_at=None,
    )


def by_id(*memories: Memory) -> dict[str, Memory]:
    return {m.id: m for m in memories}


# -- settings ------------------------------------------------------------------------------


def test_the_defaults_depart_from_the_article_by_name() -> None:
    assert DEFAULTS.rrf_k == 10
    assert DEFAULTS.min_score == pytest.approx(0.005 * 61 / 11)
    assert dict(DEFAULTS.leg_weights) == {"vector": 2.0, "text": 1.0, "entity": 1.0}
    assert (DEFAULTS.neighbour_share, DEFAULTS.neighbour_seeds, DEFAULTS.neighbour_width) == (
        0.4,
        10,
        2,
    )
    assert DEFAULTS.time_boost == 1.0
    assert (ARTICLE.rrf_k, ARTICLE.min_score) == (60.0, 0.005)
    assert dict(ARTICLE.leg_weights) == {"vector": 1.0, "text": 1.0, "entity": 1.0}
    assert ARTICLE.neighbour_share == 0 and ARTICLE.time_boost == 0
    assert (DEFAULTS.vector_depth, ARTICLE.vector_depth) == (2, 1)
    assert [DEFAULTS.leg_limit(leg) for leg in ("vector", "text", "entity")] == [60, 30, 30]
    assert [ARTICLE.leg_limit(leg) for leg in ("vector", "text", "entity")] == [30, 30, 30]
    # Everything else stays as given.
    assert RecallSettings.article(token_budget=50).token_budget == 50


@pytest.mark.parametrize(
    "bad",
    [
        {"leg_weights": {"graph": 1.0}},
        {"leg_weights": {"vector": -1.0}},
        {"neighbour_share": -0.1},
        {"neighbour_width": -1},
        {"neighbour_seeds": -1},
        {"time_boost": float("nan")},
        {"vector_depth": 0},
        {"vector_depth": 11},
    ],
)
def test_new_settings_out_of_range_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError):
        RecallSettings(**bad)  # type: ignore[arg-type]


def test_a_missing_leg_weighs_one() -> None:
    assert dict(RecallSettings(leg_weights={"text": 3.0}).leg_weights) == {
        "vector": 1.0,
        "text": 3.0,
        "entity": 1.0,
    }


def test_the_vector_leg_hands_fusion_twice_as_many_hits_as_the_article(store: Store) -> None:
    embedder = HashingEmbedder()
    for n in range(90):
        store.memories.add(f"note {n} about the garden shed and its paint", now=NOW)
    model = store.vectors.ensure_model(embedder.model_id, embedder.dimension)
    memories = store.memories.list(status="active")
    texts = [m.content for m in memories]
    store.vectors.put_many(model, zip([m.id for m in memories], embedder.embed(texts), strict=True))
    store.vectors.set_active_model(model.name)
    query = embedder.embed(["garden shed paint"])[0]
    deepest = {}
    for name, settings in (("defaults", DEFAULTS), ("article", ARTICLE)):
        open_settings = dataclasses.replace(settings, relevance_floor=False, min_score=0.0)
        with Recaller(store, open_settings) as recaller:
            result = recaller.recall("zzz", query_vector=query, now=NOW, decay=False, mark=False)
        ranks = [c.explanation.ranks["vector"] for c in result.ranked]
        deepest[name] = (len(ranks), max(ranks))
    assert deepest == {"defaults": (60, 60), "article": (30, 30)}


# -- leg weights and k ---------------------------------------------------------------------


def test_leg_weights_multiply_each_legs_rrf_term() -> None:
    ranked = fuse(
        {"vector": ["a", "b"], "text": ["b"], "entity": []},
        by_id(memory("a"), memory("b")),
        DEFAULTS,
        NOW,
    )
    scores = {c.memory.id: c.explanation for c in ranked}
    # a: vector rank 1, weight 2: 2 / 11; b: vector rank 2 (2 / 12) + text rank 1 (1 / 11)
    assert scores["a"].rrf == pytest.approx(2 / 11, rel=1e-12)
    assert scores["b"].rrf == pytest.approx(2 / 12 + 1 / 11, rel=1e-12)
    assert [c.memory.id for c in ranked] == ["b", "a"]


def test_the_article_weighs_every_leg_alike_at_k_60() -> None:
    ranked = fuse(
        {"vector": ["a", "b"], "text": ["b"], "entity": []},
        by_id(memory("a"), memory("b")),
        ARTICLE,
        NOW,
    )
    scores = {c.memory.id: c.explanation.score for c in ranked}
    assert scores == pytest.approx({"a": 1 / 61, "b": 1 / 62 + 1 / 61}, rel=1e-12)


# -- the conversational neighbourhood ------------------------------------------------------


def test_a_top_hit_lends_its_neighbours_a_share_by_distance() -> None:
    a, b = memory("a"), memory("b")
    ranked = fuse({"vector": ["a"], "text": ["b"], "entity": []}, by_id(a, b), DEFAULTS, NOW)
    seed = {c.memory.id: c.score for c in ranked}
    around = {
        "a": [Neighbour(memory("n1"), 1), Neighbour(memory("n2"), 2), Neighbour(b, 1)],
        "b": [Neighbour(memory("n1"), 2)],
    }
    placed = in_context(ranked, around, DEFAULTS, NOW)
    got = {c.memory.id: c.explanation for c in placed}
    # n1: beside a at distance 1 (0.4 * 2/11) beats beside b at distance 2 (0.4 * 1/11 / 2)
    assert got["n1"].context == pytest.approx(0.4 * seed["a"], rel=1e-12)
    assert got["n1"].beside == "a" and got["n1"].ranks == {} and got["n1"].rrf == 0
    assert got["n1"].score == pytest.approx(0.4 * 2 / 11, rel=1e-12)
    assert got["n2"].score == pytest.approx(0.4 * 2 / 11 / 2, rel=1e-12)
    # b was found by a leg too: the share adds to its own score.
    assert got["b"].score == pytest.approx(1 / 11 + 0.4 * 2 / 11, rel=1e-12)
    assert got["b"].beside == "a"
    assert got["a"].context == 0 and got["a"].beside is None
    assert [c.memory.id for c in placed] == ["a", "b", "n1", "n2"]
    assert [c.rank for c in placed] == [1, 2, 3, 4]
    record = placed[2].recalled().to_json()
    assert record["beside"] == "a" and record["context"] == pytest.approx(0.4 * 2 / 11)


def test_only_the_first_seeds_that_are_episodes_of_a_session_lend() -> None:
    fact = memory("fact", memory_type=MemoryType.SEMANTIC)
    loose = memory("loose", session=None)
    episode = memory("episode")
    late = memory("late")
    settings = RecallSettings(neighbour_seeds=3)
    ranked = fuse(
        {"vector": ["fact", "loose", "episode", "late"], "text": [], "entity": []},
        by_id(fact, loose, episode, late),
        settings,
        NOW,
    )
    assert [c.memory.id for c in seeds(ranked, settings)] == ["episode"]
    around = {name: [Neighbour(memory(f"{name}-next"), 1)] for name in ("fact", "loose", "late")}
    assert [c.memory.id for c in in_context(ranked, around, settings, NOW)] == [
        "fact",
        "loose",
        "episode",
        "late",
    ]


def test_a_share_below_the_minimum_brings_nothing_in() -> None:
    settings = RecallSettings(min_score=0.05)
    a = memory("a")
    ranked = fuse({"vector": [], "text": ["a"], "entity": []}, by_id(a), settings, NOW)
    # 0.4 * (1 / 11) / 1 = 0.036 < 0.05: no new candidate
    placed = in_context(ranked, {"a": [Neighbour(memory("n"), 1)]}, settings, NOW)
    assert [c.memory.id for c in placed] == ["a"]


def test_neighbours_beyond_the_width_lend_nothing() -> None:
    settings = RecallSettings(neighbour_width=1)
    ranked = fuse({"vector": ["a"], "text": [], "entity": []}, by_id(memory("a")), settings, NOW)
    placed = in_context(ranked, {"a": [Neighbour(memory("far"), 2)]}, settings, NOW)
    assert [c.memory.id for c in placed] == ["a"]


def test_the_store_finds_neighbours_in_the_order_a_session_was_said(store: Store) -> None:
    add = store.memories.add
    t = NOW - timedelta(days=1)
    first = add("we met at the station", type="episodic", session_id="s1", now=t)
    other = add("an episode of another session", type="episodic", session_id="s2", now=t)
    fact = add("a fact said in the session", type="semantic", session_id="s1", now=t)
    second = add("she told me about the job", type="episodic", session_id="s1", now=t)
    gone = add("said and archived", type="episodic", session_id="s1", now=t)
    store.memories.archive(gone.id)
    third = add("then we took the train", type="episodic", session_id="s1", now=t)
    # Made earlier, stored later: the order is when it was said.
    zeroth = add("before we met", type="episodic", session_id="s1", now=t - timedelta(hours=1))
    loose = add("an episode of no session", type="episodic", now=t)
    found = store.memories.around([second.id, fact.id, loose.id, other.id], 2)
    assert {seed: [(n.memory.id, n.distance) for n in found[seed]] for seed in found} == {
        second.id: [(first.id, 1), (third.id, 1), (zeroth.id, 2)]
    }
    assert store.memories.around([second.id], 0) == {}


def test_recall_packs_what_was_said_beside_a_hit(store: Store) -> None:
    t = NOW - timedelta(days=2)
    asked = store.memories.add(
        "Caroline asked what I have been researching lately", type="episodic", session_id="s1",
        now=t,
    )  # fmt: skip
    answer = store.memories.add(
        "Adoption agencies for a child of my own", type="episodic", session_id="s1", now=t
    )
    store.memories.add("We had lunch by the harbour", type="episodic", session_id="s2", now=t)
    with Recaller(store) as recaller:
        result = recaller.recall("What have I been researching?", now=NOW, mark=False)
        ranked = {c.memory.id: c for c in result.ranked}
        assert answer.id in ranked and ranked[answer.id].explanation.beside == asked.id
        assert ranked[answer.id].explanation.ranks == {}
        assert answer.id in result.packed_ids
        (shown,) = [i for i in result.to_json()["ranked"] if i["id"] == answer.id]
        assert shown["beside"] == asked.id
    with Recaller(store, RecallSettings.article()) as recaller:
        result = recaller.recall("What have I been researching?", now=NOW, mark=False)
        assert [c.memory.id for c in result.ranked] == [asked.id]


# -- the days a question names -------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "windows"),
    [
        ("What did Tim say on 16 November, 2023?", [(date(2023, 11, 16),) * 2]),
        ("Which book did he finish on 8th December, 2023?", [(date(2023, 12, 8),) * 2]),
        ("Where was the picture shared on December 1,2023 taken?", [(date(2023, 12, 1),) * 2]),
        ("What did she say, as mentioned on November 6, 2023?", [(date(2023, 11, 6),) * 2]),
        ("the note of 2024-02-29", [(date(2024, 2, 29),) * 2]),
        ("What did John share in January 2024?", [(date(2024, 1, 1), date(2024, 1, 31))]),
        ("What did I do in May, 2023?", [(date(2023, 5, 1), date(2023, 5, 31))]),
        ("What deal did John get in December?", [(date(2024, 12, 1), date(2024, 12, 31))]),
        ("What happened in March?", [(date(2025, 3, 1), date(2025, 3, 31))]),
        ("What did I say yesterday?", [(date(2025, 5, 31),) * 2]),
        ("and today?", [(date(2025, 6, 1),) * 2]),
        ("What did we plan last week?", [(date(2025, 5, 25), date(2025, 5, 31))]),
        ("What did I buy last month?", [(date(2025, 5, 1), date(2025, 5, 31))]),
        # Relative words are relative to the named date, not to now: only the date counts.
        ("His issue last week, as mentioned on 6 November, 2023", [(date(2023, 11, 6),) * 2]),
        # Not dates: a modal "may", a day without a year, no time at all.
        ("May I ask what you may know?", []),
        ("the 31st of the month", []),
        # An impossible day still names its month.
        ("on 31 February, 2023", [(date(2023, 2, 1), date(2023, 2, 28))]),
        ("What does Caroline research?", []),
    ],
)
def test_named_days(question: str, windows: list[tuple[date, date]]) -> None:
    now = datetime(2025, 6, 1, 12, 0).astimezone()
    assert named_days(question, now) == windows


def test_a_memory_made_on_the_named_day_scores_one_plus_the_boost_times_as_much() -> None:
    on_day = memory("on", made=datetime(2023, 11, 16, 15, 0).astimezone())
    before = memory("before", made=datetime(2023, 11, 15, 15, 0).astimezone())
    ranked = fuse(
        {"vector": ["before", "on"], "text": [], "entity": []},
        by_id(on_day, before),
        DEFAULTS,
        NOW,
        decay=False,
    )
    boosted = at_time(ranked, "What did Tim say on 16 November, 2023?", DEFAULTS, NOW)
    got = {c.memory.id: c.explanation for c in boosted}
    assert got["on"].time == 2.0 and got["on"].score == pytest.approx(2 * 2 / 12, rel=1e-12)
    assert got["before"].time == 1.0 and got["before"].score == pytest.approx(2 / 11)
    assert [c.memory.id for c in boosted] == ["on", "before"]
    assert boosted[0].recalled().to_json()["time"] == 2.0
    # Off (the article), or no day named: the list as fused.
    assert at_time(ranked, "on 16 November, 2023", ARTICLE, NOW) == ranked
    assert at_time(ranked, "What did Tim say?", DEFAULTS, NOW) == ranked


# -- the article's path --------------------------------------------------------------------


def test_with_the_new_settings_off_recall_is_the_articles(store: Store) -> None:
    t = datetime(2023, 11, 16, 15, 0).astimezone()
    for n in range(6):
        store.memories.add(
            f"Tim hurt his ankle playing football, part {n}",
            type="episodic",
            session_id="s1",
            entities=["Tim"],
            now=t + timedelta(minutes=n),
        )
        store.memories.add(f"small talk {n}", type="episodic", session_id="s1", now=t)
    question = "What did Tim say about his ankle on 16 November, 2023?"
    off = RecallSettings(
        rrf_k=60,
        min_score=0.005,
        leg_weights={"vector": 1, "text": 1, "entity": 1},
        neighbour_share=0,
        time_boost=0,
    )
    with Recaller(store, off) as recaller:
        plain = recaller.recall(question, now=NOW, mark=False)
    with Recaller(store, RecallSettings.article()) as recaller:
        article = recaller.recall(question, now=NOW, mark=False)
    assert plain.to_json()["ranked"] == article.to_json()["ranked"]
    for item in article.to_json()["ranked"]:
        ranks = [rank for rank in item["ranks"].values() if rank is not None]
        assert item["rrf"] == pytest.approx(sum(1 / (60 + rank) for rank in ranks), rel=1e-12)
        assert item["score"] == pytest.approx(item["rrf"] * item["decay"] * item["weight"])
        assert "beside" not in item and "time" not in item
    assert all(c.memory.content.startswith("Tim") for c in article.ranked)


PEOPLE = ["Caroline", "Melanie", "Jon", "Gina"]
THINGS = ["the adoption agency", "a pottery class", "the marathon", "a camping trip"]


def fill_sessions(
    store: Store, *, sessions: int, turns: int, semantic_every: int
) -> tuple[list[str], list[str]]:
    """Sessions of turns in which the four people talk about the four things (every
    `semantic_every`-th turn a semantic memory, the rest episodic), three days ago."""
    t = NOW - timedelta(days=3)
    for session in range(sessions):
        for turn in range(turns):
            who, what = PEOPLE[(session + turn) % 4], THINGS[(session * turn) % 4]
            store.memories.add(
                f"{who} talked about {what} in turn {turn}",
                type="episodic" if turn % semantic_every else "semantic",
                session_id=f"s{session}",
                entities=[who],
                now=t + timedelta(minutes=session * 60 + turn),
            )
    return PEOPLE, THINGS


def test_neighbours_read_on_the_legs_threads_rank_as_read_after_fusion(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The legs' threads read the neighbourhoods of their first episodic hits while the other
    legs run; the ranking is exactly the one read after fusion on the caller's thread, and
    the caller reads none of it itself."""
    people, things = fill_sessions(store, sessions=6, turns=9, semantic_every=4)
    questions = [f"What did {who} say about {what}?" for who in people for what in things[:3]] + [
        "Who went camping?",
        "Tell me about the marathon",
        "What did Gina do?",
    ]
    callers: list[str] = []
    real_around = store.memories.around

    def spy(*args: object, **kwargs: object) -> object:
        callers.append(threading.current_thread().name)
        return real_around(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store.memories, "around", spy)
    with (
        Recaller(store, early_neighbours=True) as early,
        Recaller(store) as late,
    ):
        lent = 0
        for question in questions:
            callers.clear()
            ours = early.recall(question, now=NOW, mark=False)
            assert threading.current_thread().name not in callers
            theirs = late.recall(question, now=NOW, mark=False)
            assert [(c.memory.id, c.score, c.explanation.beside) for c in ours.ranked] == [
                (c.memory.id, c.score, c.explanation.beside) for c in theirs.ranked
            ]
            assert ours.block == theirs.block
            lent += sum(1 for c in ours.ranked if c.explanation.beside)
        assert lent > 10  # the neighbourhood did change these rankings


def test_a_recall_reads_its_neighbourhoods_once_for_the_fused_lenders(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By default the neighbourhoods are read in one go after fusion, on the caller's
    thread, and only those of the fused list's lenders (not each leg's own first hits)."""
    people, things = fill_sessions(store, sessions=6, turns=9, semantic_every=4)
    asked: list[tuple[str, list[str]]] = []
    real_around = store.memories.around

    def spy(memory_ids: list[str], *args: object, **kwargs: object) -> object:
        asked.append((threading.current_thread().name, list(memory_ids)))
        return real_around(memory_ids, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store.memories, "around", spy)
    with Recaller(store) as recaller:
        lent = 0
        for question in [f"What did {who} say about {things[0]}?" for who in people]:
            asked.clear()
            found = recaller.recall(question, now=NOW, mark=False)
            assert len(asked) == 1
            thread, ids = asked[0]
            assert thread == threading.current_thread().name
            assert 0 < len(ids) <= recaller.settings.neighbour_seeds
            by_id = {c.memory.id: c.memory for c in found.ranked}
            assert all(by_id[i].type is MemoryType.EPISODIC and by_id[i].session_id for i in ids)
            lent += sum(1 for c in found.ranked if c.explanation.beside)
        assert lent > 0


def test_one_lane_and_two_lanes_give_the_identical_recall(store: Store) -> None:
    """The legs one after another on one thread or side by side on two: the same floats,
    the same block."""
    from tests.fakes.embedder import HashingEmbedder

    embedder = HashingEmbedder()
    people, things = fill_sessions(store, sessions=5, turns=8, semantic_every=3)
    model = store.vectors.ensure_model(embedder.model_id, embedder.dimension)
    memories = store.memories.list(status="active")
    vectors = embedder.embed([m.content for m in memories])
    store.vectors.put_many(model, zip([m.id for m in memories], vectors, strict=True))
    store.vectors.set_active_model(embedder.model_id)
    questions = [f"What did {who} say about {what}?" for who in people for what in things]
    with (
        Recaller(store, embedder=embedder, lanes=1) as one,
        Recaller(store, embedder=embedder, lanes=2) as two,
    ):
        for question in questions:
            ours = one.recall(question, now=NOW, mark=False)
            theirs = two.recall(question, now=NOW, mark=False)
            assert ours.legs == theirs.legs == {"vector": "ok", "text": "ok", "entity": "ok"}
            assert ours.record().ranked == theirs.record().ranked
            assert ours.record().below_floor == theirs.record().below_floor
            assert ours.block == theirs.block and ours.block
