"""The plain data that crosses every boundary: a memory and its vocabulary."""

from __future__ import annotations

import functools
import json
import logging
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from types import MappingProxyType
from typing import Any, TypeVar, overload

log = logging.getLogger(__name__)
T = TypeVar("T")


class MemoryType(StrEnum):
    SEMANTIC = "semantic"
    PREFERENCE = "preference"
    EPISODIC = "episodic"
    PROCEDURAL = "procedural"


class MemoryStatus(StrEnum):
    STAGED = "staged"
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    REJECTED = "rejected"
    ARCHIVED = "archived"


class MemorySource(StrEnum):
    EXTRACTION = "extraction"
    REMEMBER = "remember"
    MANUAL = "manual"
    IMPORT = "import"
    CONSOLIDATION = "consolidation"


MAX_CONTENT_CHARS = 20_000
# Recall's three legs, in the order they are shown and reported.
RECALL_LEGS = ("vector", "text", "entity")
MAX_ENTITY_CHARS = 200


def utc_now() -> datetime:
    return datetime.now(UTC)


def format_time(moment: datetime) -> str:
    """The one stored form of a moment: UTC, microseconds, `Z`; sorts as text."""
    if moment.tzinfo is None:
        raise ValueError("naive datetime: every moment must carry its time zone")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str) -> datetime:
    """Parse an ISO 8601 moment; a moment without a zone is taken as UTC."""
    moment = datetime.fromisoformat(text.strip())
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


# The moments Timothy takes from outside (`--now`, an imported memory's times): ids count
# milliseconds from 1970, and the stored form (four-digit years, sorted as text) and the day
# arithmetic done from a moment hold up to the end of year 9998.
EARLIEST_GIVEN_TIME = datetime(1970, 1, 1, tzinfo=UTC)
LATEST_GIVEN_TIME = datetime(9999, 1, 1, tzinfo=UTC)


def parse_given_time(text: str) -> datetime:
    """`parse_time` for a moment given from outside: a ValueError unless ISO 8601 and within
    the years 1970 to 9998, so no id, stored time or date arithmetic can break on it."""
    try:
        moment = parse_time(text)
    except OverflowError:  # a zone offset that takes it past year 1 or 9999
        raise ValueError(f"{text!r} is out of range") from None
    if not EARLIEST_GIVEN_TIME <= moment < LATEST_GIVEN_TIME:
        raise ValueError(f"{text!r} is out of range")
    return moment


def _time_or_none(moment: datetime | None) -> str | None:
    return None if moment is None else format_time(moment)


@dataclass(frozen=True, slots=True)
class Memory:
    id: str
    type: MemoryType
    content: str
    status: MemoryStatus
    confidence: float
    source: MemorySource
    session_id: str | None
    supersedes: str | None
    superseded_by: str | None
    created_at: datetime
    last_confirmed_at: datetime | None
    last_retrieved_at: datetime | None
    entities: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """Every field as JSON-ready values (times as ISO 8601 UTC strings)."""
        return {
            "id": self.id,
            "type": self.type.value,
            "content": self.content,
            "status": self.status.value,
            "confidence": self.confidence,
            "source": self.source.value,
            "session_id": self.session_id,
            "supersedes": self.supersedes,
            "superseded_by": self.superseded_by,
            "created_at": format_time(self.created_at),
            "last_confirmed_at": _time_or_none(self.last_confirmed_at),
            "last_retrieved_at": _time_or_none(self.last_retrieved_at),
            "entities": list(self.entities),
        }


class MessageRole(StrEnum):
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"  # a tool's result, answering one of the assistant's tool calls
    SUMMARY = "summary"  # compacted older turns, as the model sees them


class MessageStatus(StrEnum):
    COMPLETE = "complete"
    STREAMING = "streaming"
    CANCELLED = "cancelled"
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class StoredToolCall:
    id: str
    name: str
    arguments: str  # JSON text as the model produced it

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    title: str
    title_source: str  # "none" | "fallback" | "auto" | "owner"
    provider: str | None
    model: str | None
    created_at: datetime
    updated_at: datetime
    deleted_at: datetime | None = None
    instructions: str = ""  # the owner's note for this conversation, sent after the prefix
    active_leaf: str | None = None  # the newest message of the branch shown and sent

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "instructions": self.instructions,
            "active_leaf": self.active_leaf,
            "title_source": self.title_source,
            "provider": self.provider,
            "model": self.model,
            "created_at": format_time(self.created_at),
            "updated_at": format_time(self.updated_at),
            "deleted_at": _time_or_none(self.deleted_at),
        }


@dataclass(frozen=True, slots=True)
class Message:
    id: str
    session_id: str
    role: MessageRole
    content: str
    created_at: datetime
    status: MessageStatus = MessageStatus.COMPLETE
    tool_calls: tuple[StoredToolCall, ...] = ()
    tool_call_id: str | None = None
    error: str | None = None
    provider: str | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cached_tokens: int | None = None
    memory_block: str | None = None  # the exact block the model saw on this turn
    recall: RecallRecord | None = None  # what recall found for that block
    compacted_by: str | None = None  # the summary message that replaced it for the model
    parent_id: str | None = None  # the message before it on its branch
    reply_ms: int | None = None  # a reply: milliseconds from its first text to its end

    @property
    def tokens_per_second(self) -> float | None:
        """How fast the reply streamed, when the provider reported its tokens and it took
        long enough to measure."""
        if not self.output_tokens or not self.reply_ms or self.reply_ms < 50:
            return None
        return self.output_tokens / (self.reply_ms / 1000)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "session_id": self.session_id,
            "role": self.role.value,
            "content": self.content,
            "status": self.status.value,
            "tool_calls": [call.to_json() for call in self.tool_calls],
            "tool_call_id": self.tool_call_id,
            "error": self.error,
            "provider": self.provider,
            "model": self.model,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens,
            "memory_block": self.memory_block,
            "recall": None if self.recall is None else self.recall.to_json(),
            "compacted_by": self.compacted_by,
            "parent_id": self.parent_id,
            "reply_ms": self.reply_ms,
            "created_at": format_time(self.created_at),
        }


_NO_TERMS: Mapping[str, float] = MappingProxyType({})


@dataclass(frozen=True, slots=True, eq=False)
class LegVerdict:
    """One recall leg's judgement of one hit against its relevance floor: the measure, the
    floor it had to clear, and why (see timothy/retrieval/floor.py).

    `reason` is the sentence `why` gives, or what writes it: recall judges about 90 hits a
    turn and shows few of them, so the sentence is written when first asked for (the
    record a turn keeps, the Last recall view), then kept."""

    leg: str
    rank: int  # the hit's place in the leg's own list, from 1
    cleared: bool
    value: float | None  # vector: cosine similarity; text: term evidence; entity: None
    floor: float | None  # what `value` had to exceed (vector) or reach (text)
    reason: str | Callable[[], str]
    terms: Mapping[str, float] = field(default_factory=lambda: _NO_TERMS)  # term -> weight

    def __post_init__(self) -> None:
        if self.terms is not _NO_TERMS:
            object.__setattr__(self, "terms", MappingProxyType(dict(self.terms)))

    @property
    def why(self) -> str:
        """Why the hit cleared its floor or missed it, in a sentence."""
        reason = self.reason
        if isinstance(reason, str):
            return reason
        written = reason()
        object.__setattr__(self, "reason", written)
        return written

    def _key(self) -> tuple[object, ...]:
        return (self.leg, self.rank, self.cleared, self.value, self.floor, self.why, self.terms)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LegVerdict):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # as before: its terms are a mapping

    def to_json(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "rank": self.rank,
            "cleared": self.cleared,
            "value": None if self.value is None else round(self.value, 4),
            "floor": None if self.floor is None else round(self.floor, 4),
            "why": self.why,
        }
        if self.terms:
            found["terms"] = {term: round(weight, 3) for term, weight in self.terms.items()}
        return found

    @classmethod
    def from_json(cls, leg: str, data: Mapping[str, Any]) -> LegVerdict:
        value, floor = data.get("value"), data.get("floor")
        return cls(
            leg=leg,
            rank=int(data.get("rank") or 0),
            cleared=bool(data.get("cleared")),
            value=None if value is None else float(value),
            floor=None if floor is None else float(floor),
            reason=str(data.get("why") or ""),
            terms={str(t): float(w) for t, w in (data.get("terms") or {}).items()},
        )


def _floors_json(floors: Mapping[str, LegVerdict]) -> dict[str, Any]:
    return {leg: verdict.to_json() for leg, verdict in floors.items()}


def _floors_from_json(data: Any) -> dict[str, LegVerdict]:
    return {str(leg): LegVerdict.from_json(str(leg), v) for leg, v in (data or {}).items()}


_NO_FLOORS: Mapping[str, LegVerdict] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class RecalledMemory:
    """One memory as recall found it on a turn, with why it scored what it did
    (score = (rrf * decay * weight + context) * time). Kept with the turn, so it is a copy of
    the memory's words as they were then, not a live memory."""

    id: str
    type: MemoryType
    content: str
    entities: tuple[str, ...]
    created_at: datetime
    last_confirmed_at: datetime | None
    rank: int  # its place in the fused list, from 1
    ranks: Mapping[str, int]  # leg -> rank in that leg (from 1), only the legs that found it
    rrf: float
    decay: float
    weight: float
    score: float
    days_unconfirmed: float
    tokens: int | None = None  # what its rendered line cost, for a packed memory
    # Each leg that found it: the relevance floor it cleared or missed.
    floors: Mapping[str, LegVerdict] = field(default_factory=lambda: _NO_FLOORS)
    # What being said beside a top hit added to its score, and that hit's id.
    context: float = 0.0
    beside: str | None = None
    # The factor of a day the question names (1: none, or not made then).
    time: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "ranks", MappingProxyType(dict(self.ranks)))
        object.__setattr__(self, "floors", MappingProxyType(dict(self.floors)))

    @property
    def legs(self) -> tuple[str, ...]:
        """The legs that found it, in recall's fixed order."""
        return tuple(leg for leg in RECALL_LEGS if leg in self.ranks)

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "rank": self.rank,
            "id": self.id,
            "type": self.type.value,
            "content": self.content,
            "entities": list(self.entities),
            "created_at": format_time(self.created_at),
            "last_confirmed_at": _time_or_none(self.last_confirmed_at),
            "ranks": {leg: self.ranks.get(leg) for leg in RECALL_LEGS},
            "rrf": self.rrf,
            "decay": self.decay,
            "weight": self.weight,
            "score": self.score,
            "days_unconfirmed": round(self.days_unconfirmed, 3),
        }
        if self.floors:
            data["floors"] = _floors_json(self.floors)
        if self.tokens is not None:
            data["tokens"] = self.tokens
        if self.beside is not None:
            data["context"] = self.context
            data["beside"] = self.beside
        if self.time != 1.0:
            data["time"] = self.time
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RecalledMemory:
        """Read back what `to_json` wrote; raises ValueError (or KeyError, TypeError) when
        it does not fit."""
        ranks = data.get("ranks") or {}
        last = data.get("last_confirmed_at")
        tokens = data.get("tokens")
        return cls(
            id=str(data["id"]),
            type=MemoryType(data["type"]),
            content=str(data["content"]),
            entities=tuple(str(e) for e in data.get("entities") or ()),
            created_at=parse_time(str(data["created_at"])),
            last_confirmed_at=None if last is None else parse_time(str(last)),
            rank=int(data.get("rank") or 0),
            ranks={str(leg): int(rank) for leg, rank in ranks.items() if rank is not None},
            rrf=float(data["rrf"]),
            decay=float(data["decay"]),
            weight=float(data["weight"]),
            score=float(data["score"]),
            days_unconfirmed=float(data.get("days_unconfirmed") or 0.0),
            tokens=None if tokens is None else int(tokens),
            floors=_floors_from_json(data.get("floors")),
            context=float(data.get("context") or 0.0),
            beside=None if data.get("beside") is None else str(data["beside"]),
            time=float(data.get("time") or 1.0),
        )


@dataclass(frozen=True, slots=True)
class BelowFloorMemory:
    """A memory some leg found that no leg admitted past its relevance floor: listed with
    why, never packed."""

    id: str
    type: MemoryType
    content: str
    entities: tuple[str, ...]
    floors: Mapping[str, LegVerdict]

    def __post_init__(self) -> None:
        object.__setattr__(self, "floors", MappingProxyType(dict(self.floors)))

    @property
    def reason(self) -> str:
        return "; ".join(f"{leg}: {verdict.why}" for leg, verdict in self.floors.items())

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": self.type.value,
            "content": self.content,
            "entities": list(self.entities),
            "reason": self.reason,
            "floors": _floors_json(self.floors),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BelowFloorMemory:
        return cls(
            id=str(data["id"]),
            type=MemoryType(data["type"]),
            content=str(data["content"]),
            entities=tuple(str(e) for e in data.get("entities") or ()),
            floors=_floors_from_json(data.get("floors")),
        )


class ReadLater(Sequence[T]):
    """A stored list of records, read into them when first used: a sequence that equals
    (and hashes as) the tuple it reads into.

    Every reply keeps its recall record, and opening a conversation reads them all; the
    whole ranked list and what stayed below the floor (together ~1 ms of a record's 1.8 ms
    of reading, on bench/app_startup.py's records) are only shown when the owner asks for a
    reply's recall. An entry that no
    longer reads drops the list to empty, as a record that no longer reads is dropped."""

    __slots__ = ("_lock", "_read", "_stored", "_values")

    def __init__(
        self, stored: Sequence[Any] | Callable[[], Sequence[Any]], read: Callable[[Any], T]
    ) -> None:
        # The entries, or how to get them again (from the stored text of the whole record:
        # parsed, the entries weigh ~2.5 times their text, and an opened conversation kept
        # every reply's, ~130 KB each on bench/app_startup.py's records).
        self._stored: Sequence[Any] | Callable[[], Sequence[Any]] | None = stored
        self._read: Callable[[Any], T] | None = read
        self._values: tuple[T, ...] | None = None
        self._lock = threading.Lock()

    @property
    def is_read(self) -> bool:
        """Whether the records were read already."""
        return self._values is not None

    def values(self) -> tuple[T, ...]:
        """The records, read now if they were not yet."""
        values = self._values
        if values is not None:
            return values
        with self._lock:
            if self._values is None:
                stored, read = self._stored or (), self._read
                assert read is not None
                try:
                    entries = stored() if callable(stored) else stored
                    self._values = tuple(read(entry) for entry in entries)
                except (ValueError, KeyError, TypeError, AttributeError) as exc:
                    log.warning("a stored recall list does not read (%s); left out", exc)
                    self._values = ()
                self._stored, self._read = None, None
            return self._values

    def __len__(self) -> int:
        return len(self.values())

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...

    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        return self.values()[index]

    def __iter__(self) -> Iterator[T]:
        return iter(self.values())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ReadLater):
            other = other.values()
        return self.values() == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.values())

    def __repr__(self) -> str:
        return repr(self.values())


@dataclass(frozen=True, slots=True)
class RecallRecord:
    """What recall gave the model on one turn, kept with the turn's reply: the exact block,
    its cost against the budget, what was packed and what else ranked, and each leg's
    outcome. `timothy recall --json` prints the same shape."""

    block: str  # "" when nothing was packed
    tokens: int
    budget: int
    items: tuple[RecalledMemory, ...]  # packed, in block order (best, 3rd, ..., 2nd)
    # Every candidate above the minimum score, best first (read when first used, from a
    # stored record: ReadLater).
    ranked: Sequence[RecalledMemory]
    legs: Mapping[str, str]  # leg -> "ok" | "off" | "failed: why"
    elapsed_ms: float
    # Found by some leg, admitted by none (the relevance floor): listed, never packed.
    below_floor: Sequence[BelowFloorMemory] = ()
    # Admitted, but unconfirmed so long that the score decayed under the minimum: listed
    # (rank 0), never packed. A record kept before this was listed has none.
    faded: Sequence[RecalledMemory] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "legs", MappingProxyType(dict(self.legs)))

    @property
    def by_rank(self) -> tuple[RecalledMemory, ...]:
        """The packed memories best first (the block's own order is deliberate: see pack)."""
        return tuple(sorted(self.items, key=lambda item: item.rank))

    def to_json(self) -> dict[str, Any]:
        return {
            "block": self.block,
            "tokens": self.tokens,
            "budget": self.budget,
            "items": [item.to_json() for item in self.items],
            "ranked": [candidate.to_json() for candidate in self.ranked],
            "below_floor": [memory.to_json() for memory in self.below_floor],
            "faded": [candidate.to_json() for candidate in self.faded],
            "legs": dict(self.legs),
            "elapsed_ms": round(self.elapsed_ms, 2),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, text: str | None = None) -> RecallRecord:
        """The record `data` says; given the `text` it was parsed from, the lists read
        later are parsed from that text again when first used, not kept parsed."""

        stored = None if text is None else _StoredLists(text)

        def later(key: str, read: Callable[[Any], T]) -> ReadLater[T]:
            entries = _listed(data.get(key))
            if stored is None or not entries:
                return ReadLater(entries, read)
            return ReadLater(stored.entries_of(key), read)

        legs = data.get("legs") or {}
        return cls(
            block=str(data.get("block") or ""),
            tokens=int(data.get("tokens") or 0),
            budget=int(data.get("budget") or 0),
            items=tuple(RecalledMemory.from_json(item) for item in data.get("items") or ()),
            ranked=later("ranked", RecalledMemory.from_json),
            legs={str(leg): str(value) for leg, value in legs.items()},
            elapsed_ms=float(data.get("elapsed_ms") or 0.0),
            below_floor=later("below_floor", BelowFloorMemory.from_json),
            faded=later("faded", RecalledMemory.from_json),
        )


class _StoredLists:
    """A stored record's text, for its lists read later: parsed once, when the first of
    them is used; the text and the parse are let go once every list has its entries."""

    def __init__(self, text: str) -> None:
        self._text: str | None = text
        self._parsed: Mapping[str, Any] | None = None
        self._waiting = 0
        self._lock = threading.Lock()

    def entries_of(self, key: str) -> Callable[[], Sequence[Any]]:
        self._waiting += 1
        return functools.partial(self._take, key)

    def _take(self, key: str) -> Sequence[Any]:
        with self._lock:
            parsed = self._parsed
            if parsed is None:
                assert self._text is not None
                parsed = self._parsed = json.loads(self._text)
            self._waiting -= 1
            if self._waiting == 0:
                self._text = self._parsed = None
        return _listed(parsed.get(key))


def _listed(value: Any) -> Sequence[Any]:
    """A stored list, or none when it is missing or empty (as the eager reading took them);
    anything else does not read."""
    if not value:
        return ()
    if not isinstance(value, list):
        raise TypeError(f"a list was expected, not {type(value).__name__}")
    return value
