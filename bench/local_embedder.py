"""Benchmark: the offline local embedder (all-MiniLM-L6-v2 int8): load, bulk speed, query latency.

Run: .venv/bin/python bench/local_embedder.py [--count N] [--threads T]
Prints sentences per second (wall and per CPU-second), query latency percentiles and the
resident memory the model adds (Linux). The issue quotes about 150 sentences per CPU-second
and 18 ms per query on one slow core. `--shipped` runs the shipped model file instead of the
lean rewrite the app uses (see timothy/providers/local.py).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from timothy.providers.local import LocalEmbedder

VOCABULARY = (
    "owner prefers aisle seats long flights birthday march sister lives lisbon works data "
    "engineer bank dog called biscuit coffee black allergic peanuts meeting tuesday dentist "
    "project deadline friday mother visits summer holiday portugal train ticket booked"
)
WORDS = VOCABULARY.split()


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        lines = status.readlines()
    for line in lines:
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def sentences(count: int, rng: random.Random) -> list[str]:
    """Memory-like sentences of 6 to 24 words."""
    return [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 24))).capitalize() + "."
        for _ in range(count)
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=2000, help="sentences for the bulk run")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime threads")
    parser.add_argument(
        "--shipped", action="store_true", help="the shipped model file, not the lean rewrite"
    )
    args = parser.parse_args()
    rng = random.Random(7)
    embedder = LocalEmbedder(threads=args.threads, lean=not args.shipped)

    import onnxruntime
    import tokenizers  # noqa: F401 (their code is not the model's memory)

    del onnxruntime
    before = rss_mb()
    started = time.perf_counter()
    embedder.load()
    print(
        f"load (hash checks + session): {(time.perf_counter() - started) * 1000:.0f} ms, "
        f"resident +{rss_mb() - before:.0f} MB ({'shipped' if args.shipped else 'lean'} model)"
    )

    texts = sentences(args.count, rng)
    wall, cpu = time.perf_counter(), time.process_time()
    embedder.embed(texts)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        f"bulk: {args.count} sentences in {wall:.2f} s = {args.count / wall:.0f} sentences/s "
        f"({args.count / cpu:.0f} per CPU-second)"
    )

    queries = sentences(args.queries, rng)
    latencies = []
    for query in queries:
        started = time.perf_counter()
        embedder.embed_query(query)
        latencies.append((time.perf_counter() - started) * 1000)
    latencies.sort()
    print(f"resident after the bulk run: +{rss_mb() - before:.0f} MB")
    print(
        f"query: median {statistics.median(latencies):.1f} ms, "
        f"p95 {latencies[int(len(latencies) * 0.95) - 1]:.1f} ms, max {latencies[-1]:.1f} ms"
    )


if __name__ == "__main__":
    main()
