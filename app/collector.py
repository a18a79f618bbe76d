"""Python's cyclic garbage collector, kept from freezing the window while it starts.

A full collection walks every container object the process holds, holding the GIL, on
whichever thread happened to allocate: every other thread, the GUI's too, waits it out.
Start-up makes hundreds of thousands of objects that live as long as the app (the window's
modules, then on workers the chat SDK's, the local model's tokenizer, Pygments' compiled
lexers), and `bench/app_startup.py` measured two or three full collections of 50-107 ms
between the window shown and everything loaded (on the workers, while they imported the SDK
and compiled the lexers beside onnxruntime's native threads), behind most of start-up's
longest GUI stalls (the GUI thread's own CPU in them: 1-40 ms). Once loaded and idle, a full
collection takes 6-8 ms.

So the launcher turns the collector off before its first import (`gc.disable()` in
`app.launcher.before_qt`, which must not import Qt), and once start-up's later loads are in
(or after `START_WAIT_MS` at the latest) everything alive is set aside (`gc.freeze`: moved
where the collector never walks) and the collector runs again, over what is made from then
on. Start-up makes little garbage with cycles (its objects are kept); what there is stays,
a one-off that the idle app's resident memory would show.
"""

from __future__ import annotations

import gc
import logging
from typing import TYPE_CHECKING

from PySide6.QtCore import QTimer

if TYPE_CHECKING:
    from app.mainwindow.start_loads import StartLoads

log = logging.getLogger(__name__)

# Start-up's loads are in after 2-9 s; a line held up (a model list waiting out a slow
# server's timeout) does not keep the collector off longer than this.
START_WAIT_MS = 30_000


def set_aside_start(loads: StartLoads, wait_ms: int = START_WAIT_MS) -> None:
    """Once start-up's `loads` (the window's line) are in, or `wait_ms` from now, whichever
    is first: set aside every object alive and turn the collector on again."""
    done = [False]

    def release() -> None:
        if done[0]:  # the line may finish again later (a newer model list): once is enough
            return
        done[0] = True
        gc.freeze()
        gc.enable()
        log.debug("start-up's %d objects set aside; the collector runs", gc.get_freeze_count())

    loads.finished.connect(release)
    QTimer.singleShot(wait_ms, loads, release)
