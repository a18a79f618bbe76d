"""glibc's heap: fewer arenas, and freed pages handed back to the system (Linux; a no-op
elsewhere). Each check runs in a fresh interpreter, whose heap no other test has touched."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import REPO
from timothy import heap


def _run(code: str) -> tuple[str, str]:
    """What a fresh interpreter running `code` printed: (stdout, stderr)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("MALLOC_ARENA_MAX", None)  # the process's own setting is what is measured
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout, done.stderr


# Six threads each allocate while all are alive; glibc then prints one block per arena.
ARENAS = """
import ctypes, threading
from timothy import heap
LIMIT = {limit}
if LIMIT:
    assert heap.limit_arenas(LIMIT)
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
barrier = threading.Barrier(7)
def allocate():
    libc.malloc(1000)
    barrier.wait()
    barrier.wait()
threads = [threading.Thread(target=allocate) for _ in range(6)]
for thread in threads:
    thread.start()
barrier.wait()
libc.malloc_stats()
barrier.wait()
for thread in threads:
    thread.join()
"""


def test_threads_share_at_most_the_arenas_allowed() -> None:
    if not sys.platform.startswith("linux"):
        assert heap.limit_arenas() is False
        return
    unlimited = _run(ARENAS.format(limit=0))[1].count("Arena ")
    limited = _run(ARENAS.format(limit=2))[1].count("Arena ")
    assert unlimited >= 5  # the main thread's, and one per thread that asked
    assert limited == 2


# 60 MB in 64 KB blocks, touched, then all freed but the last (which pins the heap's top,
# so free() alone gives nothing back).
TRIM = """
import ctypes
from timothy import heap
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
def rss():
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) for l in status if l.startswith("VmRSS")) / 1024
blocks = []
for _ in range(960):
    block = libc.malloc(64 * 1024)
    ctypes.memset(block, 1, 64 * 1024)
    blocks.append(block)
for block in blocks[:-1]:
    libc.free(block)
held = rss()
released = heap.give_back()
print(released, held - rss())
"""


def test_freed_pages_go_back_to_the_system() -> None:
    if not sys.platform.startswith("linux"):
        assert heap.give_back() is False
        return
    released, dropped = _run(TRIM)[0].split()
    assert released == "True"
    assert float(dropped) > 40  # MB of the 60 freed


def test_the_calls_are_harmless_in_this_process() -> None:
    # The test run's own process: the settings take (on Linux) and nothing breaks after.
    assert heap.limit_arenas(8) is sys.platform.startswith("linux")
    heap.give_back()
    assert bytes(1 << 20).count(0) == 1 << 20
