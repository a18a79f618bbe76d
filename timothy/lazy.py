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
from types import ModuleType
from typing import Any


class LazyModule(ModuleType):
    """Stands in for the module `name` until an attribute is read from it. Not put in
    `sys.modules`: `name in sys.modules` stays False until the real import has run."""

    def __getattr__(self, attr: str) -> Any:
        # Only for names not yet kept here. The import lock makes a second thread wait for
        # the first one's import to finish rather than see a half-made module.
        value = getattr(importlib.import_module(self.__name__), attr)
        setattr(self, attr, value)
        return value


def lazy_module(name: str) -> Any:
    """A stand-in for the module `name` that imports it on its first attribute read."""
    return LazyModule(name)
