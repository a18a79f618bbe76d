"""The `timothy` executable: the desktop app with no command, the core's CLI otherwise."""

from __future__ import annotations

import contextlib
import gc
import importlib.machinery
import linecache
import logging
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from timothy import heap
from timothy.cli import main as cli_main
from timothy.health import Check, xcb_library_problem, xcb_wanted
from timothy.providers.sdk import settle_pydantic
from timothy.tokens import encoding

log = logging.getLogger(__name__)


def before_qt() -> threading.Thread:
    """What the window's start does before Qt is imported; returns the encoding's warm-up."""
    gc.disable()  # until start-up's loads are in: see app/collector.py
    heap.limit_arenas()  # before any thread starts: see timothy/heap.py
    settle_pydantic()
    # The token encoding loads on a thread while Qt and the window's modules are imported.
    warming = threading.Thread(target=encoding, name="timothy-warm-up", daemon=True)
    warming.start()
    keep_no_module_sources()
    return warming


def keep_no_module_sources() -> None:
    """Stop PySide's import hook from keeping the source of every module imported after it,
    and answer its question from the module's file.

    For its opt-in `__feature__` switches, PySide asks of each newly imported module whether
    its source names PySide6, through `inspect.getsource`, which leaves the file's lines in
    `linecache` for the life of the process: about 250 whole files (the standard library's,
    pydantic's, the app's), 8 MB, in an idle window. The question is still asked and
    answered the same: from the bytes of the module's source file when it was imported from
    one (`_source_file`), else by PySide's own check, whose lines are dropped from the cache
    again (a traceback reads them back when it needs them). Imports PySide6's package (not
    Qt's libraries); a PySide without that hook is left as it is.
    """
    before = len(linecache.cache)
    import PySide6  # noqa: F401 (installs the import hook, which reads its own modules)

    _drop_sources_after(before)
    feature = sys.modules.get("PySide6.support.feature") or sys.modules.get(
        "shibokensupport.feature"
    )
    asks = getattr(feature, "_mod_uses_pyside", None)
    if feature is None or asks is None or getattr(asks, "keeps_no_sources", False):
        return

    def uses_pyside(module: ModuleType) -> bool:
        source = _source_file(module)
        if source is not None:
            try:
                with open(source, "rb") as file:
                    return _NAMES_PYSIDE in file.read()
            except OSError:
                pass
        cached = len(linecache.cache)
        try:
            return bool(asks(module))
        finally:
            _drop_sources_after(cached)

    uses_pyside.keeps_no_sources = True  # type: ignore[attr-defined]
    setattr(feature, "_mod_uses_pyside", uses_pyside)  # noqa: B010 (a module's private name)


# PySide's question, asked of a source file's bytes: the name is ASCII, and a Python source's
# encoding (PEP 263: UTF-8 or another ASCII-compatible one) writes it as these bytes.
_NAMES_PYSIDE = b"PySide6"


def _source_file(module: ModuleType) -> str | None:
    """The file a module was imported from when it was imported from its source (a plain
    `.py` file); None otherwise (compiled only, in a zip, built in, frozen), where PySide's
    own check answers.

    Asked of the file itself, PySide's question costs a read (~60 us on the bench machine)
    instead of `inspect.getsource` (~200 us: the module's file looked up, read through
    `linecache`, decoded, split into lines and joined again): ~150 modules are imported after
    PySide before the window shows (31-38 -> 8-10 ms in all, measured), and several hundred
    more by start-up's loads on workers, which hold the GIL meanwhile."""
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None)
    if (
        isinstance(origin, str)
        and origin.endswith(".py")
        and isinstance(getattr(spec, "loader", None), importlib.machinery.SourceFileLoader)
    ):
        return origin
    return None


def _drop_sources_after(count: int) -> None:
    """Drop the files cached after the first `count`: they are last in the cache (a dict
    keeps its order of insertion)."""
    with contextlib.suppress(KeyError):  # another thread emptied it meanwhile
        while len(linecache.cache) > count:
            linecache.cache.popitem()


def launch_app(data_dir: Path | None) -> int:
    # Before Qt loads its platform plugin: a missing system library would make Qt abort with
    # a message that names neither the library nor the package to install.
    problem = xcb_library_problem() if xcb_wanted() else None
    if problem is not None:
        log.error("cannot open the window: %s", problem)
        print(f"Timothy cannot open its window. {problem}", file=sys.stderr)
        return 1
    warming = before_qt()
    # Qt is imported only when the window is wanted, so CLI commands start fast.
    from app.application import run_app

    return run_app(data_dir, warming=warming)


def qt_checks() -> list[Check]:
    from app.application import check_qt
    from app.mainwindow.user_guide_dialog import check_user_guide
    from app.transcript.code_highlighter import check_highlighting

    return [check_qt(), check_highlighting(), check_user_guide()]


def ensure_streams() -> None:
    """Give a windowed build (timothy.exe on Windows) somewhere to print: it has no console.

    Windows users run commands through timothy-cli.exe; this only keeps timothy.exe from
    crashing on its first print when it is given a command anyway.
    """
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # noqa: SIM115 (for the whole run)


def main(argv: Sequence[str] | None = None) -> int:
    ensure_streams()
    return cli_main(
        list(sys.argv[1:] if argv is None else argv),
        launch_app=launch_app,
        extra_checks=qt_checks,
    )


if __name__ == "__main__":
    raise SystemExit(main())
