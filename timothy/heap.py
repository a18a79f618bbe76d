"""The C heap under the process (glibc's malloc on Linux; elsewhere every call is a no-op).

Two settings keep an idle app's resident memory down:
- fewer arenas (`limit_arenas`): glibc gives each thread that meets a busy lock an arena of
  its own, up to eight per core, and an arena keeps the memory its thread freed. The app's
  start-up runs a dozen threads that each load something once (the token encoding, the local
  model, the store's pages); with two arenas their leftovers share two heaps. About 20 MB
  less once idle, no measurable cost in speed (`bench/app_startup.py`);
- giving freed pages back (`give_back`): a load (the token encoding's 200k ranks, the ONNX
  model's parse) frees tens of MB of temporaries that glibc keeps for reuse, pinned under
  what stays; `malloc_trim(0)` hands their whole pages back (12-14 MB after each of those two).
"""

from __future__ import annotations

import ctypes
import functools
import logging
import sys
from typing import Any

log = logging.getLogger(__name__)

# glibc's mallopt parameters: the most arenas the process may have; the size from which an
# allocation gets its own mapping.
M_ARENA_MAX = -8
M_MMAP_THRESHOLD = -3
ARENAS = 2
# Large arrays (a vector search of 100k rows makes several of 800 KB) from this size on.
MMAP_FROM_BYTES = 256 * 1024


@functools.cache
def _libc() -> Any | None:
    """The process's C library where it is glibc (None elsewhere: macOS, Windows, and musl,
    which has no malloc_trim)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)  # the symbols already loaded: works in a frozen bundle too
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
        libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    except (OSError, AttributeError):
        return None
    return libc


def limit_arenas(arenas: int = ARENAS) -> bool:
    """At most `arenas` malloc arenas from now on; call it first thing, before threads start
    (arenas already made stay). True when the setting was taken."""
    libc = _libc()
    if libc is None:
        return False
    taken = bool(libc.mallopt(M_ARENA_MAX, arenas))
    if not taken:
        log.debug("mallopt(M_ARENA_MAX) refused")
    return taken


def give_back() -> bool:
    """Hand the heap's free pages back to the system (after a load that freed a lot). True
    when some memory was released. Takes a few milliseconds; the GIL is released meanwhile."""
    libc = _libc()
    if libc is None:
        return False
    return bool(libc.malloc_trim(0))


@functools.cache
def steady_large_blocks() -> None:
    """Give large allocations their own mappings, handed back when freed (process-wide,
    once). By default glibc raises that threshold each time a large block is freed, up to
    32 MB: after a vector copy is loaded chunk by chunk, every search's temporaries come from
    the threads' heaps, which keep them (20-30 MB more resident at 100k rows)."""
    libc = _libc()
    if libc is not None:
        libc.mallopt(M_MMAP_THRESHOLD, MMAP_FROM_BYTES)
