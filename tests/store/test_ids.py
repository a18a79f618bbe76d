"""Ids sort by creation, even when the clock goes backwards."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from timothy.store.ids import new_id


def test_ids_are_unique_and_sort_in_creation_order() -> None:
    base = datetime(2026, 5, 1, tzinfo=UTC)
    ids = [new_id(base + timedelta(milliseconds=i // 3)) for i in range(3000)]
    assert len(set(ids)) == len(ids)
    assert ids == sorted(ids)
    assert all(len(i) == 26 for i in ids)


def test_ids_stay_monotonic_when_time_goes_backwards() -> None:
    later = new_id(datetime(2030, 1, 1, tzinfo=UTC))
    earlier = new_id(datetime(2020, 1, 1, tzinfo=UTC))
    assert earlier > later
