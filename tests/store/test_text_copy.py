"""On a server store, the text leg's in-process index (postgres/text_copy.py) answers exactly
what the text leg's SQL answers (the top 30 and its order, each term's memories, the store's
size), and follows every machine's writes."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from timothy.store.postgres import PostgresStore, text_copy
from timothy.store.postgres.search import (
    _ENTITY_ONLY_SQL,
    _ENTITY_SQL,
    _TEXT_SQL,
    named_entities,
)
from timothy.store.search import TextHits, index_terms
from timothy.text import query_terms, spelled_terms, with_spellings, words

# Words from very common to rare (the names recur in half the memories: the case where the
# article's OR-query matches most of the store).
COMMON = ["Caroline", "Melanie", "painting", "week"]
MIDDLE = ["pottery", "marathon", "camping", "guitar", "sunset", "Lisbon", "violin", "garden"]
RARE = ["adoption", "sourdough", "reunion", "chess", "telescope", "Reykjavik", "origami"]


def sentence(rng: random.Random) -> str:
    words = [rng.choice(COMMON)]
    if rng.random() < 0.5:
        words.append(rng.choice(COMMON))
    words += rng.sample(MIDDLE, rng.randint(0, 2))
    if rng.random() < 0.08:
        words.append(rng.choice(RARE))
    if rng.random() < 0.3:  # a word said twice weighs on ts_rank
        words.append(words[-1])
    rng.shuffle(words)
    return " ".join(["She", *words, "again"])


def queries(rng: random.Random, count: int) -> list[str]:
    found = [
        "Caroline",  # one common word: every match ties on rarity, ts_rank decides
        "What did Caroline paint last week?",
        "Melanie and the sourdough",
        "pottery in Lisbon with Caroline",
        "e-mail about the chess reunion",  # a phrase to to_tsquery: the server ranks it
        "nothing matches zebra",
    ]
    everything = COMMON + MIDDLE + RARE
    for _ in range(count):
        found.append(" ".join(rng.sample(everything, rng.randint(1, 5))) + "?")
    return found


def by_sql(store: PostgresStore, query: str, limit: int = 30) -> list[str]:
    """The text leg's SQL itself, run on the server (asked with the words' "ß" spellings)."""
    text = with_spellings(query)
    with store.db.read() as conn:
        return [str(row[1]) for row in conn.execute(_TEXT_SQL, {"text": text, "limit": limit})]


def hits_by_sql(store: PostgresStore, query: str) -> TextHits:
    """What text_hits answered when the server ranked every match."""
    ids = by_sql(store, query)
    if not ids or not query_terms(query):
        return TextHits([], {}, {}, 0)
    terms = [term for term in spelled_terms(query) if index_terms(term)]
    with store.db.read() as conn:
        documents = {
            term: int(
                conn.execute(
                    "SELECT count(*) FROM memories WHERE tsv @@ plainto_tsquery('english', %s)",
                    (term,),
                ).fetchone()[0]  # type: ignore[index]
            )
            for term in terms
        }
        total = int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])  # type: ignore[index]
        texts = {
            str(i): f"{c} {d}"
            for i, c, d in conn.execute(
                "SELECT id, content, day FROM memories WHERE id = ANY(%s)", (ids,)
            )
        }
    matched = {
        i: tuple(t for t in terms if set(index_terms(t)) <= set(index_terms(texts[i]))) for i in ids
    }
    return TextHits(ids, matched, documents, total)


def assert_same(store: PostgresStore, query: str) -> None:
    assert store.search.text(query, 30) == by_sql(store, query), query
    assert store.search.text(query, 7) == by_sql(store, query, 7), query
    assert store.search.text_hits(query, 30) == hits_by_sql(store, query), query


@pytest.fixture
def server(pg_url: str) -> Iterator[PostgresStore]:
    with PostgresStore(pg_url, follow_changes=False) as store:
        yield store


@pytest.fixture
def other(pg_url: str) -> Iterator[PostgresStore]:
    """Another machine on the same server."""
    with PostgresStore(pg_url, follow_changes=False) as store:
        yield store


def populate(store: PostgresStore, rng: random.Random, count: int) -> list[str]:
    with store.db.write():
        ids = [store.memories.add(sentence(rng)).id for _ in range(count)]
    with store.db.write():
        for memory_id in ids[::9]:
            store.memories.archive(memory_id)
        store.memories.stage("Caroline staged a sourdough chess reunion")
    return ids


def test_the_ranking_is_the_sqls_on_common_and_rare_words(server: PostgresStore) -> None:
    rng = random.Random(5)
    populate(server, rng, 400)
    for query in queries(rng, 60):
        assert_same(server, query)
    copy = server.search.text_copy()
    assert copy.size == 401


def test_another_machines_writes_are_seen_at_the_next_search(
    server: PostgresStore, other: PostgresStore
) -> None:
    rng = random.Random(6)
    ids = populate(server, rng, 200)
    asked = queries(rng, 20)
    for query in asked:
        assert_same(server, query)  # loaded: later writes come by the change rows
    # The other machine adds, edits, retires, restores and forgets.
    new = other.memories.add("Caroline found a telescope in Reykjavik").id
    staged = other.memories.stage("Melanie folds origami swans")
    edited = other.memories.supersede(ids[1], "Caroline swapped her violin for origami").id
    other.memories.archive(ids[2])
    other.memories.restore(ids[9])  # archived by populate
    other.memories.forget([ids[3]])
    for query in [*asked, "telescope Reykjavik", "origami", "Caroline violin"]:
        assert_same(server, query)
    assert server.search.text("telescope Reykjavik", 30)[0] == new
    assert staged.id not in server.search.text("origami", 30)
    other.memories.confirm(staged.id)
    assert server.search.text("origami swans", 30)[0] == staged.id
    assert edited in server.search.text("origami", 30)
    assert ids[1] not in server.search.text("violin", 30)


def test_many_changes_fold_into_new_postings(
    server: PostgresStore, other: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(text_copy, "_OVERLAY_MIN", 16)
    monkeypatch.setattr(text_copy, "_OVERLAY_SHARE", 1000)
    rng = random.Random(7)
    ids = populate(server, rng, 120)
    archived = set(ids[::9])
    asked = queries(rng, 15)
    assert_same(server, asked[0])
    copy = server.search.text_copy()
    for round_ in range(3):  # each round overflows the overlay: rebuilt with old seqs inside
        with other.db.write():
            for memory_id in ids[round_ + 1 :: 5]:
                if memory_id not in archived:
                    other.memories.archive(memory_id)
            for i in range(20):
                other.memories.add(f"{rng.choice(RARE)} {rng.choice(COMMON)} round {round_} {i}")
        for query in asked:
            assert_same(server, query)
        assert len(copy._overlay) <= 16
    assert copy.size == 120 + 1 + 60


def test_a_store_with_no_memories_and_words_it_never_saw(server: PostgresStore) -> None:
    assert server.search.text("Caroline", 30) == []
    assert server.search.text_hits("Caroline", 30) == TextHits([], {}, {}, 0)
    server.memories.add("Caroline likes zebras")
    assert_same(server, "Caroline and the zebras")
    assert_same(server, "unknown words only")


def entity_by_sql(store: PostgresStore, query: str, limit: int = 30) -> list[str]:
    """The entity leg as the server ranked it, counting the rarities itself."""
    with store.db.read() as conn:
        names = named_entities(conn, query)
        if not names:
            return []
        name_words = {word for name in names for word in words(name)}
        rest = " ".join(t for t in query_terms(query) if t not in name_words)
        sql = _ENTITY_SQL if rest else _ENTITY_ONLY_SQL
        params = {"names": names, "limit": limit, "text": rest}
        return [str(row[0]) for row in conn.execute(sql, params)]


def test_the_entity_leg_ranks_as_its_sql_with_the_rarities_from_the_index(
    server: PostgresStore, other: PostgresStore
) -> None:
    rng = random.Random(8)
    people = ["Caroline", "Melanie", "Jon Smith", "Gina"]
    with server.db.write():
        for _ in range(300):
            named = rng.sample(people, rng.randint(1, 2))
            server.memories.add(f"{' '.join(named)} {sentence(rng)}", entities=named)
    asked = [
        f"{' '.join(rng.sample(people, rng.randint(1, 2)))} "
        f"{' '.join(rng.sample(MIDDLE + RARE, rng.randint(0, 3)))}?"
        for _ in range(40)
    ]
    asked += ["What about Jon Smith's e-mail?", "Gina"]
    for query in asked:
        assert server.search.entity(query, 30) == entity_by_sql(server, query), query
    other.memories.add("Gina found a telescope", entities=["Gina"])  # rarities move
    for query in ["Gina and the telescope", *asked[:10]]:
        assert server.search.entity(query, 30) == entity_by_sql(server, query), query


class Undone(Exception):
    """Raised to undo a write."""


def test_a_search_inside_a_write_that_is_undone_leaves_the_index_as_the_server(
    server: PostgresStore,
) -> None:
    ids = populate(server, random.Random(9), 60)
    assert_same(server, "Caroline kaleidoscope")  # the index is loaded
    with pytest.raises(Undone), server.db.write():
        added = server.memories.add("Caroline found a kaleidoscope")
        server.memories.archive(ids[1])
        # The write's own changes, as the SQL sees them inside it.
        assert server.search.text("kaleidoscope", 30) == [added.id]
        assert server.search.text_hits("Caroline kaleidoscope", 30).total == 62
        assert server.search.entity("Caroline kaleidoscope", 30) == []
        raise Undone
    for query in ["kaleidoscope", "Caroline kaleidoscope", *queries(random.Random(10), 10)]:
        assert_same(server, query)
    assert server.search.text("kaleidoscope", 30) == []
