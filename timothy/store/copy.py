"""Copying a whole store to another engine (`timothy store copy --to URL` / `--from URL`).

Everything goes across as it is: memories with their ids, statuses, chains, timestamps,
confidences and entities; every vector of every embedding model (and which model is active);
conversations with every message and what each turn recalled; the meta values (the last
consolidation, its report). The source is only read.

A copy is resumable: what the target already holds (a memory or a conversation with the same
id) is skipped, vectors are written again (the same numbers), so a copy that stopped half way
(a lost connection, a closed laptop) is finished by running it again. Memories go across in
batches of `BATCH`, each batch one transaction with its vectors, oldest first, so chains
point at memories that are already there whenever a batch lands.

A conversation the target holds already gets the messages it lacks, and loses from the
messages it holds the words of memories forgotten for good in the source since (as the
source's copies of them read): a forget removes the words everywhere, even from a file the
server was copied back into. Memories themselves are never written over.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from timothy.errors import StoreError
from timothy.store.engine import StoreEngine
from timothy.store.records import Memory, MemoryStatus

log = logging.getLogger(__name__)

BATCH = 500
# A copy of at least this many memories and conversations ends by compacting the target's
# text indexes (a copy writes them in batches, each leaving pieces of its own).
BULK_COPY = 500

# (what, done, total): "memories", "vectors", "conversations".
Progress = Callable[[str, int, int], None]


@dataclass(slots=True)
class CopyReport:
    memories_copied: int = 0
    memories_already_there: int = 0
    # Of those, how many the target holds in another state (edited, confirmed, archived or
    # forgotten in one store since an earlier copy): left as the target has them.
    memories_differing: int = 0
    # Memories the target holds that the source does not: another machine's (on a server),
    # or, in a file copied onto a server earlier, ones forgotten there since.
    memories_only_in_target: int = 0
    vectors_copied: int = 0
    conversations_copied: int = 0
    conversations_already_there: int = 0
    conversations_caught_up: int = 0  # already there, given the messages they lacked
    # Messages the target held already, rewritten without the words of memories forgotten
    # for good in the source since (as the source's copies of them were).
    messages_redacted: int = 0
    meta_copied: list[str] = field(default_factory=list)
    stopped: bool = False  # asked to stop before the end: run it again to finish

    def to_json(self) -> dict[str, object]:
        return {
            "memories_copied": self.memories_copied,
            "memories_already_there": self.memories_already_there,
            "memories_differing": self.memories_differing,
            "memories_only_in_target": self.memories_only_in_target,
            "vectors_copied": self.vectors_copied,
            "conversations_copied": self.conversations_copied,
            "conversations_already_there": self.conversations_already_there,
            "conversations_caught_up": self.conversations_caught_up,
            "messages_redacted": self.messages_redacted,
            "meta_copied": list(self.meta_copied),
            "stopped": self.stopped,
        }


def _quiet(what: str, done: int, total: int) -> None:
    pass


def _never() -> bool:
    return False


class _Stopped(Exception):
    """Asked to stop between two batches."""


def copy_store(
    source: StoreEngine,
    target: StoreEngine,
    *,
    progress: Progress | None = None,
    stop: Callable[[], bool] | None = None,
) -> CopyReport:
    """Copy everything in `source` that `target` lacks (see the module's notes). `stop` is
    asked between batches: True ends the copy there (`report.stopped`; every batch written
    is whole, and running the copy again finishes it)."""
    if source.location == target.location:
        raise StoreError(f"{source.location} cannot be copied onto itself.")
    asked = stop or _never

    def tell(what: str, done: int, total: int) -> None:
        (progress or _quiet)(what, done, total)
        if asked():
            raise _Stopped

    report = CopyReport()
    try:
        _copy_memories(source, target, report, tell)
        _copy_vectors(source, target, report, tell)
        _copy_conversations(source, target, report, tell)
    except _Stopped:
        report.stopped = True
        log.info("copying %s to %s stopped: %s", source.location, target.location, report)
        return report
    for key, value in source.db.meta_items():
        if target.db.get_meta(key) != value:
            target.db.set_meta(key, value)
            report.meta_copied.append(key)
    if report.memories_copied + report.conversations_copied >= BULK_COPY:
        target.db.compact_text_indexes()
    log.info("copied %s to %s: %s", source.location, target.location, report.to_json())
    return report


def _copy_memories(
    source: StoreEngine, target: StoreEngine, report: CopyReport, tell: Progress
) -> None:
    total = source.memories.count()
    done = 0
    offset = 0
    seen: set[str] = set()
    tell("memories", 0, total)
    while True:
        batch = source.memories.list(limit=BATCH, offset=offset, oldest_first=True)
        if not batch:
            break
        offset += len(batch)
        seen.update(m.id for m in batch)
        there = target.memories.get_many(m.id for m in batch)
        missing = [m for m in batch if m.id not in there]
        if missing:
            with target.db.write() as conn:
                for memory in missing:
                    target.memories.insert(conn, memory)
        report.memories_copied += len(missing)
        report.memories_already_there += len(batch) - len(missing)
        report.memories_differing += sum(
            1 for m in batch if m.id in there and not _same_fact(there[m.id], m)
        )
        done += len(batch)
        tell("memories", done, total)
    report.memories_only_in_target = sum(1 for memory_id in _ids(target) if memory_id not in seen)


def _ids(store: StoreEngine) -> Iterator[str]:
    """Every memory id `store` holds, a batch at a time."""
    offset = 0
    while batch := store.memories.list(limit=BATCH, offset=offset, oldest_first=True):
        offset += len(batch)
        yield from (m.id for m in batch)


def _same_fact(kept: Memory, copied: Memory) -> bool:
    """Whether a memory the target holds already says what the source's says, in the same
    state (its retrieval stamp and decayed confidence aside: they move on every machine)."""
    return (kept.content, kept.type, kept.status, kept.supersedes, kept.superseded_by) == (
        copied.content,
        copied.type,
        copied.status,
        copied.supersedes,
        copied.superseded_by,
    ) and sorted(kept.entities) == sorted(copied.entities)


def _copy_vectors(
    source: StoreEngine, target: StoreEngine, report: CopyReport, tell: Progress
) -> None:
    models = source.vectors.models()
    total = sum(source.vectors.count(model) for model in models)
    done = 0
    tell("vectors", 0, total)
    for model in models:
        target_model = target.vectors.ensure_model(model.name, model.dimension)
        for status in MemoryStatus:
            ids, matrix = source.vectors.matrix(model, status=status.value)
            for start in range(0, len(ids), BATCH):
                chunk = ids[start : start + BATCH]
                report.vectors_copied += target.vectors.put_many(
                    target_model, zip(chunk, matrix[start : start + BATCH], strict=True)
                )
                done += len(chunk)
                tell("vectors", done, total)


def _copy_conversations(
    source: StoreEngine, target: StoreEngine, report: CopyReport, tell: Progress
) -> None:
    sessions = source.sessions.list(include_deleted=True)
    sessions.reverse()  # oldest activity first, so the target lists them in the same order
    tell("conversations", 0, len(sessions))
    try:
        for done, session in enumerate(sessions, start=1):
            messages = source.sessions.messages(session.id)
            if target.sessions.import_conversation(session, messages):
                report.conversations_copied += 1
                tell("conversations", done, len(sessions))
                continue
            # Copied before: what forgets for good took out of it in the source since goes
            # here too (a forget removes the words everywhere)...
            report.messages_redacted += target.sessions.take_forgets(
                session.id, messages, settle=False
            )
            if target.sessions.import_missing_messages(session, messages):
                # ...and when it went on in the source since, the rest of it.
                report.conversations_caught_up += 1
            else:
                report.conversations_already_there += 1
            tell("conversations", done, len(sessions))
    finally:
        if report.messages_redacted:
            # Once for the whole copy (a stopped one too): the file rebuilt without the old
            # words, each machine's mirror told.
            target.sessions.settle_forgets()
