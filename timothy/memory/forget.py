"""Forget for good, with the house's redaction: how each package's copies of a memory's text
are found and replaced (the block line as `render.py` renders it, the `remember` tool's
result and call, the consolidation report's excerpts). The app and the CLI call `forget`,
then, when the owner asks, `purge_backups` for the copies the backups still hold."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from timothy.errors import InvalidInputError
from timothy.memory.consolidation import LAST_REPORT_KEY, redact_report
from timothy.memory.remember import redact_remember_call, redact_remember_result
from timothy.retrieval.render import render_item
from timothy.store import Store, backups
from timothy.store.backup_folder import backups_dir
from timothy.store.engine import StoreEngine
from timothy.store.forget import FORGOTTEN, ForgetReport, Redaction
from timothy.store.records import Memory


def block_line(memory: Memory) -> tuple[str, str]:
    """The memory's line exactly as recall rendered it into a block, and the line that
    takes its place: the block keeps its shape, the line says "[forgotten]"."""
    return render_item(memory.type, memory.content), render_item(memory.type, FORGOTTEN)


REDACTION = Redaction(
    block_line=block_line,
    tool_result=redact_remember_result,
    tool_call=redact_remember_call,
    meta={LAST_REPORT_KEY: redact_report},
)


def forget(store: StoreEngine, memory_ids: Iterable[str], *, chain: bool = False) -> ForgetReport:
    """Remove memories for good (with `chain`, each one's whole version chain) and every copy
    of their text in the store; see `timothy.store.forget`. Older backups still hold it."""
    return store.memories.forget(memory_ids, chain=chain, redaction=REDACTION)


def server_backups_message(where: str) -> str:
    """What to say when a store on a server (`where`, without its password) is asked about
    its backups: they are the server's (the app keeps none of a server store)."""
    return (
        f"The memory is on a server ({where}); its backups are the server's job "
        "(pg_dump, or `timothy store copy --to` a file store), so Timothy keeps none to "
        "restore or purge."
    )


def backups_holding(store: StoreEngine, memory_ids: Iterable[str]) -> list[Path]:
    """The store's backups (its data folder's `backups/`) that hold any of these memories;
    none for a store on a server (its backups are the server's)."""
    if not isinstance(store, Store):
        return []
    return backups.backups_holding(backups_dir(store.path), memory_ids)


def purge_backups(
    store: StoreEngine | Path, memory_ids: Iterable[str], *, chain: bool = False
) -> backups.PurgeReport:
    """Forget these memories in every backup in the store's `backups/` folder too (`store`:
    the store, or its database file), as `forget` does in the store: see
    `timothy.store.backups.purge`. Ids a backup does not hold are passed over. A store on a
    server has no such backups: InvalidInputError says so."""
    if isinstance(store, Path):
        database = store
    elif isinstance(store, Store):
        database = store.path
    else:
        raise InvalidInputError(server_backups_message(store.location))
    return backups.purge(backups_dir(database), memory_ids, chain=chain, redaction=REDACTION)
