"""The `timothy` command: the app's launcher and the scriptable face of the core.

Subcommands map one-to-one onto core functions; each module here registers its own.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from timothy import __version__
from timothy.cli import (
    backups,
    chat,
    consolidate,
    doctor,
    embed,
    memories,
    providers,
    recall,
    sessions,
    store,
)
from timothy.cli.context import Context, common_options
from timothy.errors import TimothyError
from timothy.health import Check
from timothy.logs import configure_logging

log = logging.getLogger(__name__)

AppLauncher = Callable[[Path | None], int]
ExtraChecks = Callable[[], list[Check]]

# Each module adds its subcommands; later features add theirs here.
COMMAND_MODULES = (
    memories,
    recall,
    chat,
    sessions,
    consolidate,
    doctor,
    providers,
    embed,
    backups,
    store,
)


def build_parser() -> argparse.ArgumentParser:
    common = common_options()
    parser = argparse.ArgumentParser(
        prog="timothy",
        description="Timothy, a desktop assistant whose memory belongs to you. "
        "With no command, opens the app.",
        parents=[common],
    )
    parser.add_argument("--version", action="version", version=f"Timothy {__version__}")
    parser.add_argument(
        "--self-check",
        action="store_true",
        help="check that every part of Timothy works on this machine, then exit",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module in COMMAND_MODULES:
        module.register(sub, common)
    return parser


def main(
    argv: Sequence[str] | None = None,
    *,
    launch_app: AppLauncher | None = None,
    extra_checks: ExtraChecks | None = None,
) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    configure_logging(verbose=bool(getattr(args, "verbose", False)))
    # Bytes on stdin that are not UTF-8 arrive as lone surrogates, as the C locale gives them
    # and as arguments always do, where every command refuses them in plain words; a strict
    # stdin raised UnicodeDecodeError at the read ("unexpected error").
    reconfigure = getattr(sys.stdin, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="surrogateescape")
    ctx = Context(args)
    try:
        if args.self_check:
            return doctor.self_check(ctx, extra_checks() if extra_checks else [])
        handler = getattr(args, "handler", None)
        if handler is None:
            if args.command is not None:  # a command group given without its action
                ctx.fail(
                    f"`timothy {args.command}` needs an action; see `timothy {args.command} -h`."
                )
                return 2
            if launch_app is None:
                ctx.fail("the desktop app is not available here; run `timothy --help`.")
                return 2
            return launch_app(ctx.data_override)
        code: int = handler(ctx)
        # A read that ran on a damaged store warned first; scripts see it in the status too.
        return 1 if code == 0 and ctx.read_damaged else code
    except TimothyError as exc:
        ctx.fail(str(exc))
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:
        if getattr(args, "verbose", False):
            raise
        log.exception("unexpected error")
        ctx.fail(f"unexpected error: {exc} (details are in the log; --verbose shows them)")
        return 1
    finally:
        ctx.close()


if __name__ == "__main__":
    raise SystemExit(main())
