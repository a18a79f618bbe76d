"""`timothy chat`: one turn, headless, with the configured provider; the reply streams to stdout."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from timothy.assistant import build
from timothy.chat.events import (
    BackgroundEvent,
    FactsProposed,
    MemorySaved,
    RecallFinished,
    ReplyDelta,
    TurnFailed,
    TurnFinished,
    TurnStarted,
)
from timothy.cli.context import Context, add_now
from timothy.errors import ErrorKind, InvalidInputError, ProviderError
from timothy.providers.base import CancelToken
from timothy.settings import load_settings


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("chat", parents=[common], help="one chat turn, the reply on stdout")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--session", metavar="ID", help="continue this conversation")
    which.add_argument("--new", action="store_true", help="start a new conversation")
    p.add_argument("message", nargs="*", help="the message (default: read from stdin)")
    add_now(p)
    p.set_defaults(handler=cmd_chat)


def cmd_chat(ctx: Context) -> int:
    args = ctx.args
    text = " ".join(args.message) if args.message else sys.stdin.read()
    if not text.strip():
        raise InvalidInputError("There is nothing to send: give a message or pipe one in.")
    settings = load_settings()
    store = ctx.store(writes=True)
    session_id = args.session
    if session_id is None and not args.new:
        recent = store.sessions.list(limit=1)
        session_id = recent[0].id if recent else None
    engine, setup = build(store, settings, warm=False)
    if setup.chat_problem is not None:
        engine.close()
        raise ProviderError(ErrorKind.NOT_CONFIGURED, setup.chat_problem)
    proposed: list[int] = []

    def on_background(event: BackgroundEvent) -> None:
        if isinstance(event, FactsProposed):
            proposed.append(len(event.memories))

    engine.background_listeners.append(on_background)
    cancel = CancelToken()
    code = 0
    try:
        for event in engine.send(text, session_id=session_id, cancel=cancel, now=ctx.now()):
            if isinstance(event, TurnStarted) and event.new_session:
                ctx.err.write(f"New conversation {event.session.id}\n")
            elif isinstance(event, RecallFinished) and event.block:
                ctx.err.write(f"[{event.tokens} tokens of memories recalled]\n")
            elif isinstance(event, ReplyDelta):
                ctx.out.write(event.text)
                ctx.out.flush()
            elif isinstance(event, MemorySaved):
                memory = event.memory
                if event.staged:
                    why = event.staged_because or "it waits for your confirmation"
                    ctx.err.write(
                        f"\nSaved for your review: {why}.\n  {memory.content}\n"
                        f"  (keep it: timothy memories confirm {memory.id}; "
                        f"drop it: timothy memories reject {memory.id})\n"
                    )
                else:
                    ctx.err.write(
                        f"\nRemembered: {memory.content} "
                        f"(undo: timothy memories reject {memory.id})\n"
                    )
            elif isinstance(event, TurnFinished):
                ctx.out.write("\n")
                if event.message.status.value == "cancelled":
                    ctx.err.write("(reply stopped)\n")
            elif isinstance(event, TurnFailed):
                if event.message is not None:
                    ctx.out.write("\n")
                ctx.fail(f"{event.error} Your message was kept; run the command again to retry.")
                code = 1
    except KeyboardInterrupt:
        cancel.cancel()
        ctx.err.write("\n(reply stopped)\n")
        code = 130
    finally:
        engine.wait_idle(timeout=engine.chat_settings.extraction_timeout_seconds + 5)
        engine.close()
    if proposed:
        ctx.err.write(
            f"{sum(proposed)} new fact(s) wait for your confirmation: "
            "timothy memories list --status staged\n"
        )
    return code
