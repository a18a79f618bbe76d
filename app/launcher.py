"""The `timothy` executable: the desktop app with no command, the core's CLI otherwise."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from timothy.cli import main as cli_main
from timothy.health import Check


def launch_app(data_dir: Path | None) -> int:
    # Qt is imported only when the window is wanted, so CLI commands start fast.
    from app.application import run_app

    return run_app(data_dir)


def qt_checks() -> list[Check]:
    from app.application import check_qt

    return [check_qt()]


def main(argv: Sequence[str] | None = None) -> int:
    return cli_main(
        list(sys.argv[1:] if argv is None else argv),
        launch_app=launch_app,
        extra_checks=qt_checks,
    )


if __name__ == "__main__":
    raise SystemExit(main())
