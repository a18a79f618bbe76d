"""The memory lifecycle: every legal transition, every illegal one, chains, and the FTS index."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from timothy.errors import IllegalTransitionError, NotFoundError
from timothy.store import Store
from timothy.store.engine import StoreEngine
from timothy.store.memories import KnownRows
from timothy.store.postgres import PostgresStore
from timothy.store.records import Memory, MemorySource, MemoryStatus, MemoryType

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)


def active_ids_matching(store: Store, text: str) -> set[str]:
    return {m.id for m in store.memories.list(status="active", text=text)}


def test_stage_then_promote_stamps_last_confirmed(store: Store) -> None:
    staged = store.memories.stage("I prefer aisle seats", type="preference", now=T0)
    assert staged.status is MemoryStatus.STAGED
    assert staged.source is MemorySource.EXTRACTION
    assert staged.last_confirmed_at is None
    promoted = store.memories.promote(staged.id, now=T0 + timedelta(hours=1))
    assert promoted.status is MemoryStatus.ACTIVE
    assert promoted.last_confirmed_at == T0 + timedelta(hours=1)
    assert promoted.created_at == T0


def test_add_is_active_at_once(store: Store) -> None:
    memory = store.memories.add(
        "My sister is Zoë", entities=["Zoë"], source="remember", session_id="s1", now=T0
    )
    assert memory.status is MemoryStatus.ACTIVE
    assert memory.last_confirmed_at == T0
    assert store.memories.get(memory.id) == memory
    assert memory.entities == ("Zoë",)


def test_reconfirm_moves_only_last_confirmed(store: Store) -> None:
    memory = store.memories.add("I live in Lisbon", now=T0)
    later = T0 + timedelta(days=200)
    again = store.memories.confirm(memory.id, now=later)
    assert again.last_confirmed_at == later
    assert again.created_at == T0
    assert again.status is MemoryStatus.ACTIVE


def test_reject_staged_and_active(store: Store) -> None:
    staged = store.memories.stage("junk proposal", now=T0)
    assert store.memories.reject(staged.id).status is MemoryStatus.REJECTED
    remembered = store.memories.add("undo me", source="remember", now=T0)
    assert store.memories.reject(remembered.id).status is MemoryStatus.REJECTED


def test_archive_active(store: Store) -> None:
    memory = store.memories.add("We went to Porto in May", type="episodic", now=T0)
    archived = store.memories.archive(memory.id)
    assert archived.status is MemoryStatus.ARCHIVED
    assert active_ids_matching(store, "Porto") == set()


def test_supersede_links_both_ways_and_keeps_entities(store: Store) -> None:
    old = store.memories.add(
        "Zoë lives in Paris", entities=["Zoë", "Paris"], type="semantic", now=T0
    )
    new = store.memories.supersede(old.id, "Zoë lives in Berlin", now=T0 + timedelta(days=1))
    old_after = store.memories.get(old.id)
    assert old_after.status is MemoryStatus.SUPERSEDED
    assert old_after.superseded_by == new.id
    assert new.supersedes == old.id
    assert new.status is MemoryStatus.ACTIVE
    assert new.entities == ("Zoë", "Paris")
    assert new.type is MemoryType.SEMANTIC
    renamed = store.memories.supersede(new.id, "Zoë moved to Rome", entities=["Zoë", "Rome"])
    assert renamed.entities == ("Zoë", "Rome")


def test_supersede_of_staged_is_edit_then_confirm(store: Store) -> None:
    staged = store.memories.stage("I like jazz", type="preference", confidence=0.6, now=T0)
    edited = store.memories.supersede(staged.id, "I like cool jazz", now=T0)
    assert edited.status is MemoryStatus.ACTIVE
    assert edited.type is MemoryType.PREFERENCE
    assert store.memories.get(staged.id).status is MemoryStatus.SUPERSEDED


def _snapshot(store: Store) -> list[Memory]:
    return store.memories.list(oldest_first=True)


@pytest.mark.parametrize(
    ("setup", "action"),
    [
        ("superseded", "promote"),
        ("superseded", "confirm"),
        ("superseded", "supersede"),
        ("superseded", "archive"),
        ("superseded", "reject"),
        ("rejected", "supersede"),
        ("rejected", "promote"),
        ("rejected", "archive"),
        ("rejected", "confirm"),
        ("archived", "promote"),
        ("archived", "supersede"),
        ("archived", "reject"),
        ("active", "promote"),
        ("staged", "archive"),
        ("staged", "reconfirm"),
    ],
)
def test_illegal_transitions_raise_and_change_nothing(
    store: Store, setup: str, action: str
) -> None:
    memory = store.memories.stage("a fact", now=T0)
    if setup in ("active", "superseded", "archived"):
        store.memories.promote(memory.id, now=T0)
    if setup == "superseded":
        store.memories.supersede(memory.id, "a newer fact", now=T0)
    if setup == "rejected":
        store.memories.reject(memory.id)
    if setup == "archived":
        store.memories.archive(memory.id)
    before = _snapshot(store)
    operations = {
        "promote": lambda: store.memories.promote(memory.id),
        "confirm": lambda: store.memories.confirm(memory.id),
        "reconfirm": lambda: store.memories.reconfirm(memory.id),
        "supersede": lambda: store.memories.supersede(memory.id, "edited"),
        "archive": lambda: store.memories.archive(memory.id),
        "reject": lambda: store.memories.reject(memory.id),
    }
    with pytest.raises(IllegalTransitionError) as caught:
        operations[action]()
    assert memory.id in str(caught.value)
    assert _snapshot(store) == before


@pytest.mark.parametrize("action", ["get", "promote", "reject", "archive", "supersede", "chain"])
def test_unknown_id_raises_not_found(store: Store, action: str) -> None:
    before = _snapshot(store)
    with pytest.raises(NotFoundError, match="NOPE"):
        if action == "supersede":
            store.memories.supersede("NOPE", "text")
        else:
            getattr(store.memories, action)("NOPE")
    assert _snapshot(store) == before


def test_chain_from_any_member_is_whole_history_oldest_first(store: Store) -> None:
    v1 = store.memories.add("v1", now=T0)
    v2 = store.memories.supersede(v1.id, "v2", now=T0 + timedelta(days=1))
    v3 = store.memories.supersede(v2.id, "v3", now=T0 + timedelta(days=2))
    other = store.memories.add("unrelated", now=T0)
    for member in (v1, v2, v3):
        chain = store.memories.chain(member.id)
        assert [m.id for m in chain] == [v1.id, v2.id, v3.id]
        assert [m.status for m in chain] == [
            MemoryStatus.SUPERSEDED,
            MemoryStatus.SUPERSEDED,
            MemoryStatus.ACTIVE,
        ]
    assert [m.id for m in store.memories.chain(other.id)] == [other.id]


def test_fts_index_follows_add_edit_and_archive(store: Store) -> None:
    seat = store.memories.add("I prefer aisle seats on long flights", now=T0)
    assert active_ids_matching(store, "aisle") == {seat.id}
    window = store.memories.supersede(seat.id, "I prefer window seats on long flights")
    assert active_ids_matching(store, "aisle") == set()
    assert active_ids_matching(store, "window") == {window.id}
    # The old text is still searchable among all versions, only not among active ones.
    assert seat.id in {m.id for m in store.memories.list(text="aisle")}
    store.memories.archive(window.id)
    assert active_ids_matching(store, "window") == set()


@pytest.mark.sqlite_only
def test_fts_rows_match_content_table(store: Store) -> None:
    for i in range(20):
        memory = store.memories.add(f"fact number {i} about tea")
        if i % 3 == 0:
            store.memories.supersede(memory.id, f"fact number {i} about coffee")
    conn = store.db.connection()
    conn.execute("INSERT INTO memories_fts (memories_fts, rank) VALUES ('integrity-check', 1)")
    indexed = conn.execute("SELECT count(*) FROM memories_fts").fetchall()[0][0]
    assert indexed == store.memories.count()


def test_mark_retrieved_stamps_only_last_retrieved(store: Store) -> None:
    a = store.memories.add("a", now=T0)
    b = store.memories.add("b", now=T0)
    store.memories.mark_retrieved([a.id], now=T0 + timedelta(days=3))
    a_after, b_after = store.memories.get(a.id), store.memories.get(b.id)
    assert a_after.last_retrieved_at == T0 + timedelta(days=3)
    assert a_after.last_confirmed_at == T0
    assert b_after == b


def test_list_filters(store: Store) -> None:
    pref = store.memories.add("I like tea", type="preference", now=T0)
    episode = store.memories.add("We had tea in Kyoto", type="episodic", now=T0)
    staged = store.memories.stage("Maybe I like coffee", now=T0)
    assert [m.id for m in store.memories.list(type="preference")] == [pref.id]
    assert {m.id for m in store.memories.list(status="active")} == {pref.id, episode.id}
    assert [m.id for m in store.memories.list(status="staged")] == [staged.id]
    assert {m.id for m in store.memories.list(text="tea")} == {pref.id, episode.id}
    # Newest first by default.
    assert [m.id for m in store.memories.list()] == [staged.id, episode.id, pref.id]
    # Search as you type: the last word may be a prefix.
    assert {m.id for m in store.memories.list(text="Kyo")} == {episode.id}


# -- search as you type ----------------------------------------------------------------


def listed(store: StoreEngine, text: str, *, match_any: bool = False) -> list[str]:
    return [m.content for m in store.memories.list(text=text, match_any=match_any)]


def test_the_word_being_typed_matches_the_words_that_start_with_it(store: StoreEngine) -> None:
    store.memories.add("I went running", now=T0)
    store.memories.add("Buy a shopping list", now=T0 + timedelta(minutes=1))
    store.memories.add("She likes tea", now=T0 + timedelta(minutes=2))
    # "running" is indexed as its stem "run", which "runn" is no prefix of.
    assert listed(store, "runn") == ["I went running"]
    assert listed(store, "went runn") == ["I went running"]
    # "lis" stems to "li", a prefix of "like": only the word that starts with "lis" is found.
    assert listed(store, "lis") == ["Buy a shopping list"]
    assert listed(store, "shopping lis") == ["Buy a shopping list"]
    # Case does not matter, and a word cut short anywhere is still found.
    assert listed(store, "SHOPPING LI") == ["Buy a shopping list"]
    assert listed(store, "Lik") == ["She likes tea"]


def test_whole_words_still_match_their_other_forms(store: StoreEngine) -> None:
    runs = store.memories.add("She runs every morning", now=T0)
    running = store.memories.add("I went running", now=T0 + timedelta(minutes=1))
    runway = store.memories.add("The runway lights were off", now=T0 + timedelta(minutes=2))
    # A whole word before the last one is stemmed: "running" finds "runs".
    assert listed(store, "running mor") == [runs.content]
    assert listed(store, "runs wen") == [running.content]
    assert listed(store, "went runs") == [running.content]  # the last word whole, stemmed
    # The last word whole finds its other forms too, and what starts with it: finishing it
    # and typing the next word never lists what it had left out. A memory with the word
    # itself comes before one with a longer word that only starts with it.
    found = [m.id for m in store.memories.list(text="run")]
    assert set(found) == {runs.id, running.id, runway.id}
    assert found[-1] == runway.id
    assert set(listed(store, "running")) == {runs.content, running.content}


def test_any_word_mode_finds_the_word_being_typed_too(store: StoreEngine) -> None:
    tea = store.memories.add("She likes tea", now=T0)
    running = store.memories.add("I went running", now=T0 + timedelta(minutes=1))
    both = store.memories.add("Tea after running", now=T0 + timedelta(minutes=2))
    store.memories.add("Buy a shopping list", now=T0 + timedelta(minutes=3))
    found = [m.id for m in store.memories.list(text="tea runn", match_any=True)]
    assert set(found) == {tea.id, running.id, both.id}
    assert found[0] == both.id  # the memory with both words first
    # A whole word in any-word mode is still stemmed.
    assert set(listed(store, "liked runn", match_any=True)) == {
        tea.content,
        running.content,
        both.content,
    }
    assert listed(store, "lis", match_any=True) == ["Buy a shopping list"]


# Search syntax of either engine around the word being typed, and odd text: never an error.
_TYPED_WITH_SYNTAX = [
    '"runn',
    "runn*",
    "NEAR(runn",
    "near() runn",
    "-runn",
    "(runn",
    "runn)",
    ":runn",
    "went:runn",
    "runn:*",
    "'runn",
    "runn & | !",
    "<-> runn",
    "\x00runn",
    "東京 runn",
    "ＲＵＮＮ",  # full-width letters, folded to "runn"
]
_ODD = ['"', "*", "_", "run_n", "😀", "😀runn", "%", "ǅ ﬁ ß İ", "a", "'", ":*", "\u0301", "٣"]


@pytest.mark.parametrize("match_any", [False, True])
def test_search_syntax_in_the_typed_text_is_only_text(store: StoreEngine, match_any: bool) -> None:
    running = store.memories.add("I went running near 東京 with friends", now=T0)
    for text in _TYPED_WITH_SYNTAX:
        found = [m.id for m in store.memories.list(text=text, match_any=match_any)]
        assert found == [running.id], text
    for text in _ODD:
        store.memories.list(text=text, match_any=match_any)
        store.memories.list(text=f"went {text}", match_any=match_any)


def test_emoji_and_other_symbols_are_found_as_typed(store: StoreEngine) -> None:
    """The word indexes drop symbols as if they were spaces: typed alone, "🎂" found
    nothing. Each symbol typed must be in the memory, as each word must."""
    cake = store.memories.add("Mum's birthday 🎂 is on 3 May", now=T0)
    party = store.memories.add("Party 🎉 with 🎂 at Sam's", now=T0 + timedelta(minutes=1))
    love = store.memories.add("I ❤️ jazz; costs 20 €", now=T0 + timedelta(minutes=2))
    family = store.memories.add(
        "👨\u200d👩\u200d👧 trip to the coast", now=T0 + timedelta(minutes=3)
    )
    store.memories.add("A birthday without cake", now=T0 + timedelta(minutes=4))
    assert listed(store, "🎂") == [party.content, cake.content]  # newest first
    assert listed(store, "🎂 birth") == [cake.content]
    assert listed(store, "birthday 🎂") == [cake.content]
    assert listed(store, "🎉🎂") == [party.content]
    assert listed(store, "❤") == listed(store, "❤️") == [love.content]
    assert listed(store, "€") == [love.content]
    assert listed(store, "👩") == listed(store, "👨\u200d👩") == [family.content]
    assert listed(store, "🎈") == []
    # Not for the callers that look for any word (near duplicates): symbols are no words.
    assert listed(store, "🎂", match_any=True) == []
    assert listed(store, "cake 🎈", match_any=True) == ["A birthday without cake"]


def test_entities_are_deduplicated_by_normal_form(store: Store) -> None:
    memory = store.memories.add("x", entities=["Zoë", " zoë ", "ZOË", "", "Paris"])
    assert memory.entities == ("Zoë", "Paris")
    with store.db.read() as conn:
        rows = conn.execute("SELECT norm FROM memory_entities ORDER BY position").fetchall()
    assert [row[0] for row in rows] == ["zoë", "paris"]


def test_listeners_hear_committed_writes(store: Store) -> None:
    heard: list[tuple[str, str]] = []
    store.memories.listeners.append(lambda event, memory: heard.append((event, memory.id)))
    store.memories.listeners.append(lambda event, memory: 1 / 0)  # a broken listener
    staged = store.memories.stage("s")
    store.memories.promote(staged.id)
    new = store.memories.supersede(staged.id, "s2")
    assert heard == [("staged", staged.id), ("promoted", staged.id), ("superseded", new.id)]


# -- memories built from rows read before (KnownRows) -------------------------------------


def other_handle(store: StoreEngine, data_dir: Path) -> StoreEngine:
    """The same store opened a second time: its own connections, its own kept memories."""
    if isinstance(store, PostgresStore):
        return PostgresStore(store.db.conninfo, follow_changes=False)
    return Store.open(data_dir)


def test_a_memory_read_again_unchanged_is_not_built_again(store: StoreEngine) -> None:
    memory = store.memories.add("Zoë teaches the violin", entities=["Zoë"], now=T0)
    first = store.memories.get(memory.id)
    again = store.memories.get_many([memory.id])[memory.id]
    assert again is first
    assert again == memory and again.entities == ("Zoë",)


def test_a_change_written_on_another_connection_is_read_not_the_kept_memory(
    store: StoreEngine, data_dir: Path
) -> None:
    memory = store.memories.add("I live in Lisbon", entities=["Lisbon"], now=T0)
    kept = store.memories.get(memory.id)
    with other_handle(store, data_dir) as other:
        other.memories.confirm(memory.id, now=T0 + timedelta(days=3))
        other.memories.mark_retrieved([memory.id], now=T0 + timedelta(days=4))
        newer = other.memories.supersede(memory.id, "I live in Porto", now=T0 + timedelta(days=5))
        expected = other.memories.get(memory.id)
    read = store.memories.get_many([memory.id, newer.id])
    assert read[memory.id] is not kept
    assert read[memory.id] == expected
    assert read[memory.id].status is MemoryStatus.SUPERSEDED
    assert read[memory.id].last_confirmed_at == T0 + timedelta(days=3)
    assert read[memory.id].last_retrieved_at == T0 + timedelta(days=4)
    assert read[newer.id].content == "I live in Porto"
    assert read[newer.id].entities == ("Lisbon",)


def test_a_forgotten_memory_is_no_longer_kept(store: StoreEngine) -> None:
    memory = store.memories.add("My locker code is 4411", now=T0)
    other = store.memories.add("I cycle to work", now=T0)
    store.memories.get_many([memory.id, other.id])
    assert {m.id for m in store.memories.known._kept.values()} >= {memory.id, other.id}
    store.memories.forget([memory.id])
    kept = {m.id for m in store.memories.known._kept.values()}
    assert memory.id not in kept and other.id in kept


def test_a_memory_forgotten_while_a_read_builds_it_is_not_kept(store: StoreEngine) -> None:
    """A recall on another thread read the row just before the memory was forgotten: what it
    builds afterwards is handed to that recall, and no copy stays behind."""
    memory = store.memories.add("My locker code is 4411", now=T0)
    known = store.memories.known
    known.clear()
    key = [(1, memory.id, memory.content)]  # what a read of its row would give, in short

    def build_while_forgotten(missing: list[tuple[object, ...]]) -> list[Memory]:
        store.memories.forget([memory.id])  # lands between the read and the keeping
        return [memory]

    assert known.lookup(key, build_while_forgotten) == [memory]
    assert memory.id not in {m.id for m in known._kept.values()}
    assert len(known) == 0


def test_kept_memories_are_bounded_and_a_listing_is_not_kept(store: StoreEngine) -> None:
    store.memories.known = KnownRows(size=3, largest_read=4)
    made = [store.memories.add(f"Fact number {n}", now=T0 + timedelta(seconds=n)) for n in range(6)]
    store.memories.get_many(m.id for m in made[:2])
    assert len(store.memories.known) == 2
    listed = store.memories.list(status="active")
    assert {m.id for m in listed} == {m.id for m in made}
    assert len(store.memories.known) == 2  # six rows at once: looked up, not kept
    store.memories.get_many(m.id for m in made[2:6])
    assert len(store.memories.known) == 3  # the oldest went first
    assert {m.id for m in store.memories.known._kept.values()} <= {m.id for m in made[2:6]}


def test_kept_memories_share_their_entity_names_and_short_words(store: StoreEngine) -> None:
    """Kept memories share one copy of each entity name and of their rows' short words (the
    kept rows' memory at 16,384 rows); what is read is equal to what was stored."""
    first = store.memories.add("Zoë teaches the violin", entities=["Zoë Berg"], now=T0)
    second = store.memories.add("Zoë lives in Lyon", entities=["Zoë Berg", "Lyon"], now=T0)
    store.memories.known.clear()
    read = store.memories.get_many([first.id, second.id])
    assert read[first.id] == store.memories.get(first.id)
    assert read[first.id].entities == ("Zoë Berg",)
    assert read[second.id].entities == ("Zoë Berg", "Lyon")
    assert read[first.id].entities[0] is read[second.id].entities[0]
    keys = list(store.memories.known._kept)
    assert len(keys) == 2
    for column in range(len(keys[0])):
        value = keys[0][column]
        if isinstance(value, str) and len(value) <= 16 and value == keys[1][column]:
            assert value is keys[1][column]


def test_a_nul_in_text_is_saved_on_either_engine(store: StoreEngine, store_kind: str) -> None:
    """A SQLite file keeps a NUL; PostgreSQL's text cannot hold one, so the server keeps
    U+FFFD in its place rather than fail the write (a turn whose reply holds one)."""
    kept = "\x00" if store_kind == "sqlite" else "\ufffd"
    memory = store.memories.add("nul\x00inside", entities=["Ana\x00Lopes"])
    again = store.memories.get(memory.id)
    assert again.content == f"nul{kept}inside"
    assert again.entities == (f"Ana{kept}Lopes",)
    staged = store.memories.stage("a staged \x00 fact")
    assert store.memories.get(staged.id).content == f"a staged {kept} fact"
    session = store.sessions.create(title="tea\x00time")
    message = store.sessions.add_message(session.id, "assistant", "a reply\x00with a NUL")
    assert store.sessions.message(message.id).content == f"a reply{kept}with a NUL"
    assert store.sessions.get(session.id).title == f"tea{kept}time"


def test_a_stop_word_being_typed_is_looked_for_on_the_way_to_a_longer_word(
    store: StoreEngine,
) -> None:
    """The stop words "t", "the" and "a", typed key by key on the way to "theatre" or "art",
    are the start of the word: the list never goes empty on the way."""
    theatre = store.memories.add("Went to the theatre in Lisbon", now=T0)
    art = store.memories.add("Ana studies art history", now=T0 + timedelta(minutes=1))
    store.memories.add("Likes green tea", now=T0 + timedelta(minutes=2))
    for end in range(1, len("theatre") + 1):
        assert theatre.content in listed(store, "theatre"[:end]), "theatre"[:end]
    assert listed(store, "theatre") == [theatre.content]
    assert listed(store, "lisbon the") == [theatre.content]
    assert art.content in listed(store, "a")
    assert listed(store, "ar") == [art.content]
    assert theatre.content in listed(store, "lisbon the", match_any=True)


def test_strasse_and_strasse_with_sharp_s_find_each_other(store: StoreEngine) -> None:
    """Case folding makes a typed "ß" "ss"; the indexes keep the memory's "ß" as written.
    Either spelling, typed key by key or as a whole word, finds either."""
    berlin = store.memories.add("Lives on Karl-Marx-Straße in Berlin", now=T0)
    zurich = store.memories.add("Works on the Bahnhofstrasse", now=T0 + timedelta(minutes=1))
    store.memories.add("Has a class on Tuesdays", now=T0 + timedelta(minutes=2))
    for typed in ("strasse", "Straße"):
        for end in range(1, len(typed) + 1):
            assert berlin.content in listed(store, typed[:end]), typed[:end]
    assert listed(store, "strasse") == [berlin.content]
    assert listed(store, "STRASSE berlin") == [berlin.content]  # a whole word, not the last
    assert listed(store, "berlin Straße") == [berlin.content]
    assert listed(store, "Bahnhofstraße") == [zurich.content]
    assert set(listed(store, "straße bahnhofstrasse", match_any=True)) == {
        berlin.content,
        zurich.content,
    }
