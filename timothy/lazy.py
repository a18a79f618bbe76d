"""A module imported, or a pattern compiled, when first used rather than when the module that
names it is imported (`lazy_pattern`: see its docstring).

numpy takes 65-150 ms to import. The store, retrieval and memory modules the window's start
imports name it at their top, but only their vector work (a search, an embedding, a
migration's vector copy, consolidation) uses it, and that runs on a worker. Each of those
modules binds `np` to `lazy_module("numpy")` (the real module under TYPE_CHECKING, so mypy
sees numpy's own types); the first attribute read imports numpy on the thread that reads it,
and every name read is then kept on the stand-in, so later reads are a plain lookup.
"""

from __future__ import annotations

import importlib
import re
import threading
from types import ModuleType
from typing import Any, cast

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


class _LazyPattern:
    """A regular expression compiled on its first use (see `lazy_pattern`)."""

    # What a module's code reads of a compiled pattern.
    _READ = (
        "search",
        "match",
        "fullmatch",
        "finditer",
        "findall",
        "sub",
        "subn",
        "split",
        "scanner",
        "pattern",
        "flags",
        "groups",
        "groupindex",
    )

    def __init__(self, pattern: str, flags: int) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        # Asked only for a name not yet kept: compile, then keep what is read of the
        # pattern, so every later read is an ordinary attribute lookup. Two threads may
        # compile it at once; both get the same pattern (re's own cache), either is kept.
        if name.startswith("__"):
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        for attr in self._READ:
            self.__dict__[attr] = getattr(compiled, attr)
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"lazy_pattern({self._source[0]!r}, {self._source[1]!r})"


def lazy_pattern(pattern: str, flags: int | re.RegexFlag = 0) -> re.Pattern[str]:
    """`re.compile(pattern, flags)`, compiled when first used rather than at import.

    The memory modules the window's start imports hold about 60 regular expressions
    (provenance, dates, time expressions) that only a saved fact, an extraction or a
    question naming a day uses; compiling them all took ~30 ms of the start's imports, on
    the thread that opens the window. Anything read of the stand-in after the first use is
    the compiled pattern's own method or value. Use it for module-level patterns that code
    only calls methods of (not `isinstance` checks or `re.sub(pattern, ...)`)."""
    return cast("re.Pattern[str]", _LazyPattern(pattern, int(flags)))
