"""The legs' thread pool: tasks side by side, a hung task never blocks the next one."""

from __future__ import annotations

import threading

import pytest

from timothy.retrieval.workers import DaemonPool


def test_tasks_run_side_by_side() -> None:
    pool = DaemonPool("test", 3)
    barrier = threading.Barrier(3, timeout=10)
    futures = [pool.submit(barrier.wait) for _ in range(3)]  # all three must be running
    assert sorted(f.result(timeout=10) for f in futures) == [0, 1, 2]
    pool.close()


def test_a_hung_task_gets_its_thread_replaced() -> None:
    pool = DaemonPool("test", 4)
    release = threading.Event()
    hung = pool.submit(release.wait)
    for _ in range(5):  # one thread stays busy; the others keep answering
        assert pool.submit(lambda: 42).result(timeout=10) == 42
    assert not hung.done()
    release.set()
    assert hung.result(timeout=10) is True
    threads = pool._threads
    assert len(threads) == 2 and all(t.daemon for t in threads)
    pool.close()


def test_errors_travel_in_the_future() -> None:
    pool = DaemonPool("test", 1)

    def fail() -> None:
        raise ValueError("broken")

    with pytest.raises(ValueError, match="broken"):
        pool.submit(fail).result(timeout=10)
    assert pool.submit(lambda: "still working").result(timeout=10) == "still working"
    pool.close()
    with pytest.raises(RuntimeError):
        pool.submit(lambda: None)


def test_the_pool_never_grows_past_its_size() -> None:
    pool = DaemonPool("test", 2)
    release = threading.Event()
    started = threading.Semaphore(0)

    def hold() -> None:
        started.release()
        release.wait()

    busy = [pool.submit(hold) for _ in range(2)]
    assert started.acquire(timeout=10) and started.acquire(timeout=10)
    queued = pool.submit(lambda: "later")
    assert not queued.done() and len(pool._threads) == 2
    release.set()
    assert queued.result(timeout=10) == "later"
    for future in busy:
        future.result(timeout=10)
    pool.close()
