"""The `timothy` executable: the desktop app with no command, the core's CLI otherwise."""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from timothy.cli import main as cli_main
from timothy.health import Check, xcb_library_problem, xcb_wanted
from timothy.providers.sdk import settle_pydantic
from timothy.tokens import encoding

log = logging.getLogger(__name__)


def before_qt() -> threading.Thread:
    """What the window's start does before Qt is imported; returns the encoding's warm-up."""
    settle_pydantic()
    # The token encoding loads on a thread while Qt and the window's modules are imported.
    warming = threading.Thread(target=encoding, name="timothy-warm-up", daemon=True)
    warming.start()
    return warming


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
