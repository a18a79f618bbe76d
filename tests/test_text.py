"""Ids sort by creation; text folding, terms and FTS queries behave as recall expects."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from timothy.store.ids import new_id
from timothy.text import fts_query, normalise_name, query_terms, strip_invisible


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


def test_query_terms_fold_and_drop_stop_words() -> None:
    terms = query_terms("What seat do I prefer on long-haul flights, and when is my BIRTHDAY?")
    assert terms == ["seat", "prefer", "long", "haul", "flights", "birthday"]
    assert query_terms("Ｚｏë\u200bs café") == ["zoës", "café"]


def test_fts_query_quotes_every_term() -> None:
    assert fts_query('NEAR(a b) "x" col:y -z AND *') == '"near" OR "b" OR "x" OR "col" OR "z"'
    assert fts_query("the and of") is None
    assert fts_query("kyo", operator="AND", prefix_last=True) == '"kyo"*'


def test_names_normalise_for_matching() -> None:
    assert normalise_name("  Zoë\u200d  Smith ") == "zoë smith"
    assert normalise_name("ＡＬ") == "al"
    assert strip_invisible("a\u202eb\ufeffc") == "abc"
