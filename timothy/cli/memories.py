"""`timothy memories ...`: the memory lifecycle, export and import, from the command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from timothy import paths
from timothy.cli.context import Context, add_json, add_now
from timothy.errors import InvalidInputError, TimothyError
from timothy.memory.consolidation import LAST_REPORT_KEY
from timothy.memory.forget import forget, purge_backups, server_backups_message
from timothy.retrieval.fading import fading
from timothy.settings import load_settings
from timothy.store import Store
from timothy.store.backups import PurgeReport
from timothy.store.forget import ForgetReport
from timothy.store.location import chosen_location
from timothy.store.records import Memory, MemorySource, MemoryStatus, MemoryType
from timothy.store.transfer import (
    export_memories,
    export_to_file,
    import_from_file,
    import_memories,
)

_TYPES = [t.value for t in MemoryType]
_STATUSES = [s.value for s in MemoryStatus]


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    group = sub.add_parser("memories", parents=[common], help="inspect and change memories")
    msub = group.add_subparsers(dest="memories_command", metavar="ACTION")

    p = msub.add_parser("add", parents=[common], help="store a fact (active unless --staged)")
    p.add_argument("text", nargs="+", help="the fact ('-' reads it from stdin)")
    p.add_argument("--type", choices=_TYPES, default=MemoryType.SEMANTIC.value)
    p.add_argument("--entity", action="append", default=[], metavar="NAME", help="repeatable")
    p.add_argument("--staged", action="store_true", help="stage it for confirmation instead")
    p.add_argument("--confidence", type=float, default=None)
    add_json(p)
    add_now(p)
    p.set_defaults(handler=cmd_add)

    p = msub.add_parser("list", parents=[common], help="list memories, newest first")
    p.add_argument("--status", choices=_STATUSES)
    p.add_argument("--type", choices=_TYPES)
    p.add_argument("--search", metavar="TEXT", help="only memories containing these words")
    p.add_argument("--limit", type=int, default=None)
    add_json(p)
    p.set_defaults(handler=cmd_list)

    p = msub.add_parser("show", parents=[common], help="show one memory")
    p.add_argument("id")
    add_json(p)
    p.set_defaults(handler=cmd_show)

    for name, handler, text in (
        ("confirm", cmd_confirm, "promote staged memories (or re-confirm active ones)"),
        ("reject", cmd_reject, "reject staged (or active) memories"),
        ("archive", cmd_archive, "archive active memories"),
        ("restore", cmd_restore, "restore rejected (to staged) or archived (to active) memories"),
    ):
        p = msub.add_parser(name, parents=[common], help=text)
        p.add_argument("ids", nargs="+", metavar="ID")
        add_json(p)
        add_now(p)
        p.set_defaults(handler=handler)

    p = msub.add_parser(
        "forget",
        parents=[common],
        help="remove memories for good, with every copy of their text in the store",
        description="Remove memories for good: the memory, its entities, text index rows, "
        "vectors and decay records, and its text wherever the store copied it (the memory "
        "blocks of past turns keep their shape, the line says [forgotten]). All or nothing: "
        "an unknown id forgets nothing. Older backups are separate files and still hold it, "
        "unless --purge-backups is given.",
    )
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument("--chain", action="store_true", help="every version of each memory's chain")
    p.add_argument(
        "--purge-backups",
        action="store_true",
        help="also remove them from every backup in the data folder's backups/",
    )
    add_json(p)
    p.set_defaults(handler=cmd_forget)

    p = msub.add_parser(
        "purge-backups",
        parents=[common],
        help="remove memories (already forgotten, or not) from every backup",
        description="Forget memories in every backup in the data folder's backups/ as "
        "`memories forget` does in the store: each backup that holds them is changed on a "
        "copy, checked with integrity_check, then put in its place. A backup that cannot be "
        "purged (damaged, from a newer Timothy) is left as it was and named. The store "
        "itself is not changed.",
    )
    p.add_argument("ids", nargs="+", metavar="ID")
    p.add_argument("--chain", action="store_true", help="every version of each memory's chain")
    add_json(p)
    p.set_defaults(handler=cmd_purge_backups)

    p = msub.add_parser("edit", parents=[common], help="supersede a memory with a new version")
    p.add_argument("id")
    p.add_argument("text", nargs="+", help="the new text ('-' reads it from stdin)")
    p.add_argument("--type", choices=_TYPES, default=None)
    p.add_argument("--entity", action="append", default=None, metavar="NAME")
    add_json(p)
    add_now(p)
    p.set_defaults(handler=cmd_edit)

    p = msub.add_parser("chain", parents=[common], help="every version of a memory, oldest first")
    p.add_argument("id")
    add_json(p)
    p.set_defaults(handler=cmd_chain)

    p = msub.add_parser(
        "fading",
        parents=[common],
        help="facts one search alone can no longer recall (re-confirm to keep them)",
        description="List active semantic, preference and procedural memories whose best "
        "single-search score has decayed under the minimum, longest unconfirmed first. "
        "`timothy memories confirm ID` re-confirms one.",
    )
    add_json(p)
    add_now(p)
    p.set_defaults(handler=cmd_fading)

    p = msub.add_parser("export", parents=[common], help="write every memory as JSON Lines")
    p.add_argument("file", nargs="?", help="output file (default: stdout)")
    p.set_defaults(handler=cmd_export)

    p = msub.add_parser("import", parents=[common], help="read memories from JSON Lines")
    p.add_argument("file", help="input file ('-' for stdin)")
    add_now(p)
    p.set_defaults(handler=cmd_import)


def _text(ctx: Context, parts: list[str]) -> str:
    if parts == ["-"]:
        return sys.stdin.read()
    return " ".join(parts)


def _one_line(text: str, width: int = 72) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _when(memory_time: Any) -> str:
    return "never" if memory_time is None else memory_time.strftime("%Y-%m-%d %H:%M UTC")


def print_memory_line(ctx: Context, memory: Memory) -> None:
    entities = f"  [{', '.join(memory.entities)}]" if memory.entities else ""
    ctx.print(
        f"{memory.id}  {memory.status.value:<10} {memory.type.value:<10} "
        f"{_one_line(memory.content)}{entities}"
    )


def print_memory(ctx: Context, memory: Memory) -> None:
    rows = [
        ("id", memory.id),
        ("content", memory.content),
        ("status", memory.status.value),
        ("type", memory.type.value),
        ("confidence", f"{memory.confidence:.2f}"),
        ("source", memory.source.value),
        ("entities", ", ".join(memory.entities) or "none"),
        ("created", _when(memory.created_at)),
        ("confirmed", _when(memory.last_confirmed_at)),
        ("retrieved", _when(memory.last_retrieved_at)),
    ]
    if memory.session_id:
        rows.append(("session", memory.session_id))
    if memory.supersedes:
        rows.append(("supersedes", memory.supersedes))
    if memory.superseded_by:
        rows.append(("superseded by", memory.superseded_by))
    for label, value in rows:
        ctx.print(f"{label + ':':<15}{value}")


def _emit(ctx: Context, memory: Memory) -> None:
    if ctx.json:
        ctx.print_json(memory.to_json())
    else:
        print_memory(ctx, memory)


def cmd_add(ctx: Context) -> int:
    args = ctx.args
    repo = ctx.store(writes=True).memories
    kwargs: dict[str, Any] = {
        "type": args.type,
        "entities": args.entity,
        "source": MemorySource.MANUAL,
        "now": ctx.now(),
    }
    if args.confidence is not None:
        kwargs["confidence"] = args.confidence
    text = _text(ctx, args.text)
    memory = repo.stage(text, **kwargs) if args.staged else repo.add(text, **kwargs)
    if ctx.json:
        ctx.print_json(memory.to_json())
    else:
        ctx.print(f"{'Staged' if args.staged else 'Added'} {memory.id}")
    return 0


def cmd_list(ctx: Context) -> int:
    args = ctx.args
    if args.limit is not None and args.limit < 0:
        raise InvalidInputError("--limit must be zero or more.")
    memories = ctx.store().memories.list(
        status=args.status, type=args.type, text=args.search, limit=args.limit
    )
    for memory in memories:
        if ctx.json:
            ctx.print_json(memory.to_json())
        else:
            print_memory_line(ctx, memory)
    if not ctx.json and not memories:
        ctx.err.write("No memories match.\n")
    return 0


def cmd_show(ctx: Context) -> int:
    _emit(ctx, ctx.store().memories.get(ctx.args.id))
    return 0


def _each(ctx: Context, verb: str, action: Callable[[str], Memory]) -> int:
    failed = 0
    for memory_id in ctx.args.ids:
        try:
            memory = action(memory_id)
        except TimothyError as exc:
            ctx.fail(str(exc))
            failed += 1
            continue
        if ctx.json:
            ctx.print_json(memory.to_json())
        else:
            ctx.print(f"{verb} {memory.id}")
    return 1 if failed else 0


def cmd_confirm(ctx: Context) -> int:
    repo, now = ctx.store(writes=True).memories, ctx.now()
    return _each(ctx, "Confirmed", lambda i: repo.confirm(i, now=now))


def cmd_reject(ctx: Context) -> int:
    repo, now = ctx.store(writes=True).memories, ctx.now()
    return _each(ctx, "Rejected", lambda i: repo.reject(i, now=now))


def cmd_archive(ctx: Context) -> int:
    repo, now = ctx.store(writes=True).memories, ctx.now()
    return _each(ctx, "Archived", lambda i: repo.archive(i, now=now))


def cmd_restore(ctx: Context) -> int:
    repo, now = ctx.store().memories, ctx.now()
    return _each(ctx, "Restored", lambda i: repo.restore(i, now=now))


def _count(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def forget_summary(report: ForgetReport) -> str:
    """What went, in one plain sentence, and that older backups may still hold it."""
    line = f"Forgot {_count(report.count, 'memory', 'memories')} for good"
    if report.chains:
        line += f" ({_count(report.chains, 'version chain', 'version chains')})"
    erased = report.erased
    redacted = []
    if erased.turns_redacted:
        redacted.append(
            _count(erased.turns_redacted, "past turn's memory block", "past turns' memory blocks")
        )
    if erased.tool_messages_redacted:
        redacted.append(
            _count(erased.tool_messages_redacted, "remember tool message", "remember tool messages")
        )
    if LAST_REPORT_KEY in erased.meta_redacted:
        redacted.append("the last consolidation report")
    if redacted:
        line += "; " + ", ".join(redacted) + " redacted"
    return line + ". Older backups may still hold this text."


def purge_summary(report: PurgeReport, count: int = 1) -> str:
    """What purging `count` memories did to the backups, in plain sentences."""
    it = "it" if count == 1 else "them"
    if not report.purged and not report.failed:
        return f"No backup holds {it}."
    line = (
        f"Removed {it} from {_count(len(report.purged), 'backup', 'backups')}"
        if report.purged
        else f"Removed {it} from no backup"
    )
    if report.unchanged:
        line += f" ({_count(report.unchanged, 'other backup', 'other backups')} did not hold it)"
    line += "."
    for path, reason in report.failed:
        line += f" {path} could not be purged and still holds {it}: {reason}."
    return line


def _print_purge(ctx: Context, report: PurgeReport, count: int) -> int:
    """Say what purging did; 1 (the exit status) when a backup still holds the text."""
    if not ctx.json:
        ctx.print(purge_summary(report, count))
    if not report.failed:
        return 0
    ctx.fail(
        f"{_count(len(report.failed), 'backup still holds', 'backups still hold')} the text; "
        "delete what you do not need."
    )
    return 1


def cmd_forget(ctx: Context) -> int:
    store = ctx.store()
    if ctx.args.purge_backups and not isinstance(store, Store):
        # said before anything is forgotten: the owner asked for both or neither
        raise InvalidInputError(server_backups_message(store.location))
    report = forget(store, ctx.args.ids, chain=ctx.args.chain)
    purged = (
        purge_backups(store, report.forgotten, chain=ctx.args.chain)
        if ctx.args.purge_backups
        else None
    )
    if ctx.json:
        found = report.to_json()
        if purged is not None:
            found["backups"] = purged.to_json()
        ctx.print_json(found)
    else:
        summary = forget_summary(report)
        if purged is not None:
            summary = summary.removesuffix(" Older backups may still hold this text.")
        ctx.print(summary)
    status = _print_purge(ctx, purged, report.count) if purged is not None else 0
    if not report.compacted:
        ctx.fail(
            "the database file could not be rebuilt afterwards (another program may have it "
            "open); freed space in it may still hold the text until the next forget."
        )
    return status


def cmd_purge_backups(ctx: Context) -> int:
    url = chosen_location(ctx.store_override, load_settings().store)
    if url is not None:
        from timothy.store.postgres.database import safe_location  # psycopg: slow

        raise InvalidInputError(server_backups_message(safe_location(url)))
    report = purge_backups(paths.database_path(ctx.data_dir), ctx.args.ids, chain=ctx.args.chain)
    if ctx.json:
        ctx.print_json(report.to_json())
    return _print_purge(ctx, report, len(set(ctx.args.ids)))


def cmd_edit(ctx: Context) -> int:
    args = ctx.args
    memory = ctx.store(writes=True).memories.supersede(
        args.id, _text(ctx, args.text), type=args.type, entities=args.entity, now=ctx.now()
    )
    _emit(ctx, memory)
    return 0


def cmd_chain(ctx: Context) -> int:
    chain = ctx.store().memories.chain(ctx.args.id)
    for memory in chain:
        if ctx.json:
            ctx.print_json(memory.to_json())
        else:
            print_memory_line(ctx, memory)
    return 0


def cmd_fading(ctx: Context) -> int:
    found = fading(ctx.store().memories, load_settings().recall, ctx.now())
    for item in found:
        if ctx.json:
            ctx.print_json(item.to_json())
        else:
            memory = item.memory
            ctx.print(
                f"{memory.id}  {memory.type.value:<10} "
                f"{item.days_unconfirmed:>6.0f} days  {_one_line(memory.content, 60)}"
            )
    if not ctx.json:
        if found:
            ctx.err.write(
                f"{len(found)} fading; `timothy memories confirm ID` keeps one recallable.\n"
            )
        else:
            ctx.err.write("No fact is fading.\n")
    return 0


def cmd_export(ctx: Context) -> int:
    store = ctx.store()
    target = ctx.args.file
    if not target or target == "-":
        export_memories(store, ctx.out)
        return 0
    path = Path(target).expanduser()
    count = export_to_file(store, path)
    ctx.err.write(f"Exported {count} memories to {path}\n")
    return 0


def cmd_import(ctx: Context) -> int:
    source = ctx.args.file
    if source == "-":
        count = import_memories(ctx.store(writes=True), sys.stdin, now=ctx.now())
    else:
        count = import_from_file(ctx.store(writes=True), Path(source), now=ctx.now())
    ctx.err.write(f"Imported {count} memories\n")
    return 0
