"""The vendors' SDKs (openai, boto3) are imported when first needed, on a worker, and one
thread at a time: two threads importing pydantic's or botocore's modules at once can each
find the other's module half made ("cannot import name ... from partially initialized
module"), which failed the chat model's set-up at start while the model list was asked for.
Once imported, later imports are look-ups and the lock costs nothing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.RLock()


@contextmanager
def importing() -> Iterator[None]:
    """Hold while importing an SDK or a module that imports one at its top."""
    with _lock:
        yield


def settle_pydantic() -> None:
    """Make pydantic (under the openai SDK) whole before Qt is imported.

    Once Qt is loaded, PySide's import hook inspects every new module, and asking pydantic's
    package for `__wrapped__` runs pydantic's lazy look-up, which imports its validators
    again while they are half made ("cannot import name 'import_string' from partially
    initialized module"): the chat model's set-up then failed at random. This is the same
    look-up, done first (about 0.1 s). The window's start and the test run both call it.
    """
    import pydantic

    getattr(pydantic, "__wrapped__", None)
