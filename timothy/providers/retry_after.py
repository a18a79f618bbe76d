"""How long a rate-limited provider asked us to wait, read from its answer and put in words.

A 429 may say when to come back: `Retry-After` in seconds or as an HTTP date (RFC 9110), or
OpenAI's `retry-after-ms`. The backoff waits that long when its bound allows; once it gives up,
the owner is told the same wait in words ("try again in about 20 seconds"), not a fixed minute.
A missing or unreadable hint leaves the plain default.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

DEFAULT_WAIT_WORDS = "in a minute"  # when the server gave no usable hint
# Beyond this a hint is not a wait but a broken header (or a quota reset the owner should
# read about in the vendor's own words): it is ignored rather than repeated.
MAX_RETRY_AFTER_SECONDS = 24 * 3600.0
_MOMENT_SECONDS = 1.5  # below this, "in a moment" reads better than "about 1 second"


def parse_retry_after(headers: Mapping[str, str], *, now: datetime) -> float | None:
    """The wait in seconds a rate-limited answer's headers ask for, or None when they give
    none that can be read. `retry-after-ms` (OpenAI's, finer) wins over `retry-after`; a date
    already past means "now" (0)."""
    lowered = {name.lower(): value for name, value in headers.items()}
    milliseconds = _number(lowered.get("retry-after-ms"))
    if milliseconds is not None:
        return _fitting(milliseconds / 1000.0)
    value = lowered.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return _fitting(seconds)
    until = _seconds_until(value, now)
    return None if until is None else _fitting(max(0.0, until))


def wait_in_words(seconds: float | None) -> str:
    """A wait as a person would say it: "in about 20 seconds", "in about 3 minutes"."""
    if seconds is None or not math.isfinite(seconds) or seconds < 0:
        return DEFAULT_WAIT_WORDS
    if seconds < _MOMENT_SECONDS:
        return "in a moment"
    if seconds < 60:
        return f"in about {math.ceil(seconds)} seconds"
    if seconds < 90:
        return "in about a minute"
    if seconds < 3600:
        return f"in about {_rounded(seconds / 60)} minutes"
    if seconds < 1.5 * 3600:
        return "in about an hour"
    return f"in about {_rounded(seconds / 3600)} hours"


def throttled_message(who: str, retry_after: float | None) -> str:
    """The sentence shown when `who` keeps rate-limiting: when to try again, as it said."""
    return f"{who} is rate-limiting requests; try again {wait_in_words(retry_after)}."


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _seconds_until(value: str, now: datetime) -> float | None:
    """Seconds from `now` to an HTTP date; None when `value` is not one."""
    try:
        when = parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # RFC 850 / asctime forms carry no zone: they mean GMT
        when = when.replace(tzinfo=UTC)
    return (when - now).total_seconds()


def _fitting(seconds: float) -> float | None:
    """`seconds` when it is a wait worth acting on; None for negative, NaN or absurd ones."""
    if not math.isfinite(seconds) or seconds < 0 or seconds > MAX_RETRY_AFTER_SECONDS:
        return None
    return seconds


def _rounded(amount: float) -> int:
    """Half up, never below 2 (the callers word 1 themselves)."""
    return max(2, math.floor(amount + 0.5))
