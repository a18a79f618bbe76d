"""`timothy consolidate`: run the daily memory consolidation by hand, or show the last report."""

from __future__ import annotations

import argparse
from datetime import datetime, timedelta
from typing import Any

from timothy.cli.context import Context, add_json, add_now
from timothy.errors import ProviderError
from timothy.memory.consolidation import (
    ConsolidationReport,
    consolidate,
    consolidate_if_due,
    due,
    last_report,
    last_run,
)
from timothy.providers import factory
from timothy.providers.base import ChatProvider
from timothy.settings import Settings, load_settings


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "consolidate",
        parents=[common],
        help="merge near-duplicate memories, archive stale episodes, decay stale facts",
        description="Run the daily memory consolidation now (the app runs it once a day).",
    )
    p.add_argument(
        "--dry-run", action="store_true", help="change nothing; report what a run would change"
    )
    p.add_argument(
        "--if-due", action="store_true", help="run only when a day has passed since the last run"
    )
    p.add_argument(
        "--last", action="store_true", help="show the last run's report instead of running"
    )
    add_json(p)
    add_now(p)
    p.set_defaults(handler=cmd_consolidate)


def chat_provider(ctx: Context, settings: Settings) -> ChatProvider | None:
    """The chat model the owner set up, or None: merging is then skipped (and reported),
    while archival and decay still run."""
    try:
        return factory.chat_provider(settings)
    except ProviderError as exc:  # set up but unusable (no key, ...): say so, go on without
        ctx.fail(f"merging needs the chat model, which is not usable: {exc}")
        return None


def _print_report(ctx: Context, report: ConsolidationReport) -> None:
    if ctx.json:
        ctx.print_json(report.to_json())
        return
    for line in report.details():
        ctx.print(line)


def _not_run(ctx: Context, previous: datetime | None, interval_hours: float) -> None:
    if previous is None:  # due, yet not run: another machine holds the run
        if ctx.json:
            ctx.print_json({"ran": False, "next_due": None})
        else:
            ctx.print("Not run: another machine sharing this memory is running it now.")
        return
    next_due = previous + timedelta(hours=interval_hours)
    if ctx.json:
        ctx.print_json({"ran": False, "next_due": next_due.isoformat()})
    else:
        ctx.print(
            f"Not due: the last run was {previous:%Y-%m-%d %H:%M} UTC; next after "
            f"{next_due:%Y-%m-%d %H:%M} UTC."
        )


def cmd_consolidate(ctx: Context) -> int:
    args = ctx.args
    store = ctx.store(writes=not (args.last or args.dry_run))
    owner_settings = load_settings()
    settings = owner_settings.consolidation
    if args.last:
        report = last_report(store)
        if report is None:
            ctx.fail("consolidation has not run yet.")
            return 1
        _print_report(ctx, report)
        return 0
    now = ctx.now()
    chat = chat_provider(ctx, owner_settings)  # a dry run only names it; it is not called
    if args.if_due and not args.dry_run:
        # Once across every machine that shares the store (its lock), and only when due.
        found = consolidate_if_due(store, chat, settings, now=now)
        if found is None:
            _not_run(ctx, last_run(store), settings.interval_hours)
            return 0
        _print_report(ctx, found)
        return 1 if found.failed else 0
    if args.if_due and not due(store, now, settings):
        _not_run(ctx, last_run(store), settings.interval_hours)
        return 0
    report = consolidate(store, chat, settings, now=now, dry_run=args.dry_run)
    _print_report(ctx, report)
    return 1 if report.failed else 0
