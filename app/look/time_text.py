"""Moments as the owner reads them: "5 min ago", "yesterday", "12 Mar 2024, 14:02" (local time),
and spans of time: "2 years and 5 months"."""

from __future__ import annotations

from datetime import datetime


def relative_time(moment: datetime, now: datetime) -> str:
    seconds = (now - moment).total_seconds()
    if seconds < 0:
        return exact_time(moment)
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86_400:
        return f"{int(seconds // 3600)} h ago"
    local, today = moment.astimezone(), now.astimezone()
    days = (today.date() - local.date()).days
    if days == 1:
        return "yesterday"
    if days < 7:
        return f"{days} days ago"
    if local.year == today.year:
        return local.strftime("%-d %b") if _has_dash_format() else local.strftime("%d %b")
    return local.strftime("%d %b %Y")


def exact_time(moment: datetime) -> str:
    return moment.astimezone().strftime("%d %b %Y, %H:%M")


def exact_date(moment: datetime) -> str:
    return moment.astimezone().strftime("%d %b %Y")


def _has_dash_format() -> bool:
    try:
        datetime(2000, 1, 1).strftime("%-d")
    except ValueError:  # Windows' strftime has no "%-d"
        return False
    return True


DAYS_PER_MONTH = 365.2425 / 12


def _count(number: int, unit: str) -> str:
    return f"{number} {unit}{'' if number == 1 else 's'}"


def span_text(days: float) -> str:
    """A long span in whole units: "2 years and 5 months", "7 months", "3 weeks", "4 days"."""
    months = int(days // DAYS_PER_MONTH)
    if months >= 12:
        years, months = divmod(months, 12)
        return _count(years, "year") + (f" and {_count(months, 'month')}" if months else "")
    if months >= 1:
        return _count(months, "month")
    if days >= 14:
        return _count(int(days // 7), "week")
    return _count(max(int(days), 1), "day")
