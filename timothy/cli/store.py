"""`timothy store ...`: where the memory lives, and moving it between engines.

timothy store info                                   which store this machine uses
timothy store copy --to postgresql://me@nas/timothy  the data folder's file -> a server
timothy store copy --from postgresql://me@nas/timothy --to ~/timothy-copy
timothy store password postgresql://me@nas/timothy   keep the server's password (keyring)
"""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path
from typing import Any

from timothy import secrets
from timothy.cli.context import Context, add_json
from timothy.errors import InvalidInputError
from timothy.store import DamageCheck, Store
from timothy.store.copy import copy_store
from timothy.store.engine import StoreEngine
from timothy.store.location import is_server_url, open_store, password_in, store_password_key


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "store",
        parents=[common],
        help="where the memory lives: info, copy to or from a PostgreSQL server, password",
        description="The memory lives in the data folder's SQLite file, or on a PostgreSQL "
        "server (with pgvector) that several machines share: --store URL, "
        "TIMOTHY_STORE_URL, or the settings' `store` section choose it.",
    )
    actions = p.add_subparsers(dest="action", metavar="ACTION")

    q = actions.add_parser("info", parents=[common], help="which store this machine uses")
    add_json(q)
    q.set_defaults(handler=cmd_info)

    q = actions.add_parser(
        "copy",
        parents=[common],
        help="copy every memory, vector and conversation to (or from) another store",
        description="Copy everything the source holds that the target lacks: ids, chains, "
        "statuses, timestamps, entities, vectors, conversations. The source is only read. "
        "Run it again to finish a copy that stopped. With --to only, the source is this "
        "machine's store; with --from only, the target is. A target or source that is not "
        "a postgresql:// URL is a data folder (its SQLite file).",
    )
    q.add_argument("--to", metavar="URL|FOLDER", help="the store to copy into")
    q.add_argument("--from", dest="source", metavar="URL|FOLDER", help="the store to copy from")
    q.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_json(q)
    q.set_defaults(handler=cmd_copy)

    q = actions.add_parser(
        "password",
        parents=[common],
        help="keep a server's password in the OS keyring (read from stdin or a prompt)",
    )
    q.add_argument("url", help="the server's address, postgresql://user@host:port/db")
    q.add_argument("--forget", action="store_true", help="remove the stored password")
    q.set_defaults(handler=cmd_password)


def _open(where: str) -> StoreEngine:
    if is_server_url(where):
        return open_store(where, follow_changes=False)
    return Store.open(Path(where).expanduser(), check=DamageCheck.NOW)


def cmd_info(ctx: Context) -> int:
    store = ctx.store()
    engine = "sqlite" if isinstance(store, Store) else "postgres"
    info = {
        "engine": engine,
        "location": store.location,
        "schema": store.db.schema_version(),
        "memories": store.memories.count(),
    }
    if ctx.json:
        ctx.print_json(info)
    else:
        ctx.print(
            f"{engine}: {info['location']} (schema {info['schema']}, {info['memories']} memories)"
        )
    return 0


def cmd_copy(ctx: Context) -> int:
    to, source_at = ctx.args.to, ctx.args.source
    if not to and not source_at:
        raise InvalidInputError("Say where to copy: --to URL|FOLDER, --from URL|FOLDER, or both.")
    source = _open(source_at) if source_at else ctx.store()
    target = _open(to) if to else ctx.store()
    shown: dict[str, int] = {}

    def progress(what: str, done: int, total: int) -> None:
        if ctx.args.quiet or ctx.json:
            return
        # About twenty lines for a long copy, and always the last one.
        step = max(1, total // 20)
        if done == total or done - shown.get(what, -step) >= step:
            shown[what] = done
            ctx.err.write(f"{what}: {done}/{total}\n")
            ctx.err.flush()

    try:
        report = copy_store(source, target, progress=progress)
    finally:
        for store in (source, target):
            if store is not ctx._store:
                store.close()
    if ctx.json:
        ctx.print_json({"from": source.location, "to": target.location, **report.to_json()})
    else:
        ctx.print(
            f"Copied {report.memories_copied} memories ({report.memories_already_there} were "
            f"already there), {report.vectors_copied} vectors and "
            f"{report.conversations_copied} conversations from {source.location} to "
            f"{target.location}."
        )
        if report.conversations_caught_up:
            ctx.print(
                f"{report.conversations_caught_up} conversations copied before got the "
                "messages added since."
            )
        if report.messages_redacted:
            ctx.print(
                f"{report.messages_redacted} messages already there were redacted as in "
                f"{source.location} (memories forgotten for good there since)."
            )
        if report.memories_differing:
            ctx.print(
                f"{report.memories_differing} memories already there differ from the copy "
                "(edited, confirmed or archived since an earlier copy) and were left as "
                f"{target.location} has them."
            )
        if isinstance(target, Store) and report.memories_only_in_target:
            ctx.print(
                f"{report.memories_only_in_target} memories in {target.location} are not in "
                f"{source.location} (forgotten there, or never copied to it) and stay."
            )
    return 0


def cmd_password(ctx: Context) -> int:
    url = ctx.args.url
    if not is_server_url(url):
        raise InvalidInputError(f"{url!r} is not a postgresql:// address.")
    if password_in(url):
        raise InvalidInputError("Give the address without its password; it is asked for.")
    key = store_password_key(url)
    if ctx.args.forget:
        secrets.set_secret(key, None)
        ctx.print(f"Forgot the password for {key}.")
        return 0
    if sys.stdin.isatty():
        password = getpass.getpass(f"Password for {key}: ")
    else:
        password = sys.stdin.readline().rstrip("\n")
    if not password:
        raise InvalidInputError("No password given; nothing was stored.")
    secrets.set_secret(key, password)
    ctx.print(f"Stored the password for {key} in the system keyring.")
    return 0
