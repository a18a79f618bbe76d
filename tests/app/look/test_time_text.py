"""Spans of time as the owner reads them (the *Still true?* cards' "not confirmed for ...")."""

from __future__ import annotations

from app.look.time_text import span_text


def test_spans_read_in_whole_units() -> None:
    assert span_text(2 * 365 + 160) == "2 years and 5 months"
    assert span_text(365 * 3 + 2) == "3 years"
    assert span_text(396) == "1 year and 1 month"
    assert span_text(200) == "6 months"
    assert span_text(20) == "2 weeks"
    assert span_text(3.5) == "3 days" and span_text(0.2) == "1 day"
