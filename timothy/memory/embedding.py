"""Keeping memories' vectors current: a background queue for new facts, a backfill for the rest.

A memory is embedded when it is added, promoted or superseded, by a worker thread, so the
write never waits on the network. Whatever the queue misses (a failure, the app closed,
memories written by the CLI) the backfill catches: every active memory without a vector for
the configured model. Staged proposals wait: they are embedded when the owner confirms them
(recall and consolidation only ever compare active memories). The vector leg keeps searching
the previous model's vectors until the new model covers every memory; only then does it
switch (`activate_if_complete`).
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from timothy.errors import ErrorKind, NotFoundError, ProviderError, StoreError
from timothy.providers.base import CancelToken, EmbeddingProvider
from timothy.store.engine import StoreEngine, written_elsewhere
from timothy.store.records import Memory, MemoryStatus
from timothy.store.vectors import EmbeddingModel

log = logging.getLogger(__name__)

EMBED_EVENTS = frozenset({"added", "promoted", "superseded"})
BACKFILL_BATCH = 32
QUEUE_BATCH = 16
# Failures that will not go away by trying the next batch: stop the backfill at once.
_FATAL = frozenset(
    {
        ErrorKind.AUTH,
        ErrorKind.ACCESS_DENIED,
        ErrorKind.MODEL_NOT_FOUND,
        ErrorKind.NOT_CONFIGURED,
        ErrorKind.QUOTA,
        ErrorKind.UNREACHABLE,
        ErrorKind.THROTTLED,
        ErrorKind.CANCELLED,
    }
)

Progress = Callable[[int, int], None]  # (memories done, memories to do)


def embedding_text(memory: Memory) -> str:
    """What is embedded for a memory: its entities, then its text ("Zoë: likes tea").

    Questions name people and things ("what does Zoë drink?") that a fact's own words may
    leave out; with the names in front the vector carries who the fact is about. (Measured
    on LoCoMo when queries were embedded whole: fused recall@10 +1.5, recall@50 +4. Recall
    now embeds a query without the stored names it names (recall.vector_text), and the
    names in front matter less there: recall@5/10/25/50 +0.8/-0.2/+0.8/-0.8. They stay: a
    vector that carries who a fact is about keeps "Zoë likes tea" apart from "Max likes tea"
    wherever memories' vectors are compared with each other, as near-duplicates are.)
    """
    if not memory.entities:
        return memory.content
    return f"{', '.join(memory.entities)}: {memory.content}"


def model_for(store: StoreEngine, embedder: EmbeddingProvider) -> EmbeddingModel:
    """The store's record (and vector table) for the embedder's model, made on first use."""
    return store.vectors.ensure_model(embedder.model_id, embedder.dimension)


def store_vectors(
    store: StoreEngine,
    model: EmbeddingModel,
    ids: Sequence[str],
    vectors: Sequence[Sequence[float]],
) -> int:
    """Write vectors; memories that vanished meanwhile are skipped, not fatal."""
    pairs = list(zip(ids, vectors, strict=True))
    try:
        return store.vectors.put_many(model, pairs)
    except NotFoundError:
        written = 0
        for memory_id, vector in pairs:
            try:
                store.vectors.put(memory_id, model, vector)
                written += 1
            except NotFoundError:
                log.info("memory %s vanished before its vector was stored", memory_id)
        return written


def activate_if_complete(store: StoreEngine, model: EmbeddingModel) -> bool:
    """Point the vector leg at `model` once every active memory has its vector
    (or when no model was active at all: some vectors beat none). True if it switched."""
    active = store.vectors.active_model()
    if active is not None and active.name == model.name:
        return False
    if active is not None and store.vectors.missing(model):
        return False
    if active is None and store.vectors.count(model) == 0 and store.vectors.missing(model):
        return False
    store.vectors.set_active_model(model.name)
    log.info(
        "the vector leg now uses %s (was %s)", model.name, active.name if active else "nothing"
    )
    return True


@dataclass(frozen=True, slots=True)
class BackfillResult:
    model: str
    total: int  # memories that lacked a vector when the backfill began
    embedded: int
    failed: int  # memories left without a vector (a failure, or a stop before their turn)
    switched: bool  # the vector leg moved to this model
    complete: bool  # every active memory now has a vector for this model
    error: ProviderError | None = None  # the last failure, when there was one

    @property
    def active(self) -> bool:
        return self.complete or self.switched


def backfill(
    store: StoreEngine,
    embedder: EmbeddingProvider,
    *,
    progress: Progress | None = None,
    batch_size: int = BACKFILL_BATCH,
    cancel: CancelToken | None = None,
) -> BackfillResult:
    """Embed every active memory lacking a vector for the embedder's model, then
    switch the vector leg to that model if nothing is missing. Raises ProviderError only when
    the model cannot be set up at all (e.g. its dimension cannot be learned)."""
    model = model_for(store, embedder)
    missing = store.vectors.missing(model)
    total = len(missing)
    embedded = 0
    error: ProviderError | None = None
    if progress is not None:
        progress(0, total)
    for start in range(0, total, batch_size):
        if cancel is not None and cancel.cancelled:
            break
        ids = missing[start : start + batch_size]
        memories = store.memories.get_many(ids)
        batch = [memories[i] for i in ids if i in memories]
        try:
            vectors = embedder.embed([embedding_text(m) for m in batch])
            embedded += store_vectors(store, model, [m.id for m in batch], vectors)
        except ProviderError as exc:
            error = exc
            log.warning("backfill of %s: %d memories not embedded: %s", model.name, len(batch), exc)
            if exc.kind in _FATAL:
                break
        if progress is not None:
            progress(min(start + batch_size, total), total)
    switched = activate_if_complete(store, model)
    complete = not store.vectors.missing(model)
    return BackfillResult(model.name, total, embedded, total - embedded, switched, complete, error)


class EmbeddingQueue:
    """Embeds memories on a worker thread as the repository reports them added, promoted or
    superseded. Failures are logged and left for the next backfill."""

    def __init__(
        self, store: StoreEngine, embedder: EmbeddingProvider, *, batch_size: int = QUEUE_BATCH
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.batch_size = batch_size
        self._queue: queue.Queue[Memory | None] = queue.Queue()
        self._idle = threading.Condition()
        self._busy = 0  # memories taken off the queue and not yet written
        self._thread: threading.Thread | None = None
        self.embedded = 0
        self.failed = 0

    def start(self) -> EmbeddingQueue:
        if self._thread is None:
            self.store.memories.listeners.append(self._on_memory)
            self._thread = threading.Thread(
                target=self._work, name="timothy-embedding", daemon=True
            )
            self._thread.start()
        return self

    def stop(self, timeout: float = 10.0) -> None:
        """Stop listening, finish what is queued (within `timeout`), end the worker."""
        if self._thread is None:
            return
        with contextlib.suppress(ValueError):
            self.store.memories.listeners.remove(self._on_memory)
        self._queue.put(None)
        self._thread.join(timeout)
        self._thread = None

    def __enter__(self) -> EmbeddingQueue:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def submit(self, memory: Memory) -> None:
        with self._idle:
            self._busy += 1
        self._queue.put(memory)

    def wait_idle(self, timeout: float = 10.0) -> bool:
        """True once everything submitted so far has been embedded (or has failed)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._busy == 0, timeout)

    def _on_memory(self, event: str, memory: Memory) -> None:
        if written_elsewhere():
            # Another machine wrote it (a shared server) and embeds it there; this machine
            # reads the vector (its vector leg follows the server's changes). Should that
            # machine fail, the backfill covers the memory as any other without a vector.
            return
        if event in EMBED_EVENTS or (
            # An archived memory restored to active may never have had a vector.
            event == "restored" and memory.status is MemoryStatus.ACTIVE
        ):
            self.submit(memory)

    def _work(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            stopping = False
            while len(batch) < self.batch_size:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is None:
                    stopping = True
                    break
                batch.append(item)
            try:
                self._embed(batch)
            finally:
                with self._idle:
                    self._busy -= len(batch)
                    self._idle.notify_all()
            if stopping:
                return

    def _embed(self, batch: list[Memory]) -> None:
        try:
            model = model_for(self.store, self.embedder)
            todo = [m for m in batch if self.store.vectors.get(m.id, model) is None]
            if not todo:
                return
            vectors = self.embedder.embed([embedding_text(m) for m in todo])
            self.embedded += store_vectors(self.store, model, [m.id for m in todo], vectors)
            activate_if_complete(self.store, model)
        except (ProviderError, StoreError) as exc:
            self.failed += len(batch)
            log.warning(
                "embedding %d new memories failed (backfill will retry): %s", len(batch), exc
            )
        except Exception:  # the worker must survive anything, or nothing is embedded again
            self.failed += len(batch)
            log.exception("embedding %d new memories failed unexpectedly", len(batch))
