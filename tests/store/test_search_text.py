"""The text leg: OR of quoted terms, bm25 order, and no user text can change or break it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from timothy.store import Store
from timothy.store.search import fts_total, index_terms, matched_terms
from timothy.text import fts_query, query_terms, spellings

CORPUS = [
    "I prefer aisle seats on long-haul flights",
    "My birthday is on the third of March",
    "The NEAR field team meets on Mondays",
    "Bob and Alice never argue about col settings",
    "Minus x equals negative x, said the teacher",
    "Parentheses (like these) confuse some parsers",
    "Stars * and carets ^ appear in regular expressions",
    "The café serves crêpes and naïve cocktails",
    "Zoë loves 😀 emoji and 東京 trips",
    'A quote " inside a memory',
    "content: a memory that mentions a column name",
    "NOT every fact is negative; OR is a word too, AND so is and",
]


@pytest.fixture(scope="module")
def corpus_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    with Store.open(Path(tmp_path_factory.mktemp("fts"))) as store:
        for text in CORPUS:
            store.memories.add(text)
        yield store


def match(store: Store, expression: str) -> set[int]:
    with store.db.read() as conn:
        return {
            int(row[0])
            for row in conn.execute(
                "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?", (expression,)
            )
        }


def test_a_two_part_question_finds_both_parts(store: Store) -> None:
    seat = store.memories.add("I prefer aisle seats on long-haul flights", type="preference")
    birthday = store.memories.add("My birthday is on 3 March")
    store.memories.add("The weather in Lisbon is mild")
    found = store.search.text(
        "What seat do I prefer on long-haul flights, and when is my birthday?", 30
    )
    assert set(found) == {seat.id, birthday.id}
    assert found[0] == seat.id  # covers more of the query


def test_ranked_by_bm25_and_active_only(store: Store) -> None:
    both = store.memories.add("red apples and green pears")
    one = store.memories.add("red cars")
    staged = store.memories.stage("red apples green pears red")
    archived = store.memories.add("red apples green pears")
    store.memories.archive(archived.id)
    old = store.memories.add("green pears and red apples, old version")
    store.memories.supersede(old.id, "pears")
    found = store.search.text("red apples, green pears", 30)
    assert found[0] == both.id and one.id in found
    assert staged.id not in found and archived.id not in found and old.id not in found


def test_a_rare_word_counts_for_more_than_a_frequent_one(store: Store) -> None:
    """As bm25 weighs terms (on the server too): a memory that shares the question's rare
    word comes before one that says its frequent word three times."""
    for day in range(8):
        store.memories.add(f"Caroline went running on day {day}")
    frequent = store.memories.add("Caroline told Caroline's friend about Caroline's sister")
    rare = store.memories.add("The adoption agency called back")
    found = store.search.text("What did Caroline say about the adoption?", 30)
    assert found[0] == rare.id and found[1] == frequent.id


def test_a_rare_word_counts_for_more_in_the_entity_leg_too(store: Store) -> None:
    """Among memories that name the same people, the one sharing the question's rare word
    comes first."""
    for day in range(6):
        store.memories.add(f"Caroline went running again on day {day}", entities=["Caroline"])
    frequent = store.memories.add("Caroline: running, running, running", entities=["Caroline"])
    rare = store.memories.add("Caroline mentioned the adoption", entities=["Caroline"])
    found = store.search.entity("Was Caroline running to the adoption?", 30)
    assert found[0] == rare.id and frequent.id in found[1:]


def test_the_limit_is_respected(store: Store) -> None:
    for i in range(12):
        store.memories.add(f"tea note {i}")
    assert len(store.search.text("tea", 5)) == 5
    assert store.search.text("tea", 0) == []


@pytest.mark.parametrize(
    "query",
    [
        "",
        "   ",
        '"',
        '""',
        "*",
        "NEAR",
        "NEAR(a b, 2)",
        "a AND b",
        "a OR b NOT c",
        "-x",
        "col:foo",
        "content:memory",
        "(",
        ")",
        "((a)",
        "^start",
        "{a b}",
        "a + b",
        "😀",
        "東京",
        "\x00",
        "what?",
        "'; DROP TABLE memories; --",
    ],
)
def test_fts_syntax_in_a_query_never_raises(corpus_store: Store, query: str) -> None:
    corpus_store.search.text(query, 30)
    corpus_store.search.entity(query, 30)


_SYNTAX = st.sampled_from(
    [
        '"',
        "*",
        "NEAR",
        "NEAR(",
        "AND",
        "OR",
        "NOT",
        "-",
        ":",
        "col:",
        "content:",
        "(",
        ")",
        "{",
        "}",
        "^",
        "+",
        " ",
        "😀",
        "\x00",
        "'",
    ]
)
_WORDS = st.sampled_from(sorted({w for text in CORPUS for w in query_terms(text)}))
_QUERY = st.lists(st.one_of(_SYNTAX, _WORDS, st.text(max_size=8)), max_size=16).map("".join)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_QUERY)
def test_a_query_means_any_of_its_words_whatever_it_contains(
    corpus_store: Store, query: str
) -> None:
    expression = fts_query(query)
    terms = query_terms(query)
    if expression is None:
        assert terms == []
        assert corpus_store.search.text(query, 100) == []
        return
    # The expression is exactly the terms (each any of its "ss"/"ß" spellings), each quoted,
    # joined by OR: nothing else survives.
    groups = [[f'"{form}"' for form in spellings(term)] for term in terms]
    assert expression == " OR ".join(
        group[0] if len(group) == 1 else f"({' OR '.join(group)})" for group in groups
    )
    expected: set[int] = set()
    for group in groups:
        for form in group:
            expected |= match(corpus_store, form)
    assert match(corpus_store, expression) == expected
    found = corpus_store.search.text(query, 100)
    seqs = corpus_store.memories.get_many(found)
    assert len(found) == len(expected) == len(seqs)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text())
def test_arbitrary_text_never_raises(corpus_store: Store, query: str) -> None:
    corpus_store.search.text(query, 30)
    corpus_store.search.entity(query, 30)
    for operator in ("OR", "AND"):
        expression = fts_query(query, operator=operator, prefix_last=operator == "AND")
        if expression is not None:
            match(corpus_store, expression)


@pytest.mark.sqlite_only  # FTS5's own record: the file's text index
def test_the_index_size_is_read_from_fts5s_own_count(store: Store) -> None:
    """text_hits' `total` comes from FTS5's averages record, not a count of the whole index;
    it must follow adds, edits, archiving and forgetting for good as count(*) does."""

    def both() -> tuple[int, int]:
        with store.db.read() as conn:
            counted = conn.execute("SELECT count(*) FROM memories_fts").fetchall()[0][0]
            return fts_total(conn), int(counted)

    assert both() == (0, 0)
    memories = [store.memories.add(f"the tea garden number {i}") for i in range(300)]
    assert both() == (300, 300)
    store.memories.supersede(memories[0].id, "the tea garden, renamed")
    store.memories.archive(memories[1].id)
    store.memories.forget([memories[2].id])
    total, counted = both()
    assert total == counted and total >= 298
    assert store.search.text_hits("tea garden", 5).total == counted


@pytest.mark.sqlite_only  # FTS5's own records: the file's text index
def test_term_counts_are_kept_for_one_state_of_the_index_only(store: Store) -> None:
    """text_hits keeps how many memories hold each term while the index is unchanged; any
    write, on this connection or another, is counted afresh (here: an add on another
    handle of the file, an edit, an archive and a forget for good)."""

    def counted(term: str) -> int:
        with store.db.read() as conn:
            return int(
                conn.execute(
                    "SELECT count(*) FROM memories_fts WHERE memories_fts MATCH ?", (f'"{term}"',)
                ).fetchall()[0][0]
            )

    statements: list[str] = []

    def documents(query: str) -> dict[str, int]:
        statements.clear()
        with store.db.read() as conn:
            conn.set_profile(lambda sql, _: statements.append(sql))
        try:
            return dict(store.search.text_hits(query, 10).documents)
        finally:
            with store.db.read() as conn:
                conn.set_profile(None)

    first = [store.memories.add(f"green tea in the garden {i}") for i in range(5)]
    store.memories.add("black coffee")
    assert documents("green tea garden") == {"green": 5, "tea": 5, "garden": 5}
    assert any("count(*)" in sql for sql in statements)
    assert documents("green tea garden") == {"green": 5, "tea": 5, "garden": 5}
    assert not any("count(*)" in sql for sql in statements)  # kept: nothing changed
    assert documents("coffee and tea") == {"coffee": 1, "tea": 5}
    with Store(store.db.path) as again:  # another connection to the same file
        again.memories.add("tea for two")
    assert documents("green tea garden") == {"green": 5, "tea": 6, "garden": 5}
    store.memories.supersede(first[0].id, "green juice")
    assert documents("green tea") == {"green": counted("green"), "tea": counted("tea")}
    store.memories.archive(first[1].id)
    store.memories.forget([first[2].id])
    found = documents("green tea garden")
    assert found == {term: counted(term) for term in ("green", "tea", "garden")}
    assert found["garden"] == 4  # the index still holds the superseded and archived rows


def test_a_hits_evidence_is_the_query_terms_its_text_holds_as_the_index_stems_them(
    store: Store,
) -> None:
    """text_hits' `matched`: a query term counts for a hit when every index term it stems to
    is in the hit's text or day ("painting" finds "painted"), whatever its case or accents;
    a term the text lacks is left out. The kept term lists share one string per term."""
    painted = store.memories.add("Caroline painted a sunrise over the café")
    baked = store.memories.add("Melanie baked bread")
    hits = store.search.text_hits("Painting the CAFE sunrise with Melanie", 10)
    assert sorted(hits.ids) == sorted([painted.id, baked.id])
    assert hits.matched[baked.id] == ("melanie",)
    assert set(hits.matched[painted.id]) == {"painting", "cafe", "sunrise"}  # query_terms folds
    assert index_terms("painted sunrises, painting") == ("paint", "sunris")
    assert matched_terms(["bread", "sunrise", "Toast"], "sunrises and bread") == (
        "bread",
        "sunrise",
    )
    assert matched_terms([], "anything") == ()
    first, second = index_terms("the garden party"), index_terms("a garden of roses")
    assert first[1] is second[1]  # "garden": one string for every kept text


def test_a_word_with_sharp_s_is_found_however_the_question_spells_it(store: Store) -> None:
    """Case folding makes a typed "Straße" "strasse", but the index keeps "ß" as the memory
    wrote it: the text leg looks for the spellings the memories use, and a hit's evidence
    names the spelling it holds. Without it neither "Straße" nor "strasse" found "Straße"."""
    bakery = store.memories.add("The bakery on Schillerstraße opens at seven")
    club = store.memories.add("The Fussball club trains on Tuesdays")
    store.memories.add("The weather in Lisbon is mild")
    assert store.search.text("Schillerstraße", 10) == [bakery.id]
    assert store.search.text("what is on schillerstrasse", 10) == [bakery.id]
    assert store.search.text("Fußball", 10) == [club.id]
    hits = store.search.text_hits("When does the Schillerstraße bakery open?", 10)
    assert hits.ids == [bakery.id]
    assert set(hits.matched[bakery.id]) == {"schillerstraße", "bakery", "open"}
    assert hits.documents["schillerstraße"] == 1
    # A word no memory spells with "ß" is looked for as typed.
    assert store.search.text("Where do I keep my address book?", 10) == []
