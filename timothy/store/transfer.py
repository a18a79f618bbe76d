"""Export and import memories as JSON Lines: every field, entities and (where one exists) a vector.

Import is all or nothing: every line is checked first, then all are written in one transaction.
Export from a damaged store saves what can still be read: the memories are read range by
range, and a range that meets a damaged page is split until the damage is fenced off.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from timothy.errors import DamagedStoreError, ImportFailedError, InvalidInputError, StoreError
from timothy.lazy import lazy_module
from timothy.store import Store
from timothy.store.db import scalar
from timothy.store.engine import StoreEngine
from timothy.store.ids import new_id
from timothy.store.memories import (
    COLUMNS,
    load_entities,
    parse_source,
    parse_status,
    parse_type,
    row_to_memory,
    validate_confidence,
    validate_content,
    validate_entities,
)
from timothy.store.records import (
    Memory,
    MemorySource,
    MemoryStatus,
    MemoryType,
    parse_given_time,
    utc_now,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    np = lazy_module("numpy")

EXPORT_BATCH = 500
# An import of at least this many memories ends by compacting the text indexes: one large
# write leaves them in several pieces, which every later search would look each term up in.
BULK_IMPORT = 500
_FIELDS = {
    "id",
    "type",
    "content",
    "status",
    "confidence",
    "source",
    "session_id",
    "supersedes",
    "superseded_by",
    "created_at",
    "last_confirmed_at",
    "last_retrieved_at",
    "entities",
    "embedding",
    "embedding_model",
}


def _readable_range(store: Store, low: int, high: int) -> list[Memory]:
    """The memories with seq in [low, high] (raises DamagedStoreError when a page they sit on
    is damaged); entities that cannot be read are left out, the memory is kept."""
    try:
        with store.db.read() as conn:
            rows = conn.execute(
                f"SELECT {COLUMNS} FROM memories m WHERE m.seq BETWEEN ? AND ? ORDER BY m.seq",
                (low, high),
            ).fetchall()
    except UnicodeDecodeError as exc:  # garbage read as text
        raise DamagedStoreError(str(exc)) from exc
    found = []
    for row in rows:
        seq = row[0]
        assert isinstance(seq, int)
        try:
            with store.db.read() as conn:
                entities = load_entities(conn, [seq]).get(seq, ())
        except (DamagedStoreError, UnicodeDecodeError):
            entities = ()
        try:
            found.append(row_to_memory(row, entities))
        except (ValueError, TypeError):  # a row whose fields are garbage
            continue
    return found


def readable_memories(store: Store) -> Iterator[Memory]:
    """Every memory a damaged store can still give, oldest first."""
    try:
        with store.db.read() as conn:
            top = int(scalar(conn, "SELECT max(seq) FROM memories") or 0)
    except DamagedStoreError:
        top = 1 << 62  # the table's last page is damaged: search the whole range
    if top == 1 << 62:
        pending = [(1, top)]
    else:  # in batches, the first on top
        starts = range(1, top + 1, EXPORT_BATCH)
        pending = [(low, min(low + EXPORT_BATCH - 1, top)) for low in reversed(starts)]
    while pending:
        low, high = pending.pop()
        try:
            batch = _readable_range(store, low, high)
        except DamagedStoreError:
            if low < high:  # split, and read the lower half first
                middle = (low + high) // 2
                pending += [(middle + 1, high), (low, middle)]
            continue
        yield from batch


def _sound_batches(store: StoreEngine) -> Iterator[list[Memory]]:
    offset = 0
    while True:
        batch = store.memories.list(limit=EXPORT_BATCH, offset=offset, oldest_first=True)
        if not batch:
            return
        yield batch
        offset += len(batch)


def _salvaged_batches(store: Store) -> Iterator[list[Memory]]:
    batch: list[Memory] = []
    for memory in readable_memories(store):
        batch.append(memory)
        if len(batch) == EXPORT_BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def export_lines(store: StoreEngine) -> Iterator[str]:
    """One JSON object per memory, oldest first, with its vector when it has one (from a
    damaged store: every memory that can still be read, vectors where they can)."""
    damaged = isinstance(store, Store) and store.damaged
    batches = (
        _salvaged_batches(store) if isinstance(store, Store) and damaged else _sound_batches(store)
    )
    for batch in batches:
        try:
            vectors = store.vectors.vectors_of([m.id for m in batch])
        except DamagedStoreError:
            if not damaged:
                raise
            vectors = {}
        for memory in batch:
            record = memory.to_json()
            if memory.id in vectors:
                model_name, vector = vectors[memory.id]
                record["embedding"] = vector.tolist()
                record["embedding_model"] = model_name
            yield json.dumps(record, ensure_ascii=False)


def export_memories(store: StoreEngine, out: IO[str]) -> int:
    count = 0
    for line in export_lines(store):
        out.write(line + "\n")
        count += 1
    return count


@dataclass(frozen=True, slots=True)
class _Parsed:
    line: int
    memory: Memory
    embedding_model: str | None
    embedding: npt.NDArray[np.float32] | None


def _optional_str(record: dict[str, Any], key: str) -> str | None:
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{key!r} must be a string or null")
    return value


def _optional_time(record: dict[str, Any], key: str, default: datetime | None) -> datetime | None:
    if key not in record:
        return default
    value = record[key]
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{key!r} must be an ISO 8601 time or null")
    try:
        return parse_given_time(value)
    except ValueError:
        raise InvalidInputError(
            f"{key!r} is not an ISO 8601 time from 1970 to 9998: {value!r}"
        ) from None


def _parse_record(record: dict[str, Any], now: datetime) -> tuple[Memory, str | None, Any]:
    unknown = set(record) - _FIELDS
    if unknown:
        raise InvalidInputError(f"unknown field {sorted(unknown)[0]!r}")
    if "content" not in record:
        raise InvalidInputError("'content' is missing")
    if not isinstance(record["content"], str):
        raise InvalidInputError("'content' must be a string")
    status = parse_status(record.get("status", MemoryStatus.ACTIVE))
    created_at = _optional_time(record, "created_at", now)
    if created_at is None:
        raise InvalidInputError("'created_at' cannot be null")
    entities = record.get("entities", [])
    if not isinstance(entities, list):
        raise InvalidInputError("'entities' must be a list of names")
    confirmed_default = now if status is MemoryStatus.ACTIVE else None
    memory_id = _optional_str(record, "id") or new_id(now)
    if not 1 <= len(memory_id) <= 100 or not memory_id.isprintable():
        raise InvalidInputError("'id' must be 1 to 100 printable characters")
    memory = Memory(
        id=memory_id,
        type=parse_type(record.get("type", MemoryType.SEMANTIC)),
        content=validate_content(record["content"]),
        status=status,
        confidence=validate_confidence(record.get("confidence", 1.0)),
        source=parse_source(record.get("source", MemorySource.IMPORT)),
        session_id=_optional_str(record, "session_id"),
        supersedes=_optional_str(record, "supersedes"),
        superseded_by=_optional_str(record, "superseded_by"),
        created_at=created_at,
        last_confirmed_at=_optional_time(record, "last_confirmed_at", confirmed_default),
        last_retrieved_at=_optional_time(record, "last_retrieved_at", None),
        entities=tuple(name for name, _ in validate_entities(entities)),
    )
    model = _optional_str(record, "embedding_model")
    embedding = record.get("embedding")
    if (model is None) != (embedding is None):
        raise InvalidInputError("'embedding' and 'embedding_model' go together")
    return memory, model, embedding


_FLOAT32_MAX = 3.4028234663852886e38


def _parse_embedding(value: Any) -> npt.NDArray[np.float32]:
    if not isinstance(value, list) or not value:
        raise InvalidInputError("'embedding' must be a non-empty list of numbers")
    if not all(isinstance(x, int | float) and not isinstance(x, bool) for x in value):
        raise InvalidInputError("'embedding' must hold only numbers")
    # Stored as float32: a larger number (1e39) would become infinite there.
    if not all(math.isfinite(x) and abs(x) <= _FLOAT32_MAX for x in value):
        raise InvalidInputError("'embedding' must hold only finite numbers")
    return np.asarray(value, dtype=np.float32)


def _first_in_a_loop_of_versions(parsed: list[_Parsed]) -> _Parsed | None:
    """The first line whose `superseded_by` links come round again: such versions have no
    newest, so `chain` (and `forget --chain`) would find none of them."""
    later = {item.memory.id: item.memory.superseded_by for item in parsed}
    settled: set[str] = set()
    for item in parsed:
        path: set[str] = set()
        current: str | None = item.memory.id
        while current is not None and current in later and current not in settled:
            if current in path:
                return item
            path.add(current)
            current = later[current]
        settled |= path
    return None


# The longest line an import reads: a memory at its 20,000 characters with an embedding of
# 16,384 numbers takes well under a tenth of it. A longer line (a file that is not JSON Lines,
# /dev/zero) is refused without being read whole into memory.
MAX_IMPORT_LINE_CHARS = 4_000_000


def _bounded_lines(lines: Iterable[str]) -> Iterator[str]:
    """The lines of `lines`, read at most MAX_IMPORT_LINE_CHARS + 1 characters at a time
    from a file (a longer line then arrives in pieces, the first one too long)."""
    readline = getattr(lines, "readline", None)
    if not callable(readline):
        yield from lines
        return
    while True:
        line = readline(MAX_IMPORT_LINE_CHARS + 1)
        if not line:
            return
        yield line


def import_memories(
    store: StoreEngine, lines: Iterable[str], *, now: datetime | None = None
) -> int:
    """Import JSON Lines; a bad line raises ImportFailedError naming it, and nothing is written."""
    moment = now or utc_now()
    parsed: list[_Parsed] = []
    seen_ids: dict[str, int] = {}
    dimensions: dict[str, int] = {m.name: m.dimension for m in store.vectors.models()}
    for number, raw in enumerate(_bounded_lines(lines), start=1):
        if len(raw) > MAX_IMPORT_LINE_CHARS:
            raise ImportFailedError(
                number, f"longer than {MAX_IMPORT_LINE_CHARS:,} characters (not JSON Lines?)"
            )
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ImportFailedError(number, f"not valid JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise ImportFailedError(number, "each line must be one JSON object")
        try:
            memory, model, embedding_value = _parse_record(record, moment)
            embedding = None if embedding_value is None else _parse_embedding(embedding_value)
        except InvalidInputError as exc:
            raise ImportFailedError(number, str(exc).rstrip(".")) from None
        if memory.id in seen_ids:
            raise ImportFailedError(
                number, f"the id {memory.id!r} already appears on line {seen_ids[memory.id]}"
            )
        seen_ids[memory.id] = number
        if model is not None and embedding is not None:
            expected = dimensions.setdefault(model, embedding.shape[0])
            if embedding.shape[0] != expected:
                raise ImportFailedError(
                    number,
                    f"the embedding has {embedding.shape[0]} numbers but {model!r} "
                    f"vectors have {expected}",
                )
        parsed.append(_Parsed(number, memory, model, embedding))

    existing = store.memories.get_many(seen_ids)
    for item in parsed:
        if item.memory.id in existing:
            raise ImportFailedError(
                item.line, f"a memory with the id {item.memory.id!r} is already stored"
            )
    linked = {
        link for item in parsed for link in (item.memory.supersedes, item.memory.superseded_by)
    }
    linked.discard(None)
    stored_links = store.memories.get_many(link for link in linked if link not in seen_ids)  # type: ignore[misc]
    for item in parsed:
        for key in ("supersedes", "superseded_by"):
            link = getattr(item.memory, key)
            if link is not None and link not in seen_ids and link not in stored_links:
                raise ImportFailedError(item.line, f"{key!r} names an unknown memory {link!r}")
    looped = _first_in_a_loop_of_versions(parsed)
    if looped is not None:
        raise ImportFailedError(
            looped.line, "its 'superseded_by' links come back round: no version would be the newest"
        )

    used = {item.embedding_model for item in parsed if item.embedding_model is not None}
    with store.db.write() as conn:
        # Inside the transaction, so a failed import leaves no new model behind either.
        models = {name: store.vectors.ensure_model(name, dimensions[name]) for name in used}
        for item in parsed:
            store.memories.insert(conn, item.memory)
        for name, embedding_model in models.items():
            store.vectors.put_many(
                embedding_model,
                (
                    (item.memory.id, item.embedding)
                    for item in parsed
                    if item.embedding_model == name and item.embedding is not None
                ),
                conn=conn,
            )
    if len(parsed) >= BULK_IMPORT:
        store.db.compact_text_indexes()
    return len(parsed)


def export_to_file(store: StoreEngine, path: Path) -> int:
    """Export to `path`, written beside it and then renamed: an interrupted export never
    leaves half a file (what `timothy memories export FILE` does)."""
    path = path.expanduser()
    try:
        handle, temp_name = tempfile.mkstemp(prefix=".export-", dir=path.parent or Path("."))
    except OSError as exc:
        raise StoreError(f"Cannot write to {path.parent}: {exc.strerror}.") from exc
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            count = export_memories(store, out)
        os.replace(temp_name, path)
    except BaseException as exc:
        Path(temp_name).unlink(missing_ok=True)
        if isinstance(exc, OSError):  # a folder in the way, a full disk
            raise StoreError(f"Cannot write {path}: {exc.strerror}; nothing was exported.") from exc
        raise
    return count


def import_from_file(store: StoreEngine, path: Path, *, now: datetime | None = None) -> int:
    """Import a JSON Lines file, all or nothing (what `timothy memories import FILE` does)."""
    path = path.expanduser()
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise InvalidInputError(f"Cannot read {path}: {exc.strerror}.") from exc
    with handle:
        try:
            return import_memories(store, handle, now=now)
        except UnicodeDecodeError:
            raise InvalidInputError(f"{path} is not UTF-8 text; nothing was imported.") from None
