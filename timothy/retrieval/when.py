"""Time in the question: a memory made on the day the question names counts for more.

"What did Tim say about his injury on 16 November, 2023?", "What did John share in
January 2024?", "What did I say yesterday?": the words of the question find what was said
about the injury, and the day tells which of those moments is meant. Memories are dated by
the day they were made (their creation, in the owner's local time), so when the question
names days, each candidate made on one of them scores (1 + `time_boost`) times as much.

Read, in English: a full date ("16 November, 2023", "8th December 2023", "November 6,
2023", "2023-11-16"); a month of a year ("May 2023", "in January, 2024"); a month alone
after "in" or "during" ("in December": the last December up to now); "today", "yesterday",
"last week" (the seven days before today), "last month", "this month". When the question
names a full date or a month of a year, the relative words are not read (they are relative
to that date: "last week, as mentioned on 6 November"). Nothing is guessed beyond that: a
question with no such words ranks exactly as without this stage.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import date, datetime, timedelta

from timothy.lazy import lazy_pattern
from timothy.retrieval.fusion import Candidate, ordered
from timothy.retrieval.settings import RecallSettings
from timothy.text import MONTH_NUMBERS

MONTHS = MONTH_NUMBERS
_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_DAY_MONTH_YEAR = lazy_pattern(rf"\b{_DAY}(?:\s+of)?\s+{_MONTH},?\s*{_YEAR}\b")
_MONTH_DAY_YEAR = lazy_pattern(rf"\b{_MONTH}\s+{_DAY},?\s*{_YEAR}\b")
_ISO = lazy_pattern(r"\b(?P<year>(?:19|20)\d\d)-(?P<month>[01]\d)-(?P<day>[0-3]\d)\b")
_MONTH_YEAR = lazy_pattern(rf"\b{_MONTH},?\s+{_YEAR}\b")
_MONTH_ALONE = lazy_pattern(rf"\b(?:in|during)\s+{_MONTH}\b(?!,?\s*\d)")
_LAST_WEEK = lazy_pattern(r"\blast\s+week\b")
_LAST_MONTH = lazy_pattern(r"\blast\s+month\b")
_THIS_MONTH = lazy_pattern(r"\bthis\s+month\b")

Window = tuple[date, date]  # first and last day, both included


def _month(year: int, month: int) -> Window:
    first = date(year, month, 1)
    following = date(year + 1, 1, 1) if month == 12 else date(year, month + 1, 1)
    return first, following - timedelta(days=1)


def _day(year: int, month: int, day: int) -> Window | None:
    try:
        named = date(year, month, day)
    except ValueError:  # "31 February"
        return None
    return named, named


def named_days(question: str, now: datetime) -> list[Window]:
    """The days the question names, as windows of local days (empty: it names none)."""
    text = question.lower()
    windows: list[Window] = []
    for pattern in (_DAY_MONTH_YEAR, _MONTH_DAY_YEAR):
        for match in pattern.finditer(text):
            month = MONTHS[match["month"]]
            window = _day(int(match["year"]), month, int(match["day"]))
            if window:
                windows.append(window)
    for match in _ISO.finditer(text):
        window = _day(int(match["year"]), int(match["month"]), int(match["day"]))
        if window:
            windows.append(window)
    if not windows:
        for match in _MONTH_YEAR.finditer(text):
            windows.append(_month(int(match["year"]), MONTHS[match["month"]]))
    if windows:
        return windows
    today = now.astimezone().date()
    for match in _MONTH_ALONE.finditer(text):
        month = MONTHS[match["month"]]
        windows.append(_month(today.year if month <= today.month else today.year - 1, month))
    if re.search(r"\btoday\b", text):
        windows.append((today, today))
    if re.search(r"\byesterday\b", text):
        windows.append((today - timedelta(days=1), today - timedelta(days=1)))
    if _LAST_WEEK.search(text):
        windows.append((today - timedelta(days=7), today - timedelta(days=1)))
    if _LAST_MONTH.search(text):
        first = today.replace(day=1) - timedelta(days=1)
        windows.append(_month(first.year, first.month))
    if _THIS_MONTH.search(text):
        windows.append(_month(today.year, today.month))
    return windows


def made_within(when: datetime, windows: Sequence[Window]) -> bool:
    day = when.astimezone().date()
    return any(first <= day <= last for first, last in windows)


def at_time(
    ranked: Sequence[Candidate], question: str, settings: RecallSettings, now: datetime
) -> list[Candidate]:
    """`ranked` with the candidates made on a day the question names scoring (1 +
    `time_boost`) times as much, placed again; unchanged when it names none or the boost
    is 0 (the article)."""
    if settings.time_boost <= 0 or not ranked:
        return list(ranked)
    windows = named_days(question, now)
    if not windows:
        return list(ranked)
    factor = 1.0 + settings.time_boost
    boosted: list[Candidate] = []
    for candidate in ranked:
        if made_within(candidate.memory.created_at, windows):
            why = candidate.explanation
            candidate = replace(
                candidate, explanation=replace(why, time=factor, score=why.score * factor)
            )
        boosted.append(candidate)
    return ordered(boosted)
