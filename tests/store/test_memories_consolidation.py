"""The repository methods consolidation writes through: merge, archive by recall, decay."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from timothy.errors import IllegalTransitionError, InvalidInputError, NotFoundError
from timothy.store import Store
from timothy.store.memories import ConfidenceDecay
from timothy.store.records import Memory, MemorySource, MemoryStatus, MemoryType

T0 = datetime(2025, 1, 1, 12, 0, tzinfo=UTC)


def _days(n: float) -> datetime:
    return T0 + timedelta(days=n)


def _events(store: Store) -> list[tuple[str, Memory]]:
    seen: list[tuple[str, Memory]] = []
    store.memories.listeners.append(lambda event, memory: seen.append((event, memory)))
    return seen


def test_merge_writes_the_canonical_memory_and_supersedes_every_member(store: Store) -> None:
    repo = store.memories
    a = repo.add("I like green tea", entities=["Tea"], confidence=0.6, now=_days(0))
    b = repo.add("I love green tea", entities=["tea", "Kyoto"], confidence=0.9, now=_days(10))
    c = repo.add(
        "Green tea is my favourite",
        entities=["Matcha"],
        confidence=0.7,
        session_id="s1",
        now=_days(5),
    )
    repo.mark_retrieved([a.id], now=_days(20))
    repo.reconfirm(c.id, now=_days(30))
    seen = _events(store)

    canonical = repo.merge([a.id, b.id, c.id], "  I love green tea  ", now=_days(40))

    assert canonical.status is MemoryStatus.ACTIVE
    assert canonical.source is MemorySource.CONSOLIDATION
    assert canonical.content == "I love green tea"
    assert canonical.created_at == _days(40)
    assert canonical.confidence == 0.9
    assert canonical.entities == ("Tea", "Matcha", "Kyoto")  # oldest member's first, folded
    assert canonical.last_confirmed_at == _days(30)
    assert canonical.last_retrieved_at == _days(20)
    assert canonical.session_id is None  # the members came from different sessions
    assert canonical.supersedes == b.id  # the newest member
    assert repo.get(canonical.id) == canonical
    for member in (a, b, c):
        stored = repo.get(member.id)
        assert stored.status is MemoryStatus.SUPERSEDED
        assert stored.superseded_by == canonical.id
    expected = [a.id, c.id, b.id, canonical.id]  # created order
    for version in (a, b, c, canonical):
        assert [m.id for m in repo.chain(version.id)] == expected
    assert seen == [("superseded", canonical)]


def test_merge_refuses_members_that_are_no_longer_active(store: Store) -> None:
    repo = store.memories
    a = repo.add("I like tea", now=_days(0))
    b = repo.add("I like tea a lot", now=_days(1))
    c = repo.add("Tea is nice", now=_days(2))
    repo.archive(c.id)
    before = repo.count()
    with pytest.raises(IllegalTransitionError, match="archived"):
        repo.merge([a.id, b.id, c.id], "I like tea", now=_days(3))
    assert repo.count() == before
    assert repo.get(a.id).status is MemoryStatus.ACTIVE
    assert repo.get(b.id).superseded_by is None


def test_merge_refuses_bad_requests_and_changes_nothing(store: Store) -> None:
    repo = store.memories
    a = repo.add("I like tea", now=_days(0))
    b = repo.add("I like tea", type=MemoryType.PREFERENCE, now=_days(1))
    with pytest.raises(InvalidInputError, match="one type"):
        repo.merge([a.id, b.id], "I like tea")
    with pytest.raises(InvalidInputError, match="two"):
        repo.merge([a.id, a.id], "I like tea")
    with pytest.raises(NotFoundError):
        repo.merge([a.id, "01NOPE"], "I like tea")
    c = repo.add("Tea, yes", now=_days(2))
    with pytest.raises(InvalidInputError, match="empty"):
        repo.merge([a.id, c.id], "   ")
    assert repo.count() == 3
    assert {m.status for m in repo.list()} == {MemoryStatus.ACTIVE}


def test_merged_members_that_share_a_session_give_it_to_the_canonical(store: Store) -> None:
    repo = store.memories
    a = repo.add("I live in Lyon", session_id="s9", now=_days(0))
    b = repo.add("I live in Lyon, France", session_id="s9", now=_days(1))
    assert repo.merge([a.id, b.id], "I live in Lyon, France", now=_days(2)).session_id == "s9"


def test_archive_unretrieved_counts_from_the_last_recall_or_creation(store: Store) -> None:
    repo = store.memories
    old = repo.add("Went hiking", type=MemoryType.EPISODIC, now=_days(0))
    recalled = repo.add("Saw a film", type=MemoryType.EPISODIC, now=_days(0))
    repo.mark_retrieved([recalled.id], now=_days(50))
    fact = repo.add("I am a teacher", type=MemoryType.SEMANTIC, now=_days(0))
    seen = _events(store)

    cutoff = _days(10)
    assert [m.id for m in repo.unretrieved(MemoryType.EPISODIC, cutoff)] == [old.id]
    archived = repo.archive_unretrieved(MemoryType.EPISODIC, cutoff)
    assert [m.id for m in archived] == [old.id]
    assert repo.get(old.id).status is MemoryStatus.ARCHIVED
    assert repo.get(recalled.id).status is MemoryStatus.ACTIVE
    assert repo.get(fact.id).status is MemoryStatus.ACTIVE
    assert seen == [("archived", archived[0])]
    assert repo.archive_unretrieved(MemoryType.EPISODIC, cutoff) == []


def test_decay_records_periods_and_leaves_reconfirmed_memories_alone(store: Store) -> None:
    repo = store.memories
    a = repo.add("The office is on floor nine", confidence=0.9, now=_days(0))
    b = repo.add("My bank is Acme", confidence=0.8, now=_days(0))
    stale = {s.memory.id: s for s in repo.unconfirmed(MemoryType.SEMANTIC, _days(400))}
    assert set(stale) == {a.id, b.id}
    assert stale[a.id].anchor == _days(0) and stale[a.id].decayed_periods == 0

    repo.reconfirm(b.id, now=_days(500))  # confirmed after it was read: must stay as it is
    seen = _events(store)
    lowered = repo.decay(
        [
            ConfidenceDecay(a.id, _days(0), 1, 0.8),
            ConfidenceDecay(b.id, _days(0), 1, 0.7),
        ],
        now=_days(600),
    )
    assert [m.id for m in lowered] == [a.id]
    assert repo.get(a.id).confidence == 0.8
    assert repo.get(b.id).confidence == 0.8
    assert seen == [("decayed", lowered[0])]
    again = {s.memory.id: s for s in repo.unconfirmed(MemoryType.SEMANTIC, _days(450))}
    assert again[a.id].decayed_periods == 1
    assert b.id not in again

    # A confirmation moves the anchor: the old record no longer counts.
    repo.reconfirm(a.id, now=_days(700))
    fresh = {s.memory.id: s for s in repo.unconfirmed(MemoryType.SEMANTIC, _days(2000))}
    assert fresh[a.id].anchor == _days(700) and fresh[a.id].decayed_periods == 0


def test_decay_never_raises_confidence_and_rejects_nonsense(store: Store) -> None:
    repo = store.memories
    a = repo.add("Fact", confidence=0.5, now=_days(0))
    assert repo.decay([ConfidenceDecay(a.id, _days(0), 1, 0.6)]) == []
    assert repo.get(a.id).confidence == 0.5
    with pytest.raises(InvalidInputError):
        repo.decay([ConfidenceDecay(a.id, _days(0), 0, 0.4)])
    with pytest.raises(InvalidInputError):
        repo.decay([ConfidenceDecay(a.id, _days(0), 1, 1.5)])
    assert repo.get(a.id).confidence == 0.5


def test_merge_carries_the_decay_of_the_newest_confirmation(store: Store) -> None:
    repo = store.memories
    a = repo.add("My car is blue", confidence=1.0, now=_days(0))
    b = repo.add("My car is a blue one", confidence=1.0, now=_days(10))
    for member in (a, b):
        stale = repo.unconfirmed(MemoryType.SEMANTIC, _days(400))
        anchor = next(s.anchor for s in stale if s.memory.id == member.id)
        repo.decay([ConfidenceDecay(member.id, anchor, 1, 0.9)], now=_days(400))
    canonical = repo.merge([a.id, b.id], "My car is blue", now=_days(400))
    assert canonical.last_confirmed_at == _days(10)
    (record,) = [
        s for s in repo.unconfirmed(MemoryType.SEMANTIC, _days(400)) if s.memory.id == canonical.id
    ]
    assert record.anchor == _days(10)
    assert record.decayed_periods == 1
