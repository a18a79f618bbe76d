"""The owner's calendar: their local date, and relative dates made absolute ("next Friday"
on 30 Nov 2026 -> "on Friday, 4 December 2026").

Every date the owner sees, or that is stored from their words, is a date in their own time
zone: at 03:00 UTC on 1 December it is still the evening of 30 November five hours west, and
"tomorrow" said then means 1 December. `local_time` is the one place that turns a moment
into the owner's clock; the zone is this machine's (the TZ environment variable or the
system setting) unless a caller passes one.

Extracted facts outlive the conversation they came from: "my exam is next Friday" means
nothing a month later. The model is asked to write absolute dates; this pass catches what it
leaves relative, for the common English forms. Unrecognised phrasing is left as it is.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from datetime import date, datetime, timedelta, tzinfo

from timothy.lazy import lazy_pattern

WEEKDAYS = [d.lower() for d in calendar.day_name]  # monday .. sunday
_WEEKDAY = "|".join(WEEKDAYS)
_UNITS = {"day": 1, "week": 7}
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}


def local_time(now: datetime, tz: tzinfo | None = None) -> datetime:
    """`now` on the owner's clock: in `tz`, or in this machine's zone when `tz` is None."""
    return now.astimezone(tz)


def local_date(now: datetime, tz: tzinfo | None = None) -> date:
    """The owner's date at `now` (what "today" means in their words)."""
    return local_time(now, tz).date()


def _day(moment: date) -> str:
    weekday, month = calendar.day_name[moment.weekday()], calendar.month_name[moment.month]
    return f"{weekday}, {moment.day} {month} {moment.year}"


def _month(year: int, month: int) -> str:
    return f"{calendar.month_name[month]} {year}"


def _add_months(moment: date, months: int) -> tuple[int, int]:
    index = moment.year * 12 + (moment.month - 1) + months
    return index // 12, index % 12 + 1


def _count(word: str) -> int | None:
    word = word.lower()
    if word.isdigit():
        return int(word)
    return _NUMBERS.get(word)


def _weekday_phrase(today: date, which: str, weekday: str) -> tuple[str, str]:
    target = WEEKDAYS.index(weekday.lower())
    delta = (target - today.weekday()) % 7
    if which == "next":
        delta = delta or 7  # the first such day strictly after today
    elif which == "last":
        delta = -((today.weekday() - target) % 7 or 7)  # the most recent strictly before
    # "this Friday" / "coming Friday": the one in the coming seven days, today included
    return "on", _day(today + timedelta(days=delta))


def _span_phrase(today: date, which: str, unit: str) -> tuple[str, str]:
    step = {"next": 1, "last": -1, "this": 0}[which]
    if unit == "year":
        return "in", str(today.year + step)
    if unit == "month":
        year, month = _add_months(today, step)
        return "in", _month(year, month)
    monday = today - timedelta(days=today.weekday()) + timedelta(weeks=step)
    return "in", "the week of " + _day(monday)


def _offset_phrase(today: date, amount: int, unit: str, ago: bool) -> tuple[str, str]:
    sign = -1 if ago else 1
    if unit in ("day", "week"):
        return "on", _day(today + timedelta(days=sign * amount * _UNITS[unit]))
    if unit == "month":
        year, month = _add_months(today, sign * amount)
        return "in", _month(year, month)
    return "in", str(today.year + sign * amount)


def _amount(word: str) -> int:
    value = _count(word)
    return 1 if value is None else value


_COUNT = r"(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten)"
Phrase = Callable[[re.Match[str], date], tuple[str, str]]
_RULES: list[tuple[str, Phrase]] = [
    (r"the day after tomorrow", lambda m, t: ("on", _day(t + timedelta(days=2)))),
    (r"the day before yesterday", lambda m, t: ("on", _day(t - timedelta(days=2)))),
    (r"today|tonight|this (?:morning|afternoon|evening)", lambda m, t: ("on", _day(t))),
    (r"tomorrow", lambda m, t: ("on", _day(t + timedelta(days=1)))),
    (r"yesterday", lambda m, t: ("on", _day(t - timedelta(days=1)))),
    (
        rf"(next|last|this|coming) ({_WEEKDAY})",
        lambda m, t: _weekday_phrase(
            t, "this" if m.group(1).lower() == "coming" else m.group(1).lower(), m.group(2)
        ),
    ),
    (
        r"(next|last|this) (week|month|year)",
        lambda m, t: _span_phrase(t, m.group(1).lower(), m.group(2).lower()),
    ),
    (
        rf"in {_COUNT} (day|week|month|year)s?",
        lambda m, t: _offset_phrase(t, _amount(m.group(1)), m.group(2).lower(), ago=False),
    ),
    (
        rf"{_COUNT} (day|week|month|year)s? ago",
        lambda m, t: _offset_phrase(t, _amount(m.group(1)), m.group(2).lower(), ago=True),
    ),
]
# A preposition the writer chose ("by next Friday", "since last year") is kept; "on" and
# "in" are replaced by the one that fits the absolute form.
_PREPOSITION = r"(?:\b(?P<prep>on|in|by|until|till|since|before|after|from|for|during)\s+)?"
_COMPILED = [
    (
        lazy_pattern(_PREPOSITION + r"\b(?P<body>" + pattern + r")\b", re.IGNORECASE),
        lazy_pattern(pattern, re.IGNORECASE),
        phrase,
    )
    for pattern, phrase in _RULES
]


def absolutise(text: str, today: date) -> str:
    """`text` with the relative dates it names rewritten as absolute ones, as of `today`."""
    for outer, inner, phrase in _COMPILED:

        def replace(
            match: re.Match[str], inner: re.Pattern[str] = inner, phrase: Phrase = phrase
        ) -> str:
            body = inner.fullmatch(match.group("body"))
            if body is None:  # cannot happen: the body matched this very pattern
                return match.group(0)
            ours, absolute = phrase(body, today)
            prep = match.group("prep")
            if prep and prep.lower() not in ("on", "in"):
                return f"{prep} {absolute}"
            before = match.string[: match.start()].rstrip()
            if not before or before[-1] in ".!?":
                ours = ours.capitalize()
            return f"{ours} {absolute}"

        text = outer.sub(replace, text)
    return text
