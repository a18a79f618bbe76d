"""Recall: the three legs side by side, fused, packed into one block within a token budget.

`Recaller.recall(query)` is what a chat turn calls before each reply. The legs run side by
side (each with its own connection: the text leg on the caller's thread, whose statements stop
at the deadline, the others on threads of their own; on two cores the vector leg on one thread
and the entity leg on whichever of the two is free first: `leg_lanes`); one that fails
or outlives the time bound is logged and dropped, and only when every leg that ran failed does
recall raise RecallError.
Stamping `last_retrieved_at` of the packed memories happens afterwards, off the turn's path.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, wait
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType
from typing import Any

from timothy.errors import InvalidInputError, RecallError, TimothyError
from timothy.providers.base import EmbeddingProvider
from timothy.retrieval.context import could_lend, in_context, seeds
from timothy.retrieval.floor import (
    Background,
    BelowFloor,
    background_for,
    entity_verdicts,
    second_opinion,
    speaks_of_owner,
    text_verdicts,
    vector_verdicts,
    vouch_for_named,
    word_ranks,
)
from timothy.retrieval.fusion import LEGS, Candidate, fuse
from timothy.retrieval.pack import PackedItem, forget_lines, pack
from timothy.retrieval.settings import RecallSettings
from timothy.retrieval.when import at_time
from timothy.retrieval.workers import DaemonPool
from timothy.store.engine import StoreEngine
from timothy.store.memories import Neighbour
from timothy.store.records import LegVerdict, Memory, MemoryStatus, RecallRecord, utc_now
from timothy.store.search import MAX_NAME_WORDS, MemorySearch
from timothy.store.vectors import Vector
from timothy.text import cut_names, query_terms
from timothy.tokens import encoding

log = logging.getLogger(__name__)

LEG_OK = "ok"
LEG_OFF = "off"
# Recall reads at most this much of a query (a pasted document is searched by its start).
MAX_QUERY_CHARS = 20_000
# Threads for legs: at most two per recall, more only while a hung leg still holds one.
LEG_THREADS = 8
# The leg recall runs on its caller's thread (its statements stop at the deadline).
INLINE_LEG = "text"
# The other legs, each on a thread of its own when there are two (`leg_lanes`).
THREADED_LEGS = ("entity", "vector")
# With one other thread (two cores), the vector leg runs on it first (it may wait on an
# embedding provider, which the caller must not) and the entity leg, whose statements stop at
# the deadline as the text leg's do, runs next on whichever thread is free first: after the
# text leg on the caller's, or after the vector leg on the other (`SHARED_LEG`).
ONE_LANE_INLINE = ("text",)
SHARED_LEG = "entity"
# The order the legs' statuses have always been listed in; fusion sums their terms in it,
# whichever thread ran each, so its floats do not depend on where the legs ran.
STATUS_ORDER = ("vector", "entity", "text")


def leg_lanes(cores: int | None = None) -> int:
    """How many threads besides the caller's run a recall's other legs: one thread a core
    beyond the caller's, at most one a leg, at least one (the vector leg may wait on a
    provider, which the caller must not).

    On two cores (a laptop) the vector leg runs on one thread while the text leg runs on the
    caller's, and the entity leg follows whichever of the two ends first: two runnable
    threads for two cores. Three threads there took turns on the cores and at the GIL. The
    vector leg goes first on its thread: started at once, it waits on the provider (or the
    int8 pass, which holds no GIL) while the text leg's SQLite holds none either, and a
    provider that hangs costs no other leg (the caller then runs the entity leg). Against
    the entity leg before it on the same thread (bench/recall.py's stores, the two
    alternated query by query in one process), with a provider that takes the local model's
    1.8 ms: p50 0.83-0.86x at 1k memories, 0.90-0.93x at 10k (a turn ~1 ms sooner); with a
    ready vector, 0.90-0.97x in process, and 1.02-1.17x in bench/recall.py's rounds (no gain
    there). The entity leg on whichever thread is free first, against always after the text
    leg (alternated the same way, load ~0.9): p50 0.94x at 1k and 0.92x at 10k with a ready
    vector, 0.99x and 0.94x with a provider that waits 1.8 ms; the same blocks."""
    found = os.cpu_count() if cores is None else cores
    return max(1, min(len(THREADED_LEGS), (found or 1) - 1))


# One leg's hits, best first: memory id -> how the hit fared against the leg's floor.
Verdicts = dict[str, LegVerdict]
# What one leg found: its verdicts, and the memories of its hits as read.
LegHits = tuple[Verdicts, dict[str, Memory]]


@dataclass(frozen=True, slots=True)
class RecallResult:
    """What recall found and what the model will see; `to_json()` is `timothy recall --json`."""

    block: str
    tokens: int
    budget: int
    items: tuple[PackedItem, ...]  # packed, in block order (best, 3rd, ..., 2nd)
    ranked: tuple[Candidate, ...]  # every candidate above the floor and minimum score, best first
    legs: Mapping[str, str]  # leg -> "ok" | "off" | "failed: why"
    elapsed_ms: float
    # Found by some leg, admitted by none (the relevance floor): listed, never packed.
    below_floor: tuple[BelowFloor, ...] = ()
    # Admitted, but long unconfirmed: their score decayed under the minimum (rank 0, best
    # first). Listed, never packed; confirming one (Still true?) brings it back.
    faded: tuple[Candidate, ...] = ()

    @property
    def packed_ids(self) -> list[str]:
        return [item.memory.id for item in self.items]

    def record(self) -> RecallRecord:
        """The typed record a turn keeps (and `timothy recall --json` prints)."""
        return RecallRecord(
            block=self.block,
            tokens=self.tokens,
            budget=self.budget,
            items=tuple(item.recalled() for item in self.items),
            ranked=tuple(candidate.recalled() for candidate in self.ranked),
            legs={leg: self.legs.get(leg, LEG_OFF) for leg in LEGS},
            elapsed_ms=self.elapsed_ms,
            below_floor=tuple(candidate.recalled() for candidate in self.below_floor),
            faded=tuple(candidate.recalled() for candidate in self.faded),
        )

    def to_json(self) -> dict[str, Any]:
        return self.record().to_json()


def vector_text(query: str, names: Sequence[str]) -> str:
    """What the vector leg embeds for a query: the query without the entity names it names
    (`names`, which the entity leg matches), unless nothing but names would be left.

    Memories are embedded with their entities in front (embedding_text), so an owner's
    frequent names recur across many vectors. In a question, one such name weighs as much as
    the rest of it and pulls up every short memory that carries the name and says little
    else. The entity leg already finds memories by the names; the vector leg looks for what
    is asked, and fusion ranks first what both find. (On LoCoMo this lifts the vector leg
    alone from 50.0 to 63.0 recall@10, the fused list from 66.0 to 68.3.)
    """
    if not names:
        return query
    rest = cut_names(query, names, MAX_NAME_WORDS)
    return rest if query_terms(rest) else query


class _Turn:
    """What the parts of one recall share across its threads, each read once: the entity
    names the query names (the vector leg cuts them from what it embeds, the floor vouches
    for them), the memories the legs found (a memory two legs found is read once) and, with
    `early_neighbours`, the conversational neighbourhoods of each leg's top episodic hits
    (read on the legs' threads; by default they are read once, after fusion)."""

    def __init__(
        self,
        names: Callable[[], list[str] | None],
        read: Callable[[list[str]], dict[str, Memory]],
    ):
        self._look_up = names
        self._read = read
        self._lock = threading.Lock()
        self._names_lock = threading.Lock()
        self._names: list[str] | None = None
        self._names_read = False
        self.memories: dict[str, Memory] = {}
        # Seed id -> its neighbours, for every seed asked for (none: no neighbours).
        self.neighbours: dict[str, list[Neighbour]] = {}
        self._asked: set[str] = set()
        self.neighbour_reads: list[Future[None]] = []

    def claim(self, seeds: Sequence[str]) -> list[str]:
        """Those of `seeds` whose neighbourhood no thread has read or is reading."""
        with self._lock:
            new = [seed for seed in seeds if seed not in self._asked]
            self._asked.update(new)
            return new

    def asked(self, seed: str) -> bool:
        with self._lock:
            return seed in self._asked

    def add_neighbours(self, seeds: Sequence[str], found: Mapping[str, list[Neighbour]]) -> None:
        with self._lock:
            for seed in seeds:
                self.neighbours[seed] = found.get(seed, [])

    def neighbours_of(self, seeds: Sequence[str]) -> dict[str, list[Neighbour]]:
        with self._lock:
            return {seed: self.neighbours[seed] for seed in seeds if seed in self.neighbours}

    def names(self) -> list[str]:
        """The query's entity names (none when they could not be read)."""
        return self.found_names() or []

    def found_names(self) -> list[str] | None:
        """The query's entity names, looked up once for the turn; None when that failed."""
        with self._names_lock:
            if not self._names_read:
                self._names = self._look_up()
                self._names_read = True
            return self._names

    def read_so_far(self) -> dict[str, Memory]:
        with self._lock:
            return dict(self.memories)

    def read(self, ids: list[str]) -> dict[str, Memory]:
        """The memories of `ids` (those still stored), reading only those no leg read yet."""
        with self._lock:
            missing = [i for i in ids if i not in self.memories]
        if missing:
            read = self._read(missing)
            with self._lock:
                self.memories.update(read)
        with self._lock:
            return {i: self.memories[i] for i in ids if i in self.memories}


_CLAIMS = threading.Lock()


def _claim(future: Future[Any]) -> bool:
    """Whether this thread is the one to run `future`'s leg: it is not cancelled (recall
    stopped waiting for it) and no other thread has taken it (a leg two threads may run)."""
    with _CLAIMS:
        if future.running() or future.done():
            return False
        return future.set_running_or_notify_cancel()


def _run_lane(lane: Sequence[tuple[Future[Any], Callable[[], Any]]]) -> None:
    """Legs one after another on one thread, each into its own future (one that recall
    stopped waiting for, or that another thread took, is not started)."""
    for future, call in lane:
        if not _claim(future):
            continue
        try:
            future.set_result(call())
        except BaseException as failure:
            future.set_exception(failure)


def _one_line(exc: BaseException, limit: int = 200) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Recaller:
    """Recall over one store. Long-lived: it owns the legs' threads; `close()` when done."""

    def __init__(
        self,
        store: StoreEngine,
        settings: RecallSettings | None = None,
        embedder: EmbeddingProvider | None = None,
        *,
        search: MemorySearch | None = None,
        wait_for_background: bool = True,
        early_neighbours: bool = False,
        lanes: int | None = None,
    ) -> None:
        self.store = store
        # False: a recall does not wait for the vector floor's background sentences to be
        # embedded (the first time per model and process); its vector matches count from
        # the recall after (a chat turn, whose time bound is tight).
        self.wait_for_background = wait_for_background
        # False: the neighbourhoods of the fused list's lenders are read once, after fusion,
        # on the caller's thread: one read of the few it needs. True: each leg's thread reads
        # those of its own first episodic hits while the others still run (the same
        # ranking, ~2.8 reads a turn instead of one; on two cores the threads mostly took
        # turns at the GIL, and it cost 9-16% more wall time and CPU per turn at 1k and 10k
        # memories, bench/recall.py's stores; kept for comparing the two).
        self.early_neighbours = early_neighbours
        self.settings = settings or RecallSettings()
        self.embedder = embedder
        self.search: MemorySearch = search if search is not None else store.search
        self._legs = DaemonPool("recall-leg", LEG_THREADS)
        # Threads besides the caller's that run the other legs (leg_lanes).
        self.lanes = lanes if lanes is not None else leg_lanes()
        if self.lanes < 1:
            raise ValueError("recall needs at least one thread for its other legs")
        self._marks = DaemonPool("recall-mark", 1)
        self._pending: set[Future[None]] = set()
        self._pending_lock = threading.Lock()
        # The packer keeps the lines of recent memories: a forgotten one's goes with it.
        store.memories.listeners.append(self._heard)

    # -- lifecycle ----------------------------------------------------------------------

    def prepare(self) -> Future[None]:
        """Warm up in the background: the token encoding, the in-memory vectors and the
        English word ranks of the text floor. (The vector floor's background sentences are
        embedded at the first recall that needs them: preparing calls no provider.)"""

        def warm() -> None:
            encoding()
            self.search.prepare()
            word_ranks()

        return self._legs.submit(warm)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait for the pending `last_retrieved_at` stamps; False if some are still running."""
        with self._pending_lock:
            pending = list(self._pending)
        _, not_done = wait(pending, timeout=timeout)
        return not not_done

    def close(self) -> None:
        """Let pending stamps finish, then stop the threads (a hung leg is left behind)."""
        with contextlib.suppress(ValueError):
            self.store.memories.listeners.remove(self._heard)
        self.flush()
        self._legs.close()
        self._marks.close()

    def _heard(self, event: str, memory: Memory) -> None:
        if event == "forgotten":
            forget_lines()

    def __enter__(self) -> Recaller:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the legs -----------------------------------------------------------------------

    def _vector_leg(
        self, query: str, query_vector: Vector | None, limit: int, deadline: float, turn: _Turn
    ) -> Verdicts | None:
        """The vector leg's hits judged by its floor, or None when it is off (no model, no
        vectors, no provider)."""
        model = self.search.vector_model()
        if model is None:
            return None
        embedder = self.embedder
        if query_vector is None:
            if embedder is None:
                return None
            if embedder.model_id != model.name:
                log.info(
                    "vector leg off: the provider embeds with %s, the stored vectors are %s",
                    embedder.model_id,
                    model.name,
                )
                return None
            if not self.search.has_vectors(model):
                return None
            if not query_terms(query):
                return {}
            query_vector = embedder.embed_query(vector_text(query, turn.names()))
        elif not self.search.has_vectors(model):
            return None
        hits = self.search.vector_hits(model, query_vector, limit, deadline=deadline)
        background: Background | None = None
        pending = False
        # The background must be embedded by the model of the stored vectors.
        if (
            hits
            and self.settings.relevance_floor
            and embedder is not None
            and embedder.model_id == model.name
        ):
            background = background_for(embedder, wait=self.wait_for_background)
            pending = background is None
        return vector_verdicts(hits, query_vector, background, self.settings, pending=pending)

    def _text_leg(self, query: str, limit: int, deadline: float) -> Verdicts:
        hits = self.search.text_hits(query, limit, deadline=deadline)
        return text_verdicts(hits, self.settings, personal=speaks_of_owner(query))

    def _entity_leg(self, query: str, limit: int, deadline: float, turn: _Turn) -> Verdicts:
        # The names the turn looked up once (the entity leg looks them up itself only when
        # that failed, and fails as it would have).
        names = turn.found_names()
        return entity_verdicts(self.search.entity(query, limit, deadline=deadline, names=names))

    def _names(self, query: str, deadline: float) -> list[str] | None:
        """The entity names the query names; None when they cannot be read (the vector leg
        then embeds the whole query rather than fail)."""
        try:
            return self.search.named(query, deadline=deadline)
        except Exception as exc:
            log.warning("recall: the query's names could not be read: %s", _one_line(exc))
            return None

    def _with_memories(
        self, leg: Callable[[], Verdicts | None], turn: _Turn, *, inline: bool = False
    ) -> LegHits | None:
        """A leg's hits and their memories, both read on the leg's own thread: everything
        that can block (the store, the embedding provider) stays off the caller's thread,
        so recall as a whole keeps its one deadline. With `early_neighbours`, the
        neighbourhoods of its first episodic hits (context.py) are read then: on this
        thread, or, for the leg on the caller's thread (`inline`), on a pool thread while
        the caller fuses."""
        verdicts = leg()
        if verdicts is None:
            return None
        try:
            memories = turn.read(list(verdicts)) if verdicts else {}
        except TimothyError as exc:
            raise RecallError(f"the memories could not be read ({exc})") from exc
        wanted = turn.claim(self._lenders(verdicts, memories))
        if wanted:
            read = functools.partial(self._read_neighbours, wanted, turn)
            if inline:
                turn.neighbour_reads.append(self._legs.submit(read))
            else:
                read()
        return verdicts, memories

    def _lenders(self, verdicts: Verdicts, memories: Mapping[str, Memory]) -> list[str]:
        """A leg's hits that may lend their neighbourhood after fusion, in the leg's order:
        its first `neighbour_seeds` episodic memories of a session (the fused list's lenders
        are nearly always among them; any other is read after fusion)."""
        if (
            not self.early_neighbours
            or self.settings.neighbour_share <= 0
            or self.settings.neighbour_width <= 0
        ):
            return []
        found: list[str] = []
        for memory_id in verdicts:
            memory = memories.get(memory_id)
            if memory is not None and could_lend(memory):
                found.append(memory_id)
                if len(found) >= self.settings.neighbour_seeds:
                    break
        return found

    def _read_neighbours(self, seeds: list[str], turn: _Turn) -> None:
        """The neighbourhoods of `seeds` into the turn; a failure is logged, and the seeds
        are left to be read again after fusion."""
        try:
            found = self.store.memories.around(
                seeds, self.settings.neighbour_width, turn.read_so_far()
            )
        except TimothyError as exc:
            log.warning("recall: the hits' neighbourhood could not be read: %s", _one_line(exc))
            return
        turn.add_neighbours(seeds, found)

    def _run_legs(
        self, query: str, query_vector: Vector | None, deadline: float, turn: _Turn
    ) -> tuple[dict[str, Verdicts], dict[str, str]]:
        """Each leg's hits (judged by its floor) and status; the memories of the hits are
        read into `turn.memories`."""
        limit = self.settings.leg_limit
        calls: dict[str, Callable[[], Verdicts | None]] = {
            "vector": lambda: self._vector_leg(
                query, query_vector, limit("vector"), deadline, turn
            ),
            "text": lambda: self._text_leg(query, limit("text"), deadline),
            "entity": lambda: self._entity_leg(query, limit("entity"), deadline, turn),
        }
        one_lane = self.lanes == 1
        inline_legs = ONE_LANE_INLINE if one_lane else (INLINE_LEG,)
        threaded = [leg for leg in THREADED_LEGS if leg not in inline_legs]
        # On one lane the shared leg goes last on the other thread, and the caller runs it
        # too unless that thread took it first (_claim).
        if one_lane:
            threaded.sort(key=lambda leg: leg == SHARED_LEG)
        futures: dict[str, Future[LegHits | None]] = {
            leg: Future() for leg in calls if leg in threaded
        }
        lanes: list[list[tuple[Future[LegHits | None], Callable[[], LegHits | None]]]] = [
            [] for _ in range(self.lanes)
        ]
        for place, leg in enumerate(threaded):
            lanes[place % self.lanes].append(
                (futures[leg], functools.partial(self._with_memories, calls[leg], turn))
            )
        for lane in lanes:
            if lane:
                self._legs.submit(functools.partial(_run_lane, lane))
        # The text leg runs on the caller's thread, which would only wait meanwhile: one
        # thread less to wake, and no wake-up of the caller when the legs are done. Its
        # statements stop at the deadline (TimeoutError), so the bound still holds (and so
        # do the shared leg's, when the caller runs it).
        for leg in inline_legs:
            inline: Future[LegHits | None] = Future()
            inline.set_running_or_notify_cancel()
            try:
                inline.set_result(self._with_memories(calls[leg], turn, inline=True))
            except Exception as failure:
                inline.set_exception(failure)
            futures[leg] = inline
        shared = futures.get(SHARED_LEG) if one_lane else None
        if shared is not None and _claim(shared):
            try:
                shared.set_result(self._with_memories(calls[SHARED_LEG], turn, inline=True))
            except Exception as failure:  # as the text leg's: an interrupt goes on up
                shared.set_exception(failure)
        wait(futures.values(), timeout=max(0.0, deadline - time.monotonic()))
        found: dict[str, Verdicts] = {}
        status: dict[str, str] = {}
        for leg in STATUS_ORDER:
            future = futures[leg]
            if not future.done():
                future.cancel()
                bound = self.settings.time_bound_seconds
                status[leg] = f"failed: timed out after {bound:g} s"
                log.warning("recall: the %s leg outlived the %g s bound; dropped", leg, bound)
                continue
            exc = future.exception()
            if exc is not None:
                if isinstance(exc, TimeoutError):
                    bound = self.settings.time_bound_seconds
                    status[leg] = f"failed: timed out after {bound:g} s"
                else:
                    status[leg] = f"failed: {_one_line(exc)}"
                log.warning(
                    "recall: the %s leg failed; dropped: %s",
                    leg,
                    _one_line(exc),
                    exc_info=not isinstance(exc, TimothyError | TimeoutError),
                )
                continue
            hits = future.result()
            if hits is None:
                status[leg] = LEG_OFF
            else:
                status[leg] = LEG_OK
                found[leg] = hits[0]
        ran = [leg for leg in LEGS if status[leg] != LEG_OFF]
        if ran and not any(status[leg] == LEG_OK for leg in ran):
            reasons = "; ".join(f"{leg} {status[leg]}" for leg in ran)
            timed_out = all(status[leg].startswith("failed: timed out") for leg in ran)
            raise RecallError(
                f"Recall failed: every search failed ({reasons}).", timed_out=timed_out
            )
        return found, status

    # -- recall -------------------------------------------------------------------------

    def recall(
        self,
        query: str,
        *,
        budget: int | None = None,
        now: datetime | None = None,
        decay: bool = True,
        query_vector: Vector | None = None,
        mark: bool = True,
    ) -> RecallResult:
        """The memory block for `query` within `budget` tokens (default: the setting).

        `query_vector` skips the embedding provider (callers that already have one);
        `mark=False` leaves `last_retrieved_at` alone (inspection, benchmarks).
        Raises RecallError only when every leg that ran failed.
        """
        started = time.monotonic()
        deadline = started + self.settings.time_bound_seconds
        if not isinstance(query, str):
            raise InvalidInputError("A recall query must be text.")
        budget = self.settings.token_budget if budget is None else int(budget)
        if budget < 0:
            raise InvalidInputError("A token budget cannot be negative.")
        moment = now or utc_now()
        text = query[:MAX_QUERY_CHARS]

        turn = _Turn(
            lambda: self._names(text, deadline),
            self.store.memories.get_many,
        )
        found, status = self._run_legs(text, query_vector, deadline, turn)
        # A copy: a leg left behind at the deadline may still be reading into the turn.
        memories = turn.read_so_far()
        ids = list(dict.fromkeys(i for leg in LEGS for i in found.get(leg, ())))
        # A memory archived or superseded since its leg ran is not recalled.
        active = {i: m for i, m in memories.items() if m.status is MemoryStatus.ACTIVE}
        if self.settings.relevance_floor:
            if "text" in found:
                found["text"] = second_opinion(found["text"], found.get("vector"), self.settings)
            names = turn.names() if "entity" in found else []
            found = {
                leg: vouch_for_named(verdicts, active, names) for leg, verdicts in found.items()
            }
        # Only hits that cleared their leg's floor enter fusion, ranked among themselves.
        admitted = {
            leg: [i for i, verdict in verdicts.items() if verdict.cleared]
            for leg, verdicts in found.items()
        }
        by_id: dict[str, dict[str, LegVerdict]] = {}
        for leg in LEGS:
            for memory_id, verdict in found.get(leg, {}).items():
                by_id.setdefault(memory_id, {})[leg] = verdict
        # Each memory's verdicts, read-only once: its candidate and its place below the
        # floor share them (fusion takes a read-only view as it is).
        floors = {memory_id: MappingProxyType(legs) for memory_id, legs in by_id.items()}
        faded: list[Candidate] = []
        ranked = fuse(
            admitted, active, self.settings, moment, decay=decay, floors=floors, faded=faded
        )
        # After fusion: the conversational neighbourhood, then the days the query names.
        ranked = self._in_context(ranked, moment, decay, active, turn, deadline)
        ranked = at_time(ranked, text, self.settings, moment)
        below = tuple(
            BelowFloor(active[i], floors[i])
            for i in ids
            if i in active and not any(v.cleared for v in by_id[i].values())
        )
        packed = pack(ranked, budget)
        placed = {candidate.memory.id for candidate in ranked}  # a neighbour may be placed
        result = RecallResult(
            block=packed.block,
            tokens=packed.tokens,
            budget=budget,
            items=packed.items,
            ranked=tuple(ranked),
            legs=status,
            elapsed_ms=(time.monotonic() - started) * 1000.0,
            below_floor=below,
            faded=tuple(c for c in faded if c.memory.id not in placed),
        )
        if mark and result.items:
            self._mark_retrieved(result.packed_ids, moment)
        return result

    def _in_context(
        self,
        ranked: list[Candidate],
        moment: datetime,
        decay: bool,
        known: Mapping[str, Memory],
        turn: _Turn,
        deadline: float,
    ) -> list[Candidate]:
        """The fused list with the neighbourhood of its top episodic hits (context.py); as
        it was when there is none or it cannot be read. The legs' threads have read most
        of it already; only a lender none of them read is read here."""
        lenders = [candidate.memory.id for candidate in seeds(ranked, self.settings)]
        if not lenders:
            return ranked
        if turn.neighbour_reads:
            wait(turn.neighbour_reads, timeout=max(0.0, deadline - time.monotonic()))
        around = turn.neighbours_of(lenders)
        # Not read by a leg (or its read failed, or is late): read here.
        missing = [seed for seed in lenders if seed not in around]
        if missing:
            try:
                around.update(
                    self.store.memories.around(missing, self.settings.neighbour_width, known)
                )
            except TimothyError as exc:
                log.warning("recall: the hits' neighbourhood could not be read: %s", _one_line(exc))
                return ranked
        return in_context(ranked, around, self.settings, moment, decay=decay)

    def _mark_retrieved(self, memory_ids: Sequence[str], now: datetime) -> None:
        """Stamp last_retrieved_at in the background; a failure is logged, never raised."""

        def stamp() -> None:
            try:
                self.store.memories.mark_retrieved(memory_ids, now=now)
            except Exception:
                log.exception("recall: stamping last_retrieved_at failed (ignored)")

        future = self._marks.submit(stamp)
        with self._pending_lock:
            self._pending.add(future)
        future.add_done_callback(self._forget)

    def _forget(self, future: Future[None]) -> None:
        with self._pending_lock:
            self._pending.discard(future)
