"""Recall speed on synthetic stores of 1k, 10k and 100k memories with 1536-d vectors, on
either engine: the shared PostgreSQL one (`--store URL`) or the file, measured the same way
(`bench/recall.py` is the file's own, finer benchmark: a fresh process per size, resident
memory, the article's path; this one keeps the engines side by side).

Prints p50 and p95 of each leg on its own and of recall end to end (legs side by side,
fusion, packing), against the targets: end to end p50 <= 5 ms at 1k, <= 10 ms at 10k,
<= 40 ms at 100k. Also checks that the vector leg's top 30 equals sqlite-vec's exact scan.
Run from the repository root:

    .venv/bin/python bench/recall_server.py [--sizes 1000,10000,100000] [--queries 200]
    .venv/bin/python bench/recall_server.py --store postgresql://me@localhost/timothy_bench

Building the 100k store takes a few minutes; `--keep DIR` keeps the stores for the next run.
With `--store URL` the stores are on that PostgreSQL server (one schema per size, kept there
for the next run), recall runs against the shared engine, and the vector check compares the
vector leg with pgvector's own exact scan.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from timothy.retrieval import Recaller, RecallSettings  # noqa: E402
from timothy.store import Store  # noqa: E402
from timothy.store.engine import StoreEngine  # noqa: E402
from timothy.store.ids import new_id  # noqa: E402
from timothy.store.postgres import PostgresStore  # noqa: E402
from timothy.store.records import Memory, MemorySource, MemoryStatus, MemoryType  # noqa: E402

DIMENSION = 1536
MODEL = "bench/random-1536"
TARGET_P50_MS = {1_000: 5.0, 10_000: 10.0, 100_000: 40.0}
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


def open_on_server(url: str, size: int) -> PostgresStore:
    """The bench store of `size` memories on a server: a schema of its own."""
    import psycopg

    schema = f"timothy_bench_{size}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    separator = "&" if "?" in url else "?"
    options = f"-c%20search_path%3D{schema}%2Cpublic"
    return PostgresStore(f"{url}{separator}options={options}", follow_changes=False)


def build(folder: Path, size: int, url: str | None = None) -> StoreEngine:
    """A store of `size` active memories with text, entities and 1536-d vectors."""
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
                    session_id=None,
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
    print(f"  built {size:,} memories in {time.perf_counter() - started:.0f} s", flush=True)
    return store


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(0.95 * (len(ordered) - 1))]


def measure(store: StoreEngine, size: int, queries: int) -> dict[str, tuple[float, float]]:
    rng = random.Random(1)
    names = people(max(50, size // 100))
    texts = [query_text(rng, names) for _ in range(queries)]
    vectors = unit_vectors(np.random.default_rng(2), queries)
    model = store.vectors.active_model()
    assert model is not None
    search = store.search
    limit = RecallSettings().per_leg_limit
    figures: dict[str, tuple[float, float]] = {}
    with Recaller(store, RecallSettings()) as recaller:
        started = time.perf_counter()
        recaller.prepare().result()
        print(f"  vectors into memory: {time.perf_counter() - started:.1f} s", flush=True)
        # The in-memory copy must answer what sqlite-vec's exact scan answers.
        for vector in vectors[:3]:
            ours = search.vector(model, vector, limit)
            exact = store.vectors.nearest(model, vector, limit)
            distance = dict(exact)
            for mine, (theirs, d) in zip(ours, exact, strict=True):
                # Only a floating-point tie may swap two places.
                if mine != theirs and abs(distance.get(mine, 2.0) - d) > 1e-6:
                    raise SystemExit("the vector leg's top 30 differs from sqlite-vec's")
        print("  vector leg top 30 = sqlite-vec exact cosine top 30 (3 queries)")
        for text, vector in zip(texts[:10], vectors[:10], strict=True):  # warm caches
            recaller.recall(text, query_vector=vector, now=NOW, mark=False)
        legs: dict[str, Callable[[str, np.ndarray], object]] = {
            "vector leg": lambda _, v: search.vector(model, v, limit),
            "text leg": lambda t, _: search.text(t, limit),
            "entity leg": lambda t, _: search.entity(t, limit),
            "end to end": lambda t, v: recaller.recall(t, query_vector=v, now=NOW, mark=False),
        }
        print(f"  machine load before timing (1-minute average): {os.getloadavg()[0]:.2f}")
        for name, leg in legs.items():
            samples = []
            for text, vector in zip(texts, vectors, strict=True):
                started = time.perf_counter()
                leg(text, vector)
                samples.append((time.perf_counter() - started) * 1000.0)
            figures[name] = percentiles(samples)
        print(f"  machine load after timing: {os.getloadavg()[0]:.2f} (2 cores)")
        if not isinstance(store, Store):
            return figures
        index = search.index(model)  # type: ignore[attr-defined]
        print(
            f"  in-memory vectors: {index.size:,} rows, {index.nbytes / 2**20:,.0f} MiB"
            f" (float32 rows{' and their int8 codes' if index.coded else ''})"
        )
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated sizes")
    parser.add_argument("--queries", type=int, default=200, help="queries per size")
    parser.add_argument("--keep", type=Path, help="build (or reuse) the stores in this folder")
    parser.add_argument("--store", metavar="URL", help="build (or reuse) them on this server")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    results: dict[int, dict[str, tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="recall-bench-") as scratch:
        root = args.keep or Path(scratch)
        for size in sizes:
            print(f"{size:,} memories", flush=True)
            store = build(root / f"store-{size}", size, args.store)
            try:
                results[size] = measure(store, size, args.queries)
            finally:
                store.close()
    print()
    print(f"{'':<12}" + "".join(f"{f'{s:,}':>22}" for s in sizes))
    print(f"{'ms':<12}" + "".join(f"{'p50':>11}{'p95':>11}" for _ in sizes))
    for name in ("vector leg", "text leg", "entity leg", "end to end"):
        row = "".join(f"{results[s][name][0]:>11.2f}{results[s][name][1]:>11.2f}" for s in sizes)
        print(f"{name:<12}{row}")
    verdicts = []
    for size in sizes:
        target = TARGET_P50_MS.get(size)
        if target is not None:
            p50 = results[size]["end to end"][0]
            verdicts.append(
                f"{size:,}: p50 {p50:.1f} ms {'<=' if p50 <= target else '>'} {target:g} ms"
            )
    if verdicts:
        print("targets (end to end p50): " + "; ".join(verdicts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
