"""Forget for good, with the house's redaction: how each package's copies of a memory's text
are found and replaced (the block line as `render.py` renders it, the `remember` tool's
result and call, the consolidation report's excerpts). The app and the CLI call `forget`."""

from __future__ import annotations

from collections.abc import Iterable

from timothy.memory.consolidation import LAST_REPORT_KEY, redact_report
from timothy.memory.remember import redact_remember_call, redact_remember_result
from timothy.retrieval.render import render_item
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
