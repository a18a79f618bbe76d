"""The garbage collector stays off while the window starts and comes back, with start-up's
objects set aside, once start-up's loads are in (or after a bound, if they never are)."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest
from pytestqt.qtbot import QtBot

from app.collector import set_aside_start
from app.jobs.workers import Workers
from app.mainwindow.start_loads import StartLoads


@pytest.fixture
def collector_off() -> Iterator[None]:
    """The collector as the launcher leaves it (off), and as it was afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    yield
    gc.unfreeze()
    if was_enabled:
        gc.enable()


def test_the_collector_comes_back_once_the_loads_are_in_with_them_set_aside(
    qtbot: QtBot, workers: Workers, collector_off: None
) -> None:
    release = threading.Event()
    loads = StartLoads(workers)
    made: list[object] = []
    loads.add("loading", lambda: (release.wait(10), made.append([{"kept": True}])))
    set_aside_start(loads, wait_ms=60_000)
    loads.start()
    assert not gc.isenabled()  # the line is still loading
    frozen = gc.get_freeze_count()
    release.set()
    qtbot.waitUntil(lambda: loads.done, timeout=10_000)
    assert gc.isenabled()
    assert gc.get_freeze_count() > frozen  # what the load made is never walked again
    # The line finishing again later (a newer model list) sets nothing aside again.
    frozen = gc.get_freeze_count()
    loads.add("a newer list", lambda: [[n] for n in range(1000)])
    qtbot.waitUntil(lambda: loads.done, timeout=10_000)
    assert gc.get_freeze_count() <= frozen  # (set-aside objects may be freed meanwhile)


def test_a_line_that_never_finishes_does_not_keep_the_collector_off(
    qtbot: QtBot, workers: Workers, collector_off: None
) -> None:
    release = threading.Event()
    loads = StartLoads(workers)
    loads.add("a model list that waits out a slow server", lambda: release.wait(10))
    set_aside_start(loads, wait_ms=50)
    loads.start()
    qtbot.waitUntil(gc.isenabled, timeout=5_000)
    assert not loads.done
    release.set()
    qtbot.waitUntil(lambda: loads.done, timeout=10_000)
