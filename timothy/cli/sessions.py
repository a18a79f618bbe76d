"""`timothy sessions list|show|export`: conversations, per turn the memory block the model saw,
and one conversation as a Markdown document."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from timothy.chat.export import conversation_markdown, export_markdown
from timothy.cli.context import Context, add_json
from timothy.store.records import MessageRole


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    group = sub.add_parser("sessions", parents=[common], help="list and show conversations")
    ssub = group.add_subparsers(dest="sessions_command", metavar="ACTION")
    p = ssub.add_parser("list", parents=[common], help="conversations, most recent first")
    p.add_argument("--search", metavar="TEXT", help="only those whose title or messages match")
    add_json(p)
    p.set_defaults(handler=cmd_list)
    p = ssub.add_parser("show", parents=[common], help="one conversation, turn by turn")
    p.add_argument("id")
    p.add_argument(
        "--all-branches",
        action="store_true",
        help="every message, earlier versions included (default: the branch shown in the app)",
    )
    add_json(p)
    p.set_defaults(handler=cmd_show)
    p = ssub.add_parser("export", parents=[common], help="one conversation as a Markdown document")
    p.add_argument("id")
    p.add_argument(
        "--markdown",
        action="store_true",
        help="as Markdown: title, date, each turn under who spoke (the format, and the default)",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of printing it")
    p.set_defaults(handler=cmd_export)


def cmd_list(ctx: Context) -> int:
    sessions = ctx.store().sessions.list(search=ctx.args.search)
    for session in sessions:
        if ctx.json:
            ctx.print_json(session.to_json())
        else:
            when = session.updated_at.strftime("%Y-%m-%d %H:%M")
            ctx.print(f"{session.id}  {when}  {session.title or '(untitled)'}")
    if not ctx.json and not sessions:
        ctx.err.write("No conversations.\n")
    return 0


def cmd_show(ctx: Context) -> int:
    repo = ctx.store().sessions
    session = repo.get(ctx.args.id)
    messages = repo.messages(session.id) if ctx.args.all_branches else repo.branch(session.id)
    if ctx.json:
        ctx.print_json({**session.to_json(), "messages": [m.to_json() for m in messages]})
        return 0
    ctx.print(f"# {session.title or '(untitled)'}  [{session.id}]")
    for message in messages:
        ctx.print()
        label = message.role.value
        if message.status.value != "complete":
            label += f" ({message.status.value})"
        ctx.print(f"## {label}  {message.created_at.strftime('%Y-%m-%d %H:%M')}")
        if message.role is MessageRole.ASSISTANT and message.output_tokens is not None:
            ctx.print(
                f"[{message.model or 'unknown model'}: {message.input_tokens} tokens in, "
                f"{message.output_tokens} out]"
            )
        if message.role is MessageRole.ASSISTANT and message.memory_block is not None:
            ctx.print("[memory block the model saw]")
            ctx.print(message.memory_block or "(none)")
            ctx.print("[reply]")
        for call in message.tool_calls:
            ctx.print(f"[tool call {call.name} {call.arguments}]")
        ctx.print(message.content)
    return 0


def cmd_export(ctx: Context) -> int:
    store = ctx.store()
    target = ctx.args.output
    if not target or target == "-":
        ctx.out.write(conversation_markdown(store, ctx.args.id))
        return 0
    path = export_markdown(store, ctx.args.id, Path(target))
    ctx.err.write(f"Exported the conversation to {path}\n")
    return 0
