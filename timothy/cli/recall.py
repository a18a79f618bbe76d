"""`timothy recall ...`: the memory block a chat turn would inject for a query, and why."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from timothy.cli.context import Context, add_json, add_now
from timothy.errors import InvalidInputError, TimothyError
from timothy.providers.factory import query_embedder
from timothy.retrieval import Recaller, RecallResult
from timothy.settings import load_settings
from timothy.store.records import parse_given_time


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "recall",
        parents=[common],
        help="show the memory block recall would inject for a query",
        description="Recall memories for QUERY and print the block exactly as a chat turn "
        "would inject it (--json: with every candidate's scores).",
    )
    p.add_argument("query", nargs="*", help="the query ('-' reads it from stdin)")
    p.add_argument("--budget", type=int, metavar="N", help="token budget (default: 1000)")
    p.add_argument(
        "--no-decay", action="store_true", help="score without recency decay (as if all new)"
    )
    p.add_argument(
        "--batch",
        metavar="FILE",
        help='JSON Lines of {"query": ..., "now"?: ISO, "budget"?: N}; prints one JSON '
        "result per line ('-' reads stdin)",
    )
    p.add_argument(
        "--no-mark",
        action="store_true",
        help="leave last_retrieved_at alone (by default packed memories are stamped)",
    )
    add_json(p)
    add_now(p)
    p.set_defaults(handler=cmd_recall)


def _recaller(ctx: Context) -> Recaller:
    """A Recaller whose vector leg embeds queries like the stored vectors it searches (the
    active model: during a switch of embedding model, still the old one)."""
    store = ctx.store()
    active = store.vectors.active_model()
    settings = load_settings()
    embedder = query_embedder(settings, active.name if active else None)
    return Recaller(store, settings.recall, embedder=embedder)


def _report_legs(ctx: Context, result: RecallResult) -> None:
    for leg, status in result.legs.items():
        if status.startswith("failed"):
            ctx.err.write(f"timothy: the {leg} search {status}; recalled without it\n")


def cmd_recall(ctx: Context) -> int:
    args = ctx.args
    if args.budget is not None and args.budget < 0:
        raise InvalidInputError("--budget must be zero or more.")
    if args.batch is not None:
        if args.query:
            raise InvalidInputError("Give either a query or --batch FILE, not both.")
        return _batch(ctx)
    if not args.query:
        raise InvalidInputError("What should be recalled? Give a query (or --batch FILE).")
    query = sys.stdin.read() if args.query == ["-"] else " ".join(args.query)
    with _recaller(ctx) as recaller:
        result = recaller.recall(
            query,
            budget=args.budget,
            now=ctx.now(),
            decay=not args.no_decay,
            mark=not args.no_mark,
        )
    if ctx.json:
        ctx.print_json(result.to_json())
        return 0
    _report_legs(ctx, result)
    if result.block:
        ctx.print(result.block)
    else:
        ctx.err.write("Nothing recalled: no memory matched (or none fits the budget).\n")
    return 0


def _batch_lines(ctx: Context, source: str) -> Iterable[str]:
    if source == "-":
        yield from sys.stdin
        return
    path = Path(source).expanduser()
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise InvalidInputError(f"Cannot read {path}: {exc.strerror}.") from exc
    with handle:
        try:
            yield from handle
        except UnicodeDecodeError:
            raise InvalidInputError(f"{path} is not UTF-8 text.") from None


def _parse_request(raw: str, ctx: Context) -> dict[str, Any]:
    try:
        request = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InvalidInputError(f"not valid JSON ({exc.msg})") from None
    if not isinstance(request, dict):
        raise InvalidInputError("each line must be one JSON object")
    query = request.get("query")
    if not isinstance(query, str):
        raise InvalidInputError("'query' must be a string")
    now = ctx.now()
    if request.get("now") is not None:
        try:
            now = parse_given_time(str(request["now"]))
        except ValueError:
            raise InvalidInputError("'now' must be an ISO 8601 time from 1970 to 9998") from None
    budget = request.get("budget", ctx.args.budget)
    if budget is not None and (
        isinstance(budget, bool) or not isinstance(budget, int) or budget < 0
    ):
        raise InvalidInputError("'budget' must be a whole number, zero or more")
    decay = request.get("decay", not ctx.args.no_decay)
    if not isinstance(decay, bool):
        raise InvalidInputError("'decay' must be true or false")
    return {"query": query, "now": now, "budget": budget, "decay": decay}


def _batch(ctx: Context) -> int:
    """One recall per line, in one process; a bad line gets an {"error": ...} line."""
    failed = 0
    with _recaller(ctx) as recaller:
        for number, raw in enumerate(_batch_lines(ctx, ctx.args.batch), start=1):
            if not raw.strip():
                continue
            try:
                request = _parse_request(raw, ctx)
                result = recaller.recall(request.pop("query"), mark=not ctx.args.no_mark, **request)
            except TimothyError as exc:
                failed += 1
                ctx.print_json({"error": f"line {number}: {exc}"})
                continue
            ctx.print_json(result.to_json())
            ctx.out.flush()
    return 1 if failed else 0
