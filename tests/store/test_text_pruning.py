"""The text leg's pruned ranking (search.pruned_ranking) answers exactly as the plain SQL.

The plain SQL ranks every row that shares a word with the question; the pruned one leaves
out the rows whose only words are the commonest ones, when they cannot reach the list.
Both must give the same memories in the same order, ties (newest first) included.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from timothy.store import Store
from timothy.store.search import pruned_ranking
from timothy.text import query_terms

# Words by how common they are: a few in most memories, most in a few.
COMMON = ["smith", "today", "said", "good"]
MIDDLE = ["pottery", "class", "paris", "march", "holiday", "garden", "train", "window"]
RARE = ["adoption", "agency", "violin", "kayak", "sourdough", "tango", "glacier", "origami"]
WORDS = COMMON + MIDDLE + RARE


def sentence(rng: random.Random) -> str:
    words = [w for w in COMMON if rng.random() < 0.7]
    words += rng.sample(MIDDLE, rng.randint(0, 3))
    if rng.random() < 0.15:
        words += rng.sample(RARE, rng.randint(1, 2))
    # Some words twice, and some filler, so term frequencies and lengths differ.
    words += [w for w in words if rng.random() < 0.2]
    words += ["and", "then", "it", "was"][: rng.randint(0, 4)]
    rng.shuffle(words)
    return " ".join(words) or "nothing"


@pytest.fixture(scope="module")
def word_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Store]:
    rng = random.Random(17)
    with Store.open(Path(tmp_path_factory.mktemp("pruning"))) as store:
        texts = [sentence(rng) for _ in range(300)]
        texts += texts[:40]  # identical rows: equal scores, ordered newest first
        for text in texts:
            roll = rng.random()
            if roll < 0.1:
                store.memories.stage(text)
            else:
                memory = store.memories.add(text)
                if roll < 0.2:
                    store.memories.archive(memory.id)
        yield store


def both_ways(store: Store, query: str, limit: int) -> tuple[object, object]:
    search = store.search
    search.prune_text = False  # type: ignore[attr-defined]
    try:
        plain = (search.text_hits(query, limit), search.text(query, limit))
    finally:
        search.prune_text = True  # type: ignore[attr-defined]
    pruned = (search.text_hits(query, limit), search.text(query, limit))
    return plain, pruned


def pruned_applies(store: Store, query: str, limit: int) -> bool:
    terms = query_terms(query)
    with store.db.read() as conn:
        documents = store.search._documents(conn, terms)  # type: ignore[attr-defined]
        return pruned_ranking(conn, terms, documents, limit) is not None


QUERIES = [
    "Did Smith say the adoption agency called today?",
    "good pottery class in Paris",
    "smith today said good violin",
    "smith garden",
    "What did Smith say about the kayak and the glacier?",
    "said good today smith",  # nothing but common words
    "tango",
]


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("limit", [1, 3, 10, 30, 200])
def test_the_pruned_ranking_is_the_plain_sqls(word_store: Store, query: str, limit: int) -> None:
    plain, pruned = both_ways(word_store, query, limit)
    assert pruned == plain


def test_the_pruning_applies_where_common_words_meet_rarer_ones(word_store: Store) -> None:
    """So the tests above compare two different paths, not one path with itself."""
    assert pruned_applies(word_store, "smith today said good violin", 3)
    assert pruned_applies(word_store, "Did Smith say the adoption agency called today?", 10)
    assert pruned_applies(word_store, "smith garden", 30)
    assert pruned_applies(word_store, "good pottery class in Paris", 30)
    # Nothing to leave out: every word is common.
    assert not pruned_applies(word_store, "said good today smith", 10)


def test_a_pasted_document_is_ranked_by_the_plain_sql(word_store: Store) -> None:
    document = "smith today violin " + " ".join(f"word{n}" for n in range(40))
    assert not pruned_applies(word_store, document, 10)
    assert pruned_applies(word_store, "smith today violin", 3)
    plain, pruned = both_ways(word_store, document, 10)
    assert pruned == plain


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    words=st.lists(st.sampled_from([*WORDS, "unknown", "zebra"]), min_size=1, max_size=7),
    limit=st.integers(min_value=1, max_value=60),
)
def test_any_question_is_ranked_as_the_plain_sql_ranks_it(
    word_store: Store, words: list[str], limit: int
) -> None:
    query = " ".join(words)
    plain, pruned = both_ways(word_store, query, limit)
    assert pruned == plain


def test_after_a_write_the_pruned_ranking_reads_the_new_index(tmp_path: Path) -> None:
    rng = random.Random(3)
    with Store.open(tmp_path) as store:
        for _ in range(120):
            store.memories.add(sentence(rng))
        query = "smith today said garden violin"
        first = both_ways(store, query, 5)
        assert first[0] == first[1]
        # The rarest word becomes common, and a memory that says it twice arrives.
        for _ in range(60):
            store.memories.add("violin today")
        newest = store.memories.add("violin violin garden")
        plain, pruned = both_ways(store, query, 5)
        assert pruned == plain
        assert newest.id in pruned[1]  # type: ignore[index]


def test_a_write_on_another_connection_is_seen_by_the_next_search(tmp_path: Path) -> None:
    """The counts and totals the pruned ranking weighs are read again once the index
    changed, whoever changed it."""
    rng = random.Random(5)
    with Store.open(tmp_path) as reader, Store.open(tmp_path) as writer:
        for _ in range(120):
            reader.memories.add(sentence(rng))
        query = "smith today said garden violin"
        assert pruned_applies(reader, query, 5)
        before = both_ways(reader, query, 5)
        assert before[0] == before[1]
        newest = writer.memories.add("violin garden violin garden")
        after = both_ways(reader, query, 5)
        assert after[0] == after[1]
        assert after[1] != before[1]
        assert after[1][1][0] == newest.id  # type: ignore[index]
