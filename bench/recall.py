"""Recall speed and memory on synthetic stores of 1k, 10k and 100k memories, 1536-d vectors.

Each size is measured in a fresh process, so its resident memory is recall's own. Recall
runs what a chat turn runs: the query's entity names are looked up, the vector leg's text
is "embedded" by a provider that hands back a ready vector (the local model's own time is
printed separately: it is the same at any store size), then the legs side by side, the
floor, fusion and packing. Interleaved with it, query by query: each leg on its own, and a
re-implementation of the article's path on the same store (its three queries one after
another: sqlite-vec's exact scan, full text, entity; then fusion and packing).

A large vector copy (from 128 MiB of float rows: 100k x 1,536, not 10k) keeps only int8 codes
and reads the float rows it re-scores from the store; `--float-rows-in-memory` keeps them in
memory too (as before the store had a table of one row per vector), for comparison.

Printed per size: p50 and p95 of each leg and of recall end to end, the overhead beyond the
slowest leg, the CPU time of a turn on all its threads, the ratio to the article's sequential
path, the process's resident memory; the
verdict comes from the median of several rounds. Targets (end to end p50): <= slowest leg +
1 ms and <= 4 ms at 1k, <= 8 ms at 10k, <= 30 ms at 100k; resident <= 250 MiB at 100k.
Run from the repository root:

    .venv/bin/python bench/recall.py [--sizes 1000,10000,100000] [--queries 200]
        [--rounds 5] [--keep DIR] [--no-embedder] [--float-rows-in-memory]

Building the 100k store takes a few minutes; `--keep DIR` keeps the stores for the next run.

With `--store URL` the same stores are kept on a PostgreSQL + pgvector server (a schema per
size, kept there for the next run; `--store pgserver` starts a throwaway server from the
pgserver wheel, or keeps it in `--keep DIR`), recall runs on the server engine, the vector
leg is checked against pgvector's own exact scan, and the article's path is its three
queries (shared/spec/memory-design.md) one after another on the same server, each timed.
Targets on a local server (end to end p50): <= 15 ms at 10k, <= 60 ms at 100k.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from timothy import heap  # noqa: E402
from timothy.retrieval import Recaller, RecallSettings  # noqa: E402
from timothy.retrieval.fusion import fuse  # noqa: E402
from timothy.retrieval.pack import pack  # noqa: E402
from timothy.store import Store  # noqa: E402
from timothy.store.engine import StoreEngine  # noqa: E402
from timothy.store.ids import new_id  # noqa: E402
from timothy.store.records import Memory, MemorySource, MemoryStatus, MemoryType  # noqa: E402
from timothy.store.vector_index import VectorIndex  # noqa: E402
from timothy.store.vectors import to_blob  # noqa: E402

if TYPE_CHECKING:
    from timothy.store.postgres import PostgresStore

# The server client (psycopg, pgvector: about 15 MiB) is imported only for `--store`: the
# SQLite sizes' resident memory is recall's own.
LOCAL_SERVER = "pgserver"  # as bench/server_store.py names a throwaway server

DIMENSION = 1536
MODEL = "bench/random-1536"
TARGET_P50_MS = {1_000: 4.0, 10_000: 8.0, 100_000: 30.0}
TARGET_OVERHEAD_MS = 1.0
TARGET_RSS_MIB = {100_000: 250.0}
NOW = datetime(2026, 1, 1, tzinfo=UTC)

FIRST = """Alice Bob Caroline Melanie Jon Gina John Maria Tim Audrey Andrew Nate Joanna Evan
Sam Deborah Jolene Calvin Dave James Zoë Priya Mateo Aiko Lars Ines Kofi Mei Omar Sofia Raj
Lena Hugo Nora Ravi Elena Tom Chloe Diego Hana Yusuf Clara Pablo Greta Ade Olga Wei Marta
Felix Amara""".split()  # noqa: SIM905
LAST = """Smith Garcia Okafor Tanaka Müller Rossi Novak Silva Kim Nguyen Haddad Costa Berg
Moreau Kowalski Patel Dubois Schmidt Lopez Yilmaz""".split()  # noqa: SIM905
PLACES = """Lisbon Porto Berlin Tokyo Kyoto Nairobi Oslo Madrid Seville Toronto Denver Austin
Boston Paris Lyon Prague Vienna Dublin Seoul Lima Quito Cairo Accra Hanoi Sydney Perth
Auckland Reykjavik Edinburgh Bristol""".split()  # noqa: SIM905
VERBS = """visited painted cooked planned booked bought fixed learned started finished
organised recommended borrowed returned photographed described adopted repaired cancelled
discussed""".split()  # noqa: SIM905
THINGS = """a pottery class|a marathon|a birthday dinner|an adoption agency|a guitar|a bike
trip|a camping weekend|a sourdough starter|a garden bed|a job interview|a dentist
appointment|a book club|a yoga retreat|a chess tournament|a flight to the coast|a new
apartment|a charity run|a painting of a sunset|a family reunion|a coding course|a vintage
camera|a hiking boot|a volunteer shift|a violin lesson|a board game night|a road trip|a
science fair|a wedding speech|a tax return|a puppy""".replace("\n", " ").split("|")
TIMES = """last week|yesterday|in spring|over the summer|on Saturday|two years ago|in
March|before the holidays|after work|during the trip""".replace("\n", " ").split("|")
PREFERENCES = """aisle seats on long flights|green tea in the morning|quiet hotels|window
seats on trains|spicy food|early meetings|paper books|cold showers|dark chocolate|walking
to work""".replace("\n", " ").split("|")
TYPES = [MemoryType.EPISODIC] * 5 + [MemoryType.SEMANTIC] * 3 + [MemoryType.PREFERENCE] * 2


def people(count: int) -> list[str]:
    names = [f"{f} {last}" for last in LAST for f in FIRST]
    return names[:count]


def memory_text(rng: random.Random, names: list[str]) -> tuple[str, list[str]]:
    who = rng.choice(names)
    if rng.random() < 0.15:
        return f"{who.split()[0]} prefers {rng.choice(PREFERENCES)}.", [who]
    other = rng.choice(names)
    place = rng.choice(PLACES)
    text = (
        f"{who} {rng.choice(VERBS)} {rng.choice(THINGS)} in {place} {rng.choice(TIMES)}"
        f" with {other.split()[0]}, and said it was {rng.choice(['great', 'hard', 'fun'])}."
    )
    return text, [who, other, place]


def query_text(rng: random.Random, names: list[str]) -> str:
    who = rng.choice(names)
    return rng.choice(
        [
            f"What did {who} do in {rng.choice(PLACES)}?",
            f"When did {who.split()[0]} {rng.choice(VERBS)[:-1]} {rng.choice(THINGS)}?",
            f"Does {who} like {rng.choice(PREFERENCES)}?",
            f"Tell me about {rng.choice(THINGS)} with {who} {rng.choice(TIMES)}",
        ]
    )


def unit_vectors(rng: np.random.Generator, count: int) -> np.ndarray:
    rows = rng.standard_normal((count, DIMENSION), dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def build(folder: Path, size: int, url: str | None = None) -> StoreEngine:
    """A store of `size` active memories with text, entities and 1536-d vectors (on the
    server at `url`, in a schema of its own, when given)."""
    store: StoreEngine = open_on_server(url, size) if url else Store.open(folder)
    if store.memories.count() == size:
        return store
    if store.memories.count():
        raise SystemExit(f"{folder} holds another store; remove it or pick another --keep.")
    started = time.perf_counter()
    rng = random.Random(size)
    vectors_rng = np.random.default_rng(size)
    names = people(max(50, size // 100))
    model = store.vectors.ensure_model(MODEL, DIMENSION)
    batch = 2_000
    for start in range(0, size, batch):
        memories = []
        for offset in range(min(batch, size - start)):
            text, entities = memory_text(rng, names)
            when = NOW - timedelta(days=rng.uniform(0, 120), seconds=start + offset)
            memories.append(
                Memory(
                    id=new_id(when),
                    type=rng.choice(TYPES),
                    content=text,
                    status=MemoryStatus.ACTIVE,
                    confidence=1.0,
                    source=MemorySource.IMPORT,
                    # Sessions of eight, so a turn's neighbourhood read (context.py) is timed.
                    session_id=f"bench-{(start + offset) // 8}",
                    supersedes=None,
                    superseded_by=None,
                    created_at=when,
                    last_confirmed_at=when,
                    last_retrieved_at=None,
                    entities=tuple(entities),
                )
            )
        with store.db.write() as conn:
            for memory in memories:
                store.memories.insert(conn, memory)
            vectors = unit_vectors(vectors_rng, len(memories))
            ids = [m.id for m in memories]
            store.vectors.put_many(model, zip(ids, vectors, strict=True), conn=conn)
    store.vectors.set_active_model(MODEL)
    store.db.compact_text_indexes()  # as an import of as many memories ends
    say(f"  built {size:,} memories in {time.perf_counter() - started:.0f} s")
    return store


class ReadyEmbedder:
    """The store's embedding model as a provider that answers at once: a ready vector per
    text (the same text, the same vector). Recall goes through its whole provider path (the
    query's names looked up, the rest "embedded") without the model's own time."""

    def __init__(self, vectors: np.ndarray) -> None:
        # Kept as one float32 matrix (as lists of Python floats, 200 of them take ~10 MB of
        # the process's resident memory that recall would be charged for).
        self.vectors = np.asarray(vectors, dtype=np.float32)

    @property
    def model_id(self) -> str:
        return MODEL

    @property
    def dimension(self) -> int:
        return DIMENSION

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        row = self.vectors[zlib.crc32(text.encode("utf-8")) % len(self.vectors)]
        return [float(x) for x in row]


def memory_status() -> dict[str, float]:
    """This process's resident memory now and at its peak (Linux /proc), in MiB."""
    found = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0]) / 1024
    return found


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000.0


def timed_cpu(call: Callable[[], object]) -> tuple[float, float]:
    """Wall and CPU milliseconds of a call, CPU counted on every thread of this process
    (a recall's legs run on threads of their own): on a busy machine the CPU time says what
    a recall costs, the wall time what it waited besides."""
    started, cpu = time.perf_counter(), time.process_time()
    call()
    return (time.perf_counter() - started) * 1000.0, (time.process_time() - cpu) * 1000.0


def sqlite_vec_knn(store: Store, vector: np.ndarray, k: int) -> list[tuple[str, float]]:
    """sqlite-vec's own exact k-NN (a full scan of its chunks) among active memories:
    (id, cosine distance), nearest first; the article's vector leg on our store."""
    model = store.vectors.active_model()
    assert model is not None
    with store.db.read() as conn:
        rows = conn.execute(
            f"SELECT m.id, v.distance FROM {model.table} v JOIN memories m ON m.seq = v.rowid "
            "WHERE v.embedding MATCH ? AND k = ? AND m.status = 'active' ORDER BY v.distance",
            (to_blob(vector, model.dimension), k),
        ).fetchall()
    return [(str(memory_id), float(distance)) for memory_id, distance in rows]


def article_path(store: Store, settings: RecallSettings, text: str, vector: np.ndarray) -> object:
    """The article's recall on our store, its three queries one after another: sqlite-vec's
    exact k-NN, full text, entity; the memories read once; fusion and packing."""
    limit = settings.per_leg_limit
    legs = {
        "vector": [memory_id for memory_id, _ in sqlite_vec_knn(store, vector, limit)],
        "text": store.search.text(text, limit),
        "entity": store.search.entity(text, limit),
    }
    memories = store.memories.get_many(i for ids in legs.values() for i in ids)
    return pack(fuse(legs, memories, settings, NOW), settings.token_budget)


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def measure(
    folder: Path, size: int, queries: int, rounds: int, article: int, float_rows: bool = False
) -> dict[str, object]:
    """One size, in this (fresh) process: what `main` prints, as JSON."""
    rng = random.Random(1)
    names = people(max(50, size // 100))
    texts = [query_text(rng, names) for _ in range(queries)]
    vectors = unit_vectors(np.random.default_rng(2), queries)
    settings = RecallSettings()
    limit = settings.per_leg_limit
    vector_limit = settings.leg_limit("vector")  # what a turn's vector leg asks for
    store = Store.open(folder)
    model = store.vectors.active_model()
    assert model is not None and store.memories.count() == size
    search = store.search
    if float_rows:  # the copy keeps the float rows beside the int8 codes (as before lean)
        search._indexes[model.id] = VectorIndex(model, float_rows_from_store=False)  # type: ignore[attr-defined]
    figures: dict[str, object] = {"load_before": os.getloadavg()[0]}
    with Recaller(store, settings, ReadyEmbedder(vectors)) as recaller:
        figures["lanes"] = recaller.lanes
        started = time.perf_counter()
        recaller.prepare().result()
        figures["prepare_s"] = time.perf_counter() - started
        # The vector leg's top hits must be sqlite-vec's exact cosine top hits.
        for vector in vectors[:3]:
            ours = search.vector(model, vector, vector_limit)
            exact = sqlite_vec_knn(store, vector, vector_limit)
            distance = dict(exact)
            for mine, (theirs, d) in zip(ours, exact, strict=True):
                # Only a floating-point tie may swap two places.
                if mine != theirs and abs(distance.get(mine, 2.0) - d) > 1e-6:
                    raise SystemExit("the vector leg's top hits differ from sqlite-vec's")
        for text in texts[:10]:  # warm caches (and embed the floor's background once)
            recaller.recall(text, now=NOW, mark=False)
        legs: dict[str, Callable[[str, np.ndarray], object]] = {
            "vector leg": lambda _, v: search.vector_hits(model, v, vector_limit),
            "text leg": lambda t, _: search.text_hits(t, limit),
            "entity leg": lambda t, _: search.entity(t, limit),
        }
        runs: list[dict[str, tuple[float, float]]] = []
        for _ in range(rounds):
            samples: dict[str, list[float]] = {
                name: [] for name in [*legs, "end to end", "cpu per turn"]
            }
            for text, vector in zip(texts, vectors, strict=True):
                for name, leg in legs.items():
                    samples[name].append(timed(lambda leg=leg, t=text, v=vector: leg(t, v)))
                wall, cpu = timed_cpu(lambda t=text: recaller.recall(t, now=NOW, mark=False))
                samples["end to end"].append(wall)
                samples["cpu per turn"].append(cpu)
            runs.append({name: percentiles(values) for name, values in samples.items()})
        figures["runs"] = runs
        figures.update(memory_status())
        index = search.index(model)  # type: ignore[attr-defined]
        figures["index_mib"] = index.nbytes / 2**20
        figures["coded"] = index.coded
        figures["lean"] = index.lean
        # The article's sequential path, paired query by query with ours.
        ours_ms, theirs_ms = [], []
        for text, vector in list(zip(texts, vectors, strict=True))[:article]:
            theirs_ms.append(timed(lambda t=text, v=vector: article_path(store, settings, t, v)))
            ours_ms.append(timed(lambda t=text: recaller.recall(t, now=NOW, mark=False)))
        figures["article"] = (statistics.median(theirs_ms), statistics.median(ours_ms))
    store.close()
    figures["load_after"] = os.getloadavg()[0]
    return figures


def embed_times(queries: int) -> dict[str, float]:
    """The local model's time to embed a query (the same at any store size)."""
    from timothy.providers.local import LocalEmbedder

    rng = random.Random(1)
    texts = [query_text(rng, people(1000)) for _ in range(queries)]
    embedder = LocalEmbedder()
    embedder.load()
    for text in texts[:10]:
        embedder.embed_query(text)
    p50, p95 = percentiles([timed(lambda t=text: embedder.embed_query(t)) for text in texts])
    return {"p50": p50, "p95": p95}


def child(args: list[str]) -> dict[str, object]:
    """Run this file in a fresh process; its last line of output is JSON."""
    found = subprocess.run(
        [sys.executable, __file__, *args], stdout=subprocess.PIPE, text=True, check=True
    )
    figures: dict[str, object] = json.loads(found.stdout.strip().splitlines()[-1])
    return figures


def held(figures: dict[str, object]) -> str:
    """What the vector copy holds."""
    if figures.get("lean"):
        return "int8 codes only, float rows read from the store"
    return "float32 rows and int8 codes" if figures["coded"] else "float32 rows"


def report(
    sizes: list[int],
    results: dict[int, dict[str, object]],
    targets: dict[int, float] = TARGET_P50_MS,
) -> None:
    """The table, the overhead, the article ratio, memory, and the verdicts."""
    cell = 24
    lanes = {figures.get("lanes") for figures in results.values() if "lanes" in figures}
    legs = (
        "the vector leg on one other thread, the text leg on the caller's, the entity leg "
        "after whichever ends first"
        if lanes == {1}
        else "the entity and vector legs on threads of their own, the text leg on the caller's"
        if lanes
        else "the entity and vector legs on other threads, the text leg on the caller's"
    )
    print(
        "\nend to end is what a chat turn runs: the query's entity names looked up, the rest"
        f" embedded (a ready vector), {legs}, each leg reading its hits' memories, the relevance"
        " floor, fusion, the neighbourhoods of the fused list's first episodic hits (one"
        " read) and their shares, the days the query names, packing; 'cpu per turn' is its"
        " CPU time on every thread"
    )
    print()
    print(f"{'':<20}" + "".join(f"{f'{s:,}':>{cell}}" for s in sizes))
    print(f"{'ms (median of rounds)':<20}" + "".join(f"{'p50':>12}{'p95':>12}" for _ in sizes))
    medians: dict[int, dict[str, tuple[float, float]]] = {}
    for size in sizes:
        runs = results[size]["runs"]
        assert isinstance(runs, list)
        medians[size] = {
            name: (
                statistics.median(run[name][0] for run in runs),
                statistics.median(run[name][1] for run in runs),
            )
            for name in runs[0]
        }
    names = ("vector leg", "text leg", "entity leg", "end to end")
    for name in (*names, "cpu per turn"):
        row = "".join(f"{medians[s][name][0]:>12.2f}{medians[s][name][1]:>12.2f}" for s in sizes)
        print(f"{name:<20}{row}")
    verdicts: list[str] = []
    for size in sizes:
        figures = results[size]
        runs = figures["runs"]
        assert isinstance(runs, list)
        overheads = [run["end to end"][0] - max(run[n][0] for n in names[:3]) for run in runs]
        e2e = [run["end to end"][0] for run in runs]
        overhead = statistics.median(overheads)
        p50 = statistics.median(e2e)
        theirs, ours = figures["article"]  # type: ignore[misc]
        print(
            f"\n{size:,} memories (load average {figures['load_before']:.2f} -> "
            f"{figures['load_after']:.2f}, 2 cores)"
        )
        print(f"  end to end p50 per round: {', '.join(f'{v:.2f}' for v in e2e)} ms")
        print(
            "  overhead beyond the slowest leg per round: "
            f"{', '.join(f'{v:.2f}' for v in overheads)} ms; median {overhead:.2f} ms"
        )
        print(
            f"  article's sequential path: p50 {theirs:.2f} ms vs ours {ours:.2f} ms on the "
            f"same queries: {theirs / ours:.1f}x"
        )
        print(
            f"  resident: {figures['VmRSS']:.0f} MiB after timing, "
            f"peak {figures['VmHWM']:.0f} MiB; vector copy {figures['index_mib']:.0f} MiB "
            f"({held(figures)});"
            f" loaded in {figures['prepare_s']:.1f} s"
        )
        target = targets.get(size)
        if target is not None:
            met = p50 <= target and overhead <= TARGET_OVERHEAD_MS
            verdicts.append(
                f"{size:,}: p50 {p50:.2f} ms (<= {target:g}: {'yes' if p50 <= target else 'no'}),"
                f" overhead {overhead:.2f} ms (<= {TARGET_OVERHEAD_MS:g}: "
                f"{'yes' if overhead <= TARGET_OVERHEAD_MS else 'no'}){'' if met else ' NOT MET'}"
            )
        rss_target = TARGET_RSS_MIB.get(size)
        if rss_target is not None:
            rss = float(figures["VmRSS"])  # type: ignore[arg-type]
            verdicts.append(
                f"{size:,}: resident {rss:.0f} MiB "
                f"(<= {rss_target:g}: {'yes' if rss <= rss_target else 'no'})"
            )
    if "embed" in results.get(0, {}):
        embed = results[0]["embed"]
        assert isinstance(embed, dict)
        print(
            f"\nlocal model (all-MiniLM-L6-v2 int8), embedding a query: p50 {embed['p50']:.1f} ms,"
            f" p95 {embed['p95']:.1f} ms (on top of end to end, at any size)"
        )
    print("\ntargets (median of rounds):")
    for line in verdicts:
        print("  " + line)


# -- the server store: bench/recall.py --store URL -------------------------------------------
# The same synthetic stores on a PostgreSQL + pgvector server, one schema per size, measured the
# same way, against the article's own three queries run one after another on that server.

SERVER_TARGET_P50_MS = {10_000: 15.0, 100_000: 60.0}
# What the article's stack measured (p50, as the issue quotes it).
ARTICLE_QUOTED = {10_000: "25-38 ms", 100_000: "221 ms with HNSW"}

# The article's queries (shared/spec/memory-design.md) on our tables: pgvector's cosine k-NN
# (exact, or HNSW where the table has such an index), the OR-query ranked by ts_rank, and the
# entity names the query contains as `position(lower(name) IN lower($1))`.
_ARTICLE_VECTOR_SQL = """
SELECT m.id FROM {table} v JOIN memories m ON m.seq = v.memory_seq WHERE m.status = 'active'
ORDER BY v.embedding <=> %(q)b LIMIT %(limit)s
"""
_ARTICLE_TEXT_SQL = """
WITH q AS (
    SELECT to_tsquery('english',
        string_agg('''' || replace(lexeme, '''', '''''') || '''', ' | ')) AS query
    FROM unnest(tsvector_to_array(to_tsvector('english', %(text)s))) AS lexeme
)
SELECT m.id FROM memories m, q
WHERE m.status = 'active' AND m.tsv @@ q.query
ORDER BY ts_rank(m.tsv, q.query) DESC
LIMIT %(limit)s
"""
_ARTICLE_ENTITY_SQL = """
SELECT m.id FROM memories m
WHERE m.status = 'active' AND EXISTS (
    SELECT 1 FROM memory_entities e
    WHERE e.memory_seq = m.seq AND position(lower(e.name) IN lower(%(text)s)) > 0)
ORDER BY m.created_at DESC
LIMIT %(limit)s
"""


def open_on_server(url: str, size: int) -> PostgresStore:
    """The bench store of `size` memories on a server: a schema of its own, kept there."""
    from server_store import open_schema

    return open_schema(url, f"timothy_bench_{size}")


def article_on_server(
    store: PostgresStore, settings: RecallSettings, text: str, vector: np.ndarray
) -> dict[str, float]:
    """The article's recall on the server: its three queries one after another on one
    connection, the memories read once, fusion and packing; each query's time and the total."""
    from pgvector import Vector

    model = store.vectors.active_model()
    assert model is not None
    limit = settings.per_leg_limit
    times: dict[str, float] = {}
    started = time.perf_counter()
    legs: dict[str, list[str]] = {}
    with store.db.read() as conn:
        for leg, sql, params in (
            ("vector", _ARTICLE_VECTOR_SQL.format(table=model.table), {"q": Vector(vector)}),
            ("text", _ARTICLE_TEXT_SQL, {"text": text}),
            ("entity", _ARTICLE_ENTITY_SQL, {"text": text}),
        ):
            leg_started = time.perf_counter()
            rows = conn.execute(sql, {**params, "limit": limit}).fetchall()
            legs[leg] = [str(row[0]) for row in rows]
            times[leg] = (time.perf_counter() - leg_started) * 1000.0
    memories = store.memories.get_many(i for ids in legs.values() for i in ids)
    pack(fuse(legs, memories, settings, NOW), settings.token_budget)
    times["total"] = (time.perf_counter() - started) * 1000.0
    return times


def measure_server(
    url: str, size: int, queries: int, rounds: int, article: int, lean: bool
) -> dict[str, object]:
    """One size on the server, in this (fresh) process: what `report_server` prints."""
    rng = random.Random(1)
    names = people(max(50, size // 100))
    texts = [query_text(rng, names) for _ in range(queries)]
    vectors = unit_vectors(np.random.default_rng(2), queries)
    settings = RecallSettings()
    limit = settings.per_leg_limit
    vector_limit = settings.leg_limit("vector")  # what a turn's vector leg asks for
    store = open_on_server(url, size)
    if lean:  # the server's copy is lean by default; --lean keeps it so
        store.search.float_rows_from_server = True
    model = store.vectors.active_model()
    assert model is not None and store.memories.count() == size
    search = store.search
    figures: dict[str, object] = {"load_before": os.getloadavg()[0]}
    with Recaller(store, settings, ReadyEmbedder(vectors)) as recaller:
        started = time.perf_counter()
        recaller.prepare().result()
        figures["prepare_s"] = time.perf_counter() - started
        # The vector leg's top hits must be pgvector's exact cosine top hits.
        for vector in vectors[:3]:
            ours = search.vector(model, vector, vector_limit)
            exact = store.vectors.nearest(model, vector, vector_limit)
            distance = dict(exact)
            for mine, (theirs, d) in zip(ours, exact, strict=True):
                if mine != theirs and abs(distance.get(mine, 2.0) - d) > 1e-6:
                    raise SystemExit("the vector leg's top hits differ from pgvector's exact scan")
        for text in texts[:10]:  # warm caches and prepared statements
            recaller.recall(text, now=NOW, mark=False)
        legs: dict[str, Callable[[str, np.ndarray], object]] = {
            "vector leg": lambda _, v: search.vector_hits(model, v, vector_limit),
            "text leg": lambda t, _: search.text_hits(t, limit),
            "entity leg": lambda t, _: search.entity(t, limit),
        }
        runs: list[dict[str, tuple[float, float]]] = []
        for _ in range(rounds):
            samples: dict[str, list[float]] = {
                name: [] for name in [*legs, "end to end", "cpu per turn"]
            }
            for text, vector in zip(texts, vectors, strict=True):
                for name, leg in legs.items():
                    samples[name].append(timed(lambda leg=leg, t=text, v=vector: leg(t, v)))
                wall, cpu = timed_cpu(lambda t=text: recaller.recall(t, now=NOW, mark=False))
                samples["end to end"].append(wall)
                samples["cpu per turn"].append(cpu)
            runs.append({name: percentiles(values) for name, values in samples.items()})
        figures["runs"] = runs
        figures.update(memory_status())
        copy = search.copy(model)
        figures["index_mib"] = copy.nbytes / 2**20
        figures["coded"] = copy.coded
        figures["lean"] = copy.lean
        # The article's sequential path, paired query by query with ours.
        paths: list[dict[str, float]] = []
        ours_ms: list[float] = []
        for text, vector in list(zip(texts, vectors, strict=True))[:article]:
            paths.append(article_on_server(store, settings, text, vector))
            ours_ms.append(timed(lambda t=text: recaller.recall(t, now=NOW, mark=False)))
        figures["article"] = (
            statistics.median(path["total"] for path in paths),
            statistics.median(ours_ms),
        )
        figures["article_legs"] = {
            leg: percentiles([path[leg] for path in paths]) for leg in ("vector", "text", "entity")
        }
        figures["article_total"] = percentiles([path["total"] for path in paths])
    store.close()
    figures["load_after"] = os.getloadavg()[0]
    return figures


def report_server(url: str, sizes: list[int], results: dict[int, dict[str, object]]) -> None:
    """The server's table: legs, end to end, overhead, the article's path, memory, verdicts."""
    from timothy.store.postgres.database import safe_location

    print(f"\nserver store at {safe_location(url)}")
    report(sizes, results, targets=SERVER_TARGET_P50_MS)
    print("\nthe article's three queries one after another on the same server (p50 / p95 ms):")
    for size in sizes:
        legs = results[size]["article_legs"]
        total = results[size]["article_total"]
        assert isinstance(legs, dict) and isinstance(total, list | tuple)
        parts = ", ".join(f"{leg} {p50:.1f} / {p95:.1f}" for leg, (p50, p95) in legs.items())
        print(
            f"  {size:,}: {parts}; with reading, fusion and packing {total[0]:.1f} / "
            f"{total[1]:.1f} (the article measured its stack at {ARTICLE_QUOTED.get(size, '?')})"
        )


def main_server(args: argparse.Namespace, sizes: list[int]) -> int:
    """`--store URL`: build (or reuse) the stores on the server, measure each size in a
    fresh process, report."""
    from server_store import server_url

    with server_url(args.store, args.keep) as url:
        results: dict[int, dict[str, object]] = {}
        for size in sizes:
            say(f"{size:,} memories on the server")
            build(Path(), size, url).close()
            results[size] = child(
                [
                    f"--measure-server={url}",
                    f"--sizes={size}",
                    f"--queries={args.queries}",
                    f"--rounds={args.rounds}",
                    f"--article={args.article}",
                    *(["--lean"] if args.lean else []),
                ]
            )
        if not args.no_embedder:
            results[0] = {"embed": child(["--embed-only", f"--queries={args.queries}"])}
        report_server(url, sizes, results)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated sizes")
    parser.add_argument("--queries", type=int, default=200, help="queries per round")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per size (verdict: median)")
    parser.add_argument("--article", type=int, default=50, help="queries for the article's path")
    parser.add_argument("--keep", type=Path, help="build (or reuse) the stores in this folder")
    parser.add_argument("--no-embedder", action="store_true", help="skip the local model's time")
    parser.add_argument(
        "--float-rows-in-memory",
        action="store_true",
        help="large copies keep the float rows in memory too (default: int8 codes only)",
    )
    parser.add_argument(
        "--store",
        metavar="URL",
        help=f"measure a PostgreSQL server store ({LOCAL_SERVER!r}: start one from its wheel)",
    )
    parser.add_argument("--lean", action="store_true", help=argparse.SUPPRESS)  # the default
    parser.add_argument("--measure-server", help=argparse.SUPPRESS)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--embed-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.embed_only:
        print(json.dumps(embed_times(args.queries)))
        return 0
    if args.measure_server:
        figures = measure_server(
            args.measure_server, sizes[0], args.queries, args.rounds, args.article, args.lean
        )
        print(json.dumps(figures))
        return 0
    if args.store:
        return main_server(args, sizes)
    if args.measure:
        # As the app's launcher does first thing (timothy/heap.py): the measured process's
        # heap is set up as recall's is in the app.
        heap.limit_arenas()
        figures = measure(
            args.measure,
            sizes[0],
            args.queries,
            args.rounds,
            args.article,
            args.float_rows_in_memory,
        )
        print(json.dumps(figures))
        return 0
    results: dict[int, dict[str, object]] = {}
    with tempfile.TemporaryDirectory(prefix="recall-bench-") as scratch:
        root = args.keep or Path(scratch)
        for size in sizes:
            say(f"{size:,} memories")
            build(root / f"store-{size}", size).close()
            results[size] = child(
                [
                    f"--measure={root / f'store-{size}'}",
                    f"--sizes={size}",
                    f"--queries={args.queries}",
                    f"--rounds={args.rounds}",
                    f"--article={args.article}",
                    *(["--float-rows-in-memory"] if args.float_rows_in_memory else []),
                ]
            )
    if not args.no_embedder:
        results[0] = {"embed": child(["--embed-only", f"--queries={args.queries}"])}
    report(sizes, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
