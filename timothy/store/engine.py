"""The store interface: what retrieval, chat, memory, the CLI and the app call on a store.

Two engines implement it: `timothy.store.Store` (one SQLite file: apsw, sqlite-vec, FTS5),
the embedded default, and `timothy.store.postgres.PostgresStore` (a PostgreSQL server with
pgvector), which several machines share. Nothing above `store/` needs to know which one
answers: the layers above annotate `StoreEngine` and its parts, and `open_store` builds the
engine a location names.

A transaction is opaque above the store: `db.write()` yields a handle that only the same
engine's `memories.insert` and `vectors.put_many` take, so an import or a benchmark can
group many writes into one transaction on either engine.
"""

from __future__ import annotations

import builtins
import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from timothy.lazy import lazy_module
from timothy.store.forget import ForgetReport, Redaction
from timothy.store.memories import ConfidenceDecay, MemoryListener, Neighbour, StaleMemory
from timothy.store.records import (
    Memory,
    MemorySource,
    MemoryStatus,
    MemoryType,
    Message,
    MessageRole,
    MessageStatus,
    RecallRecord,
    Session,
    StoredToolCall,
)
from timothy.store.search import MemorySearch
from timothy.store.vectors import EmbeddingModel, Vector

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    np = lazy_module("numpy")

_heard = threading.local()


@contextlib.contextmanager
def heard_from_another_machine() -> Iterator[None]:
    """While this block runs, the memory events this thread delivers to listeners tell of
    another machine's writes (a server store's change feed), not this machine's own."""
    _heard.elsewhere = True
    try:
        yield
    finally:
        _heard.elsewhere = False


def written_elsewhere() -> bool:
    """Whether the memory event being delivered on this thread was written by another
    machine: work its writer does (embedding the memory) is not done again here."""
    return bool(getattr(_heard, "elsewhere", False))


class MemoryRepo(Protocol):
    """The seed's lifecycle: stage, add, promote, reject, supersede, archive, and the reads
    and consolidation queries around it (`timothy.store.memories.MemoryRepository`)."""

    listeners: builtins.list[MemoryListener]

    def get(self, memory_id: str) -> Memory: ...
    def get_many(self, memory_ids: Iterable[str], *, keep: bool = True) -> dict[str, Memory]: ...
    def around(
        self, memory_ids: Iterable[str], width: int, known: Mapping[str, Memory] | None = None
    ) -> dict[str, builtins.list[Neighbour]]: ...
    def list(
        self,
        *,
        status: MemoryStatus | str | Iterable[MemoryStatus | str] | None = None,
        type: MemoryType | str | Iterable[MemoryType | str] | None = None,
        text: str | None = None,
        session_id: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        oldest_first: bool = False,
        match_any: bool = False,
        keep: bool = True,
    ) -> builtins.list[Memory]: ...
    def count(
        self, *, status: MemoryStatus | str | None = None, type: MemoryType | str | None = None
    ) -> int: ...
    def unconfirmed_since(
        self, cutoffs: Mapping[MemoryType, datetime], limit: int | None = None
    ) -> builtins.list[Memory]: ...
    def chain(self, memory_id: str) -> builtins.list[Memory]: ...
    def insert(self, conn: Any, memory: Memory) -> None: ...
    def stage(
        self,
        content: str,
        *,
        type: MemoryType | str = ...,
        entities: Iterable[str] = (),
        confidence: float = ...,
        source: MemorySource | str = ...,
        session_id: str | None = None,
        now: datetime | None = None,
    ) -> Memory: ...
    def add(
        self,
        content: str,
        *,
        type: MemoryType | str = ...,
        entities: Iterable[str] = (),
        confidence: float = ...,
        source: MemorySource | str = ...,
        session_id: str | None = None,
        now: datetime | None = None,
    ) -> Memory: ...
    def promote(self, memory_id: str, *, now: datetime | None = None) -> Memory: ...
    def reconfirm(self, memory_id: str, *, now: datetime | None = None) -> Memory: ...
    def confirm(self, memory_id: str, *, now: datetime | None = None) -> Memory: ...
    def reject(self, memory_id: str, *, now: datetime | None = None) -> Memory: ...
    def archive(self, memory_id: str, *, now: datetime | None = None) -> Memory: ...
    def restore(self, memory_id: str, *, now: datetime | None = None) -> Memory: ...
    def supersede(
        self,
        memory_id: str,
        content: str,
        *,
        entities: Iterable[str] | None = None,
        type: MemoryType | str | None = None,
        confidence: float | None = None,
        source: MemorySource | str = ...,
        now: datetime | None = None,
    ) -> Memory: ...
    def mark_retrieved(self, memory_ids: Iterable[str], *, now: datetime | None = None) -> None: ...
    def merge(
        self, member_ids: Sequence[str], content: str, *, now: datetime | None = None
    ) -> Memory: ...
    def unretrieved(self, type: MemoryType | str, since: datetime) -> builtins.list[Memory]: ...
    def archive_unretrieved(
        self, type: MemoryType | str, since: datetime, *, now: datetime | None = None
    ) -> builtins.list[Memory]: ...
    def unconfirmed(
        self, type: MemoryType | str, since: datetime
    ) -> builtins.list[StaleMemory]: ...
    def decay(
        self, changes: Iterable[ConfidenceDecay], *, now: datetime | None = None
    ) -> builtins.list[Memory]: ...
    def forget(
        self,
        memory_ids: Iterable[str],
        *,
        chain: bool = False,
        redaction: Redaction | None = None,
    ) -> ForgetReport: ...


class SessionRepo(Protocol):
    """Conversations and their messages, in branches (`timothy.store.sessions.SessionRepository`;
    a temporary chat's in-memory one from `timothy.store.scratch` is one too)."""

    def create(
        self,
        *,
        title: str = "",
        provider: str | None = None,
        model: str | None = None,
        now: datetime | None = None,
    ) -> Session: ...
    def get(self, session_id: str) -> Session: ...
    def list(
        self, *, search: str | None = None, include_deleted: bool = False, limit: int | None = None
    ) -> builtins.list[Session]: ...
    def set_title(self, session_id: str, title: str, *, source: str = "owner") -> Session: ...
    def set_model(self, session_id: str, provider: str | None, model: str | None) -> None: ...
    def set_instructions(self, session_id: str, instructions: str) -> Session: ...
    def delete(self, session_id: str, *, now: datetime | None = None) -> Session: ...
    def restore(self, session_id: str) -> Session: ...
    def erase(self, session_id: str) -> None: ...
    def purge_deleted(self, *, before: datetime) -> int: ...
    def add_message(
        self,
        session_id: str,
        role: MessageRole | str,
        content: str,
        *,
        status: MessageStatus | str = ...,
        tool_calls: Iterable[StoredToolCall] = (),
        tool_call_id: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        parent_id: str | None = ...,
        now: datetime | None = None,
    ) -> Message: ...
    def update_message(
        self,
        message_id: str,
        *,
        content: str = ...,
        status: MessageStatus | str = ...,
        error: str | None = ...,
        tool_calls: Iterable[StoredToolCall] = ...,
        input_tokens: int | None = ...,
        output_tokens: int | None = ...,
        cached_tokens: int | None = ...,
        memory_block: str | None = ...,
        recall: RecallRecord | None = ...,
        reply_ms: int | None = ...,
    ) -> Message: ...
    def message(self, message_id: str) -> Message: ...
    def messages(
        self, session_id: str, *, include_compacted: bool = True
    ) -> builtins.list[Message]: ...
    def branch(
        self, session_id: str, *, include_compacted: bool = True
    ) -> builtins.list[Message]: ...
    def set_active_leaf(self, session_id: str, message_id: str | None) -> None: ...
    def select_branch(self, session_id: str, message_id: str) -> str | None: ...
    def mark_compacted(self, message_ids: Iterable[str], summary_id: str) -> None: ...
    def delete_messages_from(self, message_id: str) -> int: ...
    def import_conversation(self, session: Session, messages: Sequence[Message]) -> bool: ...
    def import_missing_messages(self, session: Session, messages: Sequence[Message]) -> int: ...
    def take_forgets(
        self, session_id: str, messages: Sequence[Message], *, settle: bool = True
    ) -> int: ...
    def settle_forgets(self) -> None: ...


class VectorRepo(Protocol):
    """Vectors per embedding model (`timothy.store.vectors.VectorStore`)."""

    def models(self) -> list[EmbeddingModel]: ...
    def model(self, name: str) -> EmbeddingModel | None: ...
    def require_model(self, name: str) -> EmbeddingModel: ...
    def ensure_model(self, name: str, dimension: int) -> EmbeddingModel: ...
    def active_model(self) -> EmbeddingModel | None: ...
    def set_active_model(self, name: str | None) -> None: ...
    def put_many(
        self, model: EmbeddingModel, items: Iterable[tuple[str, Vector]], conn: Any = None
    ) -> int: ...
    def put(self, memory_id: str, model: EmbeddingModel, vector: Vector) -> None: ...
    def get(self, memory_id: str, model: EmbeddingModel) -> npt.NDArray[np.float32] | None: ...
    def vectors_of(
        self, memory_ids: Sequence[str]
    ) -> dict[str, tuple[str, npt.NDArray[np.float32]]]: ...
    def count(self, model: EmbeddingModel) -> int: ...
    def missing(
        self, model: EmbeddingModel, statuses: Sequence[str] = ("active",)
    ) -> list[str]: ...
    def nearest(
        self, model: EmbeddingModel, query: Vector, k: int, *, status: str = "active"
    ) -> list[tuple[str, float]]: ...
    def matrix(
        self, model: EmbeddingModel, *, status: str = "active", read_shadow_tables: bool = True
    ) -> tuple[list[str], npt.NDArray[np.float32]]: ...


class MetaDatabase(Protocol):
    """Transactions, the key-value meta table and the schema version."""

    def write(self) -> AbstractContextManager[Any]: ...
    def get_meta(self, key: str) -> str | None: ...
    def set_meta(self, key: str, value: str | None) -> None: ...
    def meta_items(self) -> list[tuple[str, str]]: ...
    def schema_version(self) -> int: ...
    def compact_text_indexes(self) -> None:
        """After a bulk write (an import, a copy): each text index in as few pieces as it
        can be, so that a search looks each of its terms up once."""
        ...


class StoreEngine(Protocol):
    """One memory store, whichever engine holds it."""

    @property
    def memories(self) -> MemoryRepo: ...
    @property
    def sessions(self) -> SessionRepo: ...
    @property
    def vectors(self) -> VectorRepo: ...
    @property
    def search(self) -> MemorySearch: ...
    @property
    def db(self) -> MetaDatabase: ...
    @property
    def location(self) -> str:
        """Where the store is, in words for the owner (a file path, or a server URL
        without its password)."""
        ...

    @property
    def data_dir(self) -> Path:
        """The data folder this machine keeps the store's files in: the SQLite file's, or a
        server's outbox and conversation mirror (`--data-dir`'s when it was given)."""
        ...

    @property
    def damaged(self) -> bool: ...
    @property
    def reachable(self) -> bool:
        """Whether the store answers (a server can be out of reach; a file always answers)."""
        ...

    @property
    def refused(self) -> str | None:
        """Why the store's server turned this machine away (a wrong or missing password, an
        unknown user or database), when that is why it is out of reach; None otherwise."""
        ...

    def on_reachability(self, listener: Callable[[bool], None]) -> None:
        """Call `listener(reachable)`, on any thread, each time the store goes or returns."""
        ...

    def retry_now(self) -> None:
        """Try an unreachable server at once (the owner changed the settings or asked), with
        its password read again; returns at once (the answer comes to `on_reachability`)."""
        ...

    @property
    def kept_here(self) -> int:
        """How many changes this machine still keeps for its server after the last hand-over
        (new memories, conversation changes): more than 0 when the server refused some; they
        are offered again at each reconnection. Always 0 for a file."""
        ...

    def exclusive(self, name: str) -> AbstractContextManager[bool]:
        """Whether this machine may do the job `name` now: True inside the block for one
        machine at a time among all that share the store; never waits."""
        ...

    def backup_before_merge(self, now: datetime) -> None:
        """Keep a copy before consolidation rewrites memories (where the engine keeps them)."""
        ...

    def close(self) -> None: ...
