"""Text folding, terms and FTS queries behave as recall expects."""

from __future__ import annotations

from timothy.text import fts_query, normalise_name, query_terms, strip_invisible


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
