"""The Qt binding in use is sound: emitting signals must not corrupt Python's reference counts.

PySide6 6.12.0 drops a reference to True on every Python-side emit; on Python 3.11 the
process aborts after a few hundred signals. pyproject.toml excludes that release; this
test fails loudly if a broken binding comes back.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal


class _Emitter(QObject):
    happened = Signal(object)
    ticked = Signal()


def test_emitting_signals_keeps_reference_counts_intact() -> None:
    emitter = _Emitter()
    heard: list[object] = []
    emitter.happened.connect(heard.append)
    emitter.ticked.connect(lambda: heard.append(None))
    before = (sys.getrefcount(True), sys.getrefcount(False))
    for number in range(100):
        emitter.happened.emit(number)
        emitter.ticked.emit()
    heard.clear()
    assert (sys.getrefcount(True), sys.getrefcount(False)) == before
