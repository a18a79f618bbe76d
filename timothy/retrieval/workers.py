"""A small pool of daemon threads for recall's legs and its after-the-turn writes.

Unlike `ThreadPoolExecutor`, whose threads are joined when the program exits, a thread here
never holds anything up: a leg that hangs past the recall's time bound is abandoned, and the
pool starts another thread for the next task (up to its size).
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

_Task = tuple[Future[Any], Callable[[], Any]]


class DaemonPool:
    """Run callables on up to `size` daemon threads; each call returns a Future."""

    def __init__(self, name: str, size: int) -> None:
        if size < 1:
            raise ValueError("a pool needs at least one thread")
        self.name = name
        self.size = size
        self._tasks: queue.SimpleQueue[_Task | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._closed = False

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        future: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError(f"the {self.name} pool is closed")
            self._tasks.put((future, fn))
            # An idle thread takes the task; with none idle (a hung leg keeps its thread
            # busy), start another while the pool has room, else the task waits its turn.
            if self._idle > 0:
                self._idle -= 1
            elif len(self._threads) < self.size:
                thread = threading.Thread(
                    target=self._work, name=f"{self.name}-{len(self._threads) + 1}", daemon=True
                )
                self._threads.append(thread)
                thread.start()
        return future

    def _work(self) -> None:
        while True:
            task = self._tasks.get()
            if task is None:
                return
            future, fn = task
            del task
            outcome: tuple[bool, Any] = (True, None)
            if future.set_running_or_notify_cancel():
                try:
                    outcome = (True, fn())
                except BaseException as exc:
                    outcome = (False, exc)
            # Idle before the caller hears back, so its next task finds this thread free.
            with self._lock:
                self._idle += 1
            if future.running():
                if outcome[0]:
                    future.set_result(outcome[1])
                else:
                    future.set_exception(outcome[1])
            del future, fn, outcome  # hold no result or traceback while idle

    def close(self) -> None:
        """Stop taking tasks; idle threads end, busy ones end when their task does."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            threads = len(self._threads)
        for _ in range(threads):
            self._tasks.put(None)
