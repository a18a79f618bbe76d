"""Logging to a rotating file in the log folder; never a secret, never a whole prompt at INFO."""

from __future__ import annotations

import logging
import logging.handlers
import sys
import threading
import time
from collections.abc import Callable

from timothy import paths

LOG_FILENAME = "timothy.log"
# Libraries whose warnings belong in Timothy's log rather than on stderr. A logger's filter
# sees only the records made on that logger, so each one that logs is named.
LIBRARY_LOGGERS = ("psycopg", "psycopg.pool")
# psycopg's pool says "error connecting" at every retry while the server is away (a dozen a
# minute at first); the memory server's link already logs the outage once, in plain words.
QUIET_REPEATS_S = 300.0
_configured = False


class QuietRepeats(logging.Filter):
    """A logger's filter that lets a message through once per `window` seconds, counted by
    its template (the text before its arguments are filled in): a retry loop logs its first
    failure, then one line every `window` saying how many like it were held back."""

    def __init__(
        self, window: float = QUIET_REPEATS_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self.window = window
        self.clock = clock
        self._lock = threading.Lock()
        self._last: dict[tuple[str, object], float] = {}
        self._held: dict[tuple[str, object], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, record.msg)
        now = self.clock()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last < self.window:
                self._held[key] = self._held.get(key, 0) + 1
                return False
            self._last[key] = now
            held = self._held.pop(key, 0)
        if held:
            record.msg = f"{record.msg} ({held} more like this in the last {self.window:.0f} s)"
        return True


def configure_logging(*, verbose: bool = False) -> None:
    """Send Timothy's log to its rotating file (and to stderr when verbose). Idempotent."""
    global _configured
    if _configured:
        return
    _configured = True
    root = logging.getLogger("timothy")
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        folder = paths.log_dir()
        folder.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.handlers.RotatingFileHandler(
            folder / LOG_FILENAME, maxBytes=2_000_000, backupCount=3, encoding="utf-8"
        )
        handler.setFormatter(formatter)
        root.addHandler(handler)
    except OSError:
        pass  # no log folder: logging must never stop Timothy from running
    if verbose:
        stream = logging.StreamHandler(sys.stderr)
        stream.setFormatter(formatter)
        root.addHandler(stream)
    for name in ("app",):
        logging.getLogger(name).handlers = root.handlers
        logging.getLogger(name).setLevel(root.level)
    quiet = QuietRepeats()
    for name in LIBRARY_LOGGERS:
        library = logging.getLogger(name)
        # A list of its own: a logger that does not propagate gets other handlers added to
        # it (pytest's capture does this), and a shared list would hand them to "timothy" too.
        library.handlers = list(root.handlers)
        library.setLevel(logging.WARNING)  # their INFO lines come at every borrow: not built
        library.propagate = False
        library.addFilter(quiet)
