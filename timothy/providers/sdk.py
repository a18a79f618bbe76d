"""The vendors' SDKs (openai, boto3) are imported when first needed, on a worker, and one
thread at a time: two threads importing pydantic's or botocore's modules at once can each
find the other's module half made ("cannot import name ... from partially initialized
module"), which failed the chat model's set-up at start while the model list was asked for.
Once imported, later imports are look-ups and the lock costs nothing."""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from importlib.machinery import ModuleSpec
from types import ModuleType

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


# -- the openai SDK's types, package by package as they are used ---------------------------
#
# `import openai` runs `openai/types/__init__.py`, which imports every one of the SDK's ~540
# type modules (the Responses API's, evals', graders', realtime's...), each a pydantic model
# built at import: ~0.5 s more of a worker holding the GIL beside the window's start (the
# import and client took 1.05 s, now 0.55 s) and ~10 MB resident for models Timothy never
# sends or reads (it speaks chat completions, embeddings and the model list). The packages
# under `openai.types` hold nothing of their own: their `__init__` only re-exports their
# modules. So each is made lazy here: a module is imported
# when it is named (`from openai.types.chat import chat_completion`, which is how the SDK's
# resources name them), and the package's `__init__` runs whole the first time a name is read
# from the package itself (`openai.types.chat.ChatCompletion`), so every name the SDK offers
# is still there. The SDK, its resources and their models are the real ones, unchanged.
#
# Imports of the SDK run one thread at a time (`importing`); the whole `__init__` runs under
# the same lock.

_TYPES = "openai.types"


class _LazyPackageLoader(importlib.abc.Loader):
    """The loader of one package under `openai.types`: the package is made with its path (so
    its modules can be imported), and its `__init__` runs on the first name read from it."""

    def __init__(self, loader: importlib.abc.Loader) -> None:
        self._loader = loader

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        loader = self._loader
        ran = False

        def read(name: str) -> object:
            nonlocal ran
            if name.startswith("__") and name.endswith("__") and name != "__all__":
                # Asked by inspection (`__wrapped__`, `__file__` hooks): a plain package
                # without it says no too; running the `__init__` for it would undo the point.
                raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
            with _lock:
                if not ran:
                    submodule = f"{module.__name__}.{name}"
                    if name != "__all__" and importlib.util.find_spec(submodule) is not None:
                        return importlib.import_module(submodule)
                    # A name of the package's own, or `import *` asking for `__all__`: the
                    # package whole, as it always was.
                    ran = True
                    loader.exec_module(module)
            try:
                return module.__dict__[name]
            except KeyError:
                raise AttributeError(
                    f"module {module.__name__!r} has no attribute {name!r}"
                ) from None

        module.__getattr__ = read  # type: ignore[method-assign]

    def __getattr__(self, name: str) -> object:
        # Anything else a loader is asked (resources, source) is the real loader's.
        return getattr(self._loader, name)


class _LazyTypePackages(importlib.abc.MetaPathFinder):
    """Finds the packages under `openai.types` as the other finders do, with a lazy loader."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> ModuleSpec | None:
        if fullname != _TYPES and not fullname.startswith(_TYPES + "."):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if spec.submodule_search_locations is None or not hasattr(loader, "exec_module"):
            return None  # a module, not a package: found as always
        spec.loader = _LazyPackageLoader(loader)  # type: ignore[arg-type]
        return spec


def lazy_openai_types() -> None:
    """Make the packages under `openai.types` lazy for every later import of the SDK (once;
    no-op when the SDK's types are already imported)."""
    with _lock:
        if _TYPES in sys.modules:
            return
        if not any(isinstance(finder, _LazyTypePackages) for finder in sys.meta_path):
            sys.meta_path.insert(0, _LazyTypePackages())


lazy_openai_types()
