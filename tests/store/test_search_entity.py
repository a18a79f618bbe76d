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
    store.memories.add("Likes coffee", entities=["Zoey"])
    assert store.search.entity(query, 30) == [zoe.id]


@pytest.mark.parametrize(
    ("stored", "typed"),
    [
        ("José", "Jose"),
        ("Jose", "José"),
        ("Zoë", "zoe"),
        ("Zoe", "ZOË"),
        ("François", "Francois"),
        ("Müller", "MULLER"),
        ("Muller", "Müller"),
        ("Dvořák", "dvorak"),
        ("Straße", "Strasse"),
        ("Nguyễn Văn An", "nguyen van an"),
    ],
)
def test_a_name_is_found_with_or_without_its_accents(store: Store, stored: str, typed: str) -> None:
    named = store.memories.add("Lives next door", entities=[stored])
    store.memories.add("Someone else", entities=["Joseph"])
    assert store.search.named(f"Where does {typed} live?") != []
    assert store.search.entity(f"Where does {typed} live?", 30) == [named.id]


def test_only_the_accents_of_latin_letters_are_folded(store: Store) -> None:
    """Letters that are not an accented form, and other scripts' marks, still tell names
    apart: no fuzzy matching."""
    oyvind = store.memories.add("A colleague", entities=["Øyvind"])
    greek = store.memories.add("A philosopher", entities=["Σωκράτης"])
    store.memories.add("A friend", entities=["John"])
    assert store.search.entity("Oyvind", 30) == []
    assert store.search.entity("øyvind", 30) == [oyvind.id]
    assert store.search.entity("Σωκρατης", 30) == []
    assert store.search.entity("ΣΩΚΡΆΤΗΣ", 30) == [greek.id]
    assert store.search.entity("Jon", 30) == []


def test_a_name_counts_once_however_a_memory_spells_it(store: Store) -> None:
    both = store.memories.add("Old note", entities=["José", "Jose"], now=T0)
    newer = store.memories.add("New note", entities=["Jose"], now=T0 + timedelta(days=1))
    assert store.search.entity("Jose", 30) == [newer.id, both.id]
    assert store.memories.get(both.id).entities == ("José", "Jose")


def test_an_accented_name_is_not_also_ranked_as_a_word_of_the_rest(store: Store) -> None:
    """The name is the entity leg's evidence; what else the question says ranks among the
    named memories. "José" in the question is the name, written as the memory writes it."""
    says_name = store.memories.add("José went out", entities=["José"], now=T0)
    newer = store.memories.add("Went out", entities=["José"], now=T0 + timedelta(days=1))
    assert store.search.entity("What about José?", 30) == [newer.id, says_name.id]


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
        "zoe",
        "york",
    ]
    assert store.search.named("always almost") == []


@pytest.mark.parametrize(
    ("query", "names", "expected"),
    [
        ("What does Zoë drink?", ["zoe"], "What does drink?"),
        ("What does Zoe drink?", ["zoe"], "What does drink?"),
        ("What is Zoë's favourite tea?", ["zoe"], "What is favourite tea?"),
        ("What is ZOË\u2019S favourite tea?", ["zoe"], "What is favourite tea?"),
        ("Did Müller and Dvořák play?", ["muller", "dvorak"], "Did and play?"),
        ("Ask Nguye\u0302\u0303n Văn An", ["nguyen van an"], "Ask"),
        ("Did Caroline and Melanie paint?", ["caroline", "melanie"], "Did and paint?"),
        ("Flights to New York City and York", ["new york city"], "Flights to and York"),
        ("Al always takes the train", ["al"], "always takes the train"),
        ("Zoe\u0308 and the ｔｅａ", ["zoe"], "and the tea"),
        ("Ask Dr. O'Brien about Straße", ["dr. o'brien"], "Ask about Straße"),
        ("Straße Maß and more", ["mass"], "Straße and more"),
        ("Z\u200boë likes tea", ["zoe"], "likes tea"),
        ("Σωκράτης and Øyvind", ["σωκρατης", "oyvind"], "Σωκράτης and Øyvind"),
        ("No names here", [], "No names here"),
    ],
)
def test_cut_names_removes_names_and_keeps_the_rest_as_written(
    query: str, names: list[str], expected: str
) -> None:
    assert cut_names(query, names) == expected
