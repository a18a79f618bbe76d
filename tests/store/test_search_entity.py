"""The entity leg: names said in the query, whole words, any case or form, ranked with care."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from timothy.store import Store
from timothy.text import cut_names, name_candidates

T0 = datetime(2025, 1, 1, tzinfo=UTC)


def test_a_name_matches_whole_words_only(store: Store) -> None:
    al = store.memories.add("He takes the train", entities=["Al"])
    assert store.search.entity("I always take the bus", 30) == []
    assert store.search.entity("almost", 30) == []
    assert store.search.entity("What does Al take?", 30) == [al.id]
    assert store.search.entity("al's train", 30) == [al.id]


@pytest.mark.parametrize(
    "query",
    ["Zoë", "zoë", "ZOË", "Zoe\u0308 said", "ｚｏë", "Z\u200boë", "What did zoë like?"],
)
def test_case_and_unicode_forms_match(store: Store, query: str) -> None:
    zoe = store.memories.add("Likes green tea", entities=["Zoë"])
    store.memories.add("Likes coffee", entities=["Zoe"])
    assert store.search.entity(query, 30) == [zoe.id]


def test_names_of_several_words_and_inner_punctuation(store: Store) -> None:
    york = store.memories.add("A city", entities=["New York"])
    obrien = store.memories.add("A neighbour", entities=["O'Brien"])
    mary = store.memories.add("A cousin", entities=["Mary-Jane"])
    smith = store.memories.add("The dentist", entities=["Dr. Smith"])
    assert store.search.entity("trip to new   york next week", 30) == [york.id]
    assert store.search.entity("York", 30) == []
    assert store.search.entity("ask O'Brien", 30) == [obrien.id]
    assert store.search.entity("ask o\u2019brien", 30) == []  # a different apostrophe
    assert store.search.entity("call mary-jane", 30) == [mary.id]
    assert store.search.entity("see Dr. Smith", 30) == [smith.id]


def test_the_longest_name_wins_where_names_overlap(store: Store) -> None:
    city = store.memories.add("Big apple", entities=["New York City"])
    york = store.memories.add("Old city in England", entities=["York"])
    assert store.search.entity("flights to New York City", 30) == [city.id]
    assert store.search.entity("flights to York", 30) == [york.id]


def test_stop_words_are_not_taken_for_names(store: Store) -> None:
    store.memories.add("A friend", entities=["Will"])
    store.memories.add("The department", entities=["IT"])
    assert store.search.entity("will it be done by then?", 30) == []


def test_ranked_by_names_then_relevance_then_recency(store: Store) -> None:
    add = store.memories.add
    both_old = add("Dinner together", entities=["Caroline", "Melanie"], now=T0)
    caroline_painting = add(
        "Caroline showed her painting", entities=["Caroline"], now=T0 + timedelta(days=1)
    )
    caroline_newest = add("Caroline went hiking", entities=["Caroline"], now=T0 + timedelta(days=3))
    caroline_middle = add("Caroline cooked", entities=["Caroline"], now=T0 + timedelta(days=2))
    melanie = add("Melanie's painting of a sunset", entities=["Melanie"], now=T0)
    found = store.search.entity("Did Caroline and Melanie talk about painting?", 30)
    assert found[0] == both_old.id  # two names beat one
    # One name each: those matching the rest of the query ("talk", "painting") by bm25 ...
    assert set(found[1:3]) == {caroline_painting.id, melanie.id}
    # ... then the rest, most recently confirmed first.
    assert found[3:] == [caroline_newest.id, caroline_middle.id]


def test_without_other_words_the_most_recently_confirmed_come_first(store: Store) -> None:
    older = store.memories.add("one", entities=["Tim"], now=T0)
    newer = store.memories.add("two", entities=["Tim"], now=T0 + timedelta(days=1))
    reconfirmed = store.memories.add("three", entities=["Tim"], now=T0)
    store.memories.reconfirm(reconfirmed.id, now=T0 + timedelta(days=5))
    assert store.search.entity("Tim", 30) == [reconfirmed.id, newer.id, older.id]
    assert store.search.entity("Tim", 2) == [reconfirmed.id, newer.id]


def test_only_active_memories(store: Store) -> None:
    active = store.memories.add("active", entities=["Gina"])
    store.memories.stage("staged", entities=["Gina"])
    archived = store.memories.add("archived", entities=["Gina"])
    store.memories.archive(archived.id)
    rejected = store.memories.add("rejected", entities=["Gina"])
    store.memories.reject(rejected.id)
    assert store.search.entity("Gina", 30) == [active.id]


def test_name_candidates_offer_both_forms() -> None:
    found = {norm for _, _, norm in name_candidates("Ask Dr. O'Brien", 3)}
    assert {"ask", "dr", "brien", "dr o", "dr. o'brien", "o'brien", "o brien"} <= found
    assert all(norm not in {"the", "of the"} for _, _, norm in name_candidates("of the"))


def test_named_lists_the_names_the_entity_leg_matches(store: Store) -> None:
    store.memories.add("A city", entities=["New York City"])
    store.memories.add("Old city in England", entities=["York"])
    store.memories.add("A friend", entities=["Zoë"])
    assert store.search.named("Did Zoe\u0308 like New York City or York?") == [
        "new york city",
        "zoë",
        "york",
    ]
    assert store.search.named("always almost") == []


@pytest.mark.parametrize(
    ("query", "names", "expected"),
    [
        ("What does Zoë drink?", ["zoë"], "What does drink?"),
        ("What is Zoë's favourite tea?", ["zoë"], "What is favourite tea?"),
        ("What is ZOË\u2019S favourite tea?", ["zoë"], "What is favourite tea?"),
        ("Did Caroline and Melanie paint?", ["caroline", "melanie"], "Did and paint?"),
        ("Flights to New York City and York", ["new york city"], "Flights to and York"),
        ("Al always takes the train", ["al"], "always takes the train"),
        ("Zoe\u0308 and the ｔｅａ", ["zoë"], "and the tea"),
        ("Ask Dr. O'Brien about Straße", ["dr. o'brien"], "Ask about Straße"),
        ("Straße Maß and more", ["mass"], "Straße and more"),
        ("Z\u200boë likes tea", ["zoë"], "likes tea"),
        ("No names here", [], "No names here"),
    ],
)
def test_cut_names_removes_names_and_keeps_the_rest_as_written(
    query: str, names: list[str], expected: str
) -> None:
    assert cut_names(query, names) == expected
