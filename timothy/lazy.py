"""A module imported when it is first used, not when the module that names it is imported.

numpy takes 65-150 ms to import. The store, retrieval and memory modules the window's start
imports name it at their top, but only their vector work (a search, an embedding, a
migration's vector copy, consolidation) uses it, and that runs on a worker. Each of those
modules binds `np` to `lazy_module("numpy")` (the real module under TYPE_CHECKING, so mypy
sees numpy's own types); the first attribute read imports numpy on the thread that reads it,
and every name read is then kept on the stand-in, so later reads are a plain lookup.
"""

from __future__ import annotations

import importlib
import threading
from types import ModuleType
from typing import Any

# One first import at a time. Python's per-module import locks let a second thread see a
# half-made module when two threads import one package's parts at once (numpy's C core from
# a lazy read here and from onnxruntime's own `import numpy` on another thread: "cannot
# import name '__cpu_features__' from partially initialized module"). A module that imports
# numpy itself imports it through a stand-in first (see `providers/local.py`).
import_lock = threading.RLock()


def lazy_module(name: str) -> Any:
    """A stand-in for the module `name` that imports it on its first attribute read.

    A plain module whose `__getattr__` (PEP 562: asked only for a name the module lacks)
    imports the real one and keeps the name read, so every later read of it is an ordinary
    module lookup (a subclass of ModuleType with a `__getattr__` method would slow every
    read down, hits too, threefold). Not put in `sys.modules`: `name in sys.modules` stays
    False until the real import has run.
    """
    stand_in = ModuleType(name)

    def load(attr: str) -> Any:
        # A second thread waits for the first one's import to finish rather than see a
        # half-made module.
        with import_lock:
            value = getattr(importlib.import_module(name), attr)
        setattr(stand_in, attr, value)
        return value

    stand_in.__getattr__ = load  # type: ignore[method-assign]
    return stand_in
