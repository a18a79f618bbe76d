"""Sortable unique ids (ULIDs): 48 bits of milliseconds then 80 random bits, Crockford base32."""

from __future__ import annotations

import os
import threading
from datetime import datetime

from timothy.text import LONE_SURROGATE_RE

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_lock = threading.Lock()
_last: tuple[int, int] = (-1, 0)


def new_id(at: datetime | None = None) -> str:
    """A 26-character ULID; ids made in this process sort in the order they were made."""
    global _last
    millis = int((at or datetime.now().astimezone()).timestamp() * 1000)
    with _lock:
        last_millis, last_random = _last
        if millis <= last_millis:
            # Same (or an earlier, time-travelled) millisecond: stay monotonic.
            millis, random_part = last_millis, last_random + 1
        else:
            random_part = int.from_bytes(os.urandom(10), "big")
        _last = (millis, random_part)
    value = (millis << 80) | (random_part & ((1 << 80) - 1))
    chars = []
    for _ in range(26):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def could_be_stored(value: object) -> bool:
    """Whether `value` is text SQLite could hold as an id: a string with no lone surrogates.
    Looking up anything else finds nothing (and is never sent to SQLite)."""
    return isinstance(value, str) and LONE_SURROGATE_RE.search(value) is None
