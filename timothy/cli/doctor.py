"""`timothy doctor` and `timothy --self-check`: one line per part of Timothy, ok or not."""

from __future__ import annotations

import argparse
from typing import Any

from timothy.cli.context import Context
from timothy.health import Check, backup_check, provider_checks, self_checks


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("doctor", parents=[common], help="check that Timothy's parts work")
    p.set_defaults(handler=cmd_doctor)


def report(ctx: Context, checks: list[Check]) -> int:
    for check in checks:
        ctx.print(check.line())
    failed = [c for c in checks if not c.ok]
    ctx.print(f"{len(checks) - len(failed)} of {len(checks)} checks passed")
    return 1 if failed else 0


def cmd_doctor(ctx: Context) -> int:
    return report(ctx, [*self_checks(ctx.data_dir), backup_check(ctx.data_dir), *provider_checks()])


def self_check(ctx: Context, extra: list[Check]) -> int:
    return report(ctx, self_checks(ctx.data_dir) + extra)
