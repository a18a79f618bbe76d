"""Logging to a rotating file in the log folder; never a secret, never a whole prompt at INFO."""

from __future__ import annotations

import logging
import logging.handlers
import sys

from timothy import paths

LOG_FILENAME = "timothy.log"
_configured = False


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
