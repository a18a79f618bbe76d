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
