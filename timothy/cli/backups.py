"""`timothy backup [FILE]` and `timothy restore FILE`: copies of the store the owner can restore."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from timothy.cli.context import Context, add_json, add_now
from timothy.errors import InvalidInputError
from timothy.memory.forget import server_backups_message
from timothy.settings import load_settings
from timothy.store import Store, backups
from timothy.store.backup_folder import BackupReason, backup_name
from timothy.store.location import chosen_location


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "backup",
        parents=[common],
        help="back the memory database up now (verified); --list shows the backups",
        description="Copy the memory database, consistently even while the app runs, and "
        "check the copy with SQLite's integrity_check. With no FILE the copy goes to the "
        "data folder's backups/ (where the app keeps 7 daily and 4 weekly ones).",
    )
    p.add_argument("file", nargs="?", help="where to write the backup (a new file or a folder)")
    p.add_argument("--list", action="store_true", help="list the backups in backups/ instead")
    add_json(p)
    add_now(p)
    p.set_defaults(handler=cmd_backup)

    p = sub.add_parser(
        "restore",
        parents=[common],
        help="replace the memory database with a backup (the current file is kept aside)",
        description="Check FILE (a Timothy database, not damaged, not from a newer Timothy), "
        "then put it in place of the memory database. The file it replaces is kept in the "
        "data folder as timothy.db.before-restore-TIME. Close Timothy first.",
    )
    p.add_argument("file", help="the backup to restore")
    add_json(p)
    add_now(p)
    p.set_defaults(handler=cmd_restore)


def _list(ctx: Context) -> int:
    found = backups.list_backups(ctx.data_dir)
    for backup in found:
        if ctx.json:
            ctx.print_json(
                {
                    "path": str(backup.path),
                    "made_at": backup.made_at.isoformat(),
                    "reason": backup.reason.value,
                    "size": backup.size,
                    "memories": backup.memories,
                    "active": backup.active,
                }
            )
        else:
            holds = "unreadable" if backup.memories is None else f"{backup.memories} memories"
            ctx.print(
                f"{backup.made_at:%Y-%m-%d %H:%M} UTC  {backup.reason.value:<9}  "
                f"{holds:>15}  {backup.path}"
            )
    if not ctx.json and not found:
        ctx.err.write(f"No backups in {ctx.data_dir / 'backups'} yet.\n")
    return 0


def cmd_backup(ctx: Context) -> int:
    if ctx.args.list:
        return _list(ctx)
    now = ctx.now()
    target: Path | None = None
    if ctx.args.file:
        target = Path(ctx.args.file).expanduser()
        if target.is_dir():
            target = target / backup_name(now, BackupReason.MANUAL)
    store = ctx.store(writes=True)  # a damaged store is not copied: its copy would be too
    if not isinstance(store, Store):
        raise InvalidInputError(
            f"The memory is on a server ({store.location}); its backups are the server's "
            "(pg_dump, or `timothy store copy --to` a file store)."
        )
    made = backups.make_backup(store, target, now=now)
    if ctx.json:
        ctx.print_json({"path": str(made), "memories": store.memories.count()})
    else:
        ctx.print(f"Backed up {store.memories.count()} memories to {made} (integrity checked).")
    return 0


def cmd_restore(ctx: Context) -> int:
    url = chosen_location(ctx.store_override, load_settings().store)
    if url is not None:  # the data folder's file is not the memory in use
        from timothy.store.postgres.database import safe_location  # psycopg: slow

        raise InvalidInputError(server_backups_message(safe_location(url)))
    result = backups.restore(ctx.data_dir, Path(ctx.args.file), now=ctx.now())
    if ctx.json:
        ctx.print_json(
            {
                "restored_from": str(result.restored_from),
                "database": str(result.database),
                "kept_aside": None if result.kept_aside is None else str(result.kept_aside),
                "memories": result.memories,
            }
        )
        return 0
    ctx.print(f"Restored {result.memories} memories from {result.restored_from}.")
    if result.kept_aside is not None:
        ctx.print(f"The file it replaced is kept at {result.kept_aside}.")
    return 0
