"""Benchmark: near-duplicate grouping for consolidation at 10k and 50k memories, 1536-d vectors.

Run: .venv/bin/python bench/consolidation.py [--counts 10000 50000] [--dim 1536] [--runs 3]
                                             [--no-store]

For each size it plants clusters of near-duplicates (pairs to sixes, and chains) among random
vectors, then prints, as the median of --runs runs (BLAS on one thread, as in the app):
- grouping: `near_duplicate_groups` on a matrix already in memory, and the peak of memory it
  allocated on top of that matrix (tracemalloc, measured in a separate run);
- step: the whole near-duplicate step through a real store file (read every vector from
  sqlite-vec, group, load the grouped memories, apply the numbers guard) as a dry run of
  `consolidate`, and the peak of Python/numpy memory it allocated;
and checks that the groups found are exactly the planted ones.
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import numpy.typing as npt

from timothy.memory.consolidation import consolidate
from timothy.memory.near_duplicates import near_duplicate_groups
from timothy.store import Store
from timothy.store.ids import new_id
from timothy.store.records import Memory, MemorySource, MemoryStatus, MemoryType
from timothy.store.vector_index import single_threaded_blas

THRESHOLD = 0.95
NOW = datetime(2026, 1, 1, tzinfo=UTC)


def planted_matrix(
    count: int, dim: int, seed: int = 7
) -> tuple[npt.NDArray[np.float32], list[list[int]]]:
    """Random unit vectors with about 3% of rows in planted near-duplicate clusters."""
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((count, dim), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    # A random 1536-d direction is nearly orthogonal to all others (cosine ~ +-0.08), so
    # only the planted rows can reach 0.95. Noise of 0.1 keeps a copy at cosine ~ 0.995.
    clusters: list[list[int]] = []
    rows = rng.permutation(count)
    position = 0
    sizes = [2, 2, 2, 3, 3, 4, 6, -4]  # -4: a chain of 4 whose ends are not near-duplicates
    while position < count * 0.03:
        size = sizes[len(clusters) % len(sizes)]
        chain = size < 0
        members = [int(r) for r in rows[position : position + abs(size)]]
        position += abs(size)
        for previous, member in itertools.pairwise(members):
            noise = rng.standard_normal(dim).astype(np.float32)
            noise /= np.linalg.norm(noise)
            # A chain drifts step by step (cosine ~0.97 to the previous one, ~0.94 two
            # steps back); a cluster's copies stay near the first (cosine ~0.99).
            matrix[member] = (
                matrix[previous if chain else members[0]] + (0.25 if chain else 0.1) * noise
            )
        clusters.append(sorted(members))
    return matrix, sorted(clusters)


def median_seconds(action: Callable[[], object], runs: int) -> tuple[float, float, object]:
    """Median wall-clock and CPU seconds of `runs` runs (CPU time, summed over threads, shows
    the work done even when other programs share the machine), and the last result."""
    walls, cpus = [], []
    result: object = None
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        result = action()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus), result


def peak_mb(action: Callable[[], object]) -> float:
    tracemalloc.start()
    try:
        action()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 1e6


def fill_store(store: Store, matrix: npt.NDArray[np.float32]) -> None:
    model = store.vectors.ensure_model("bench/1536", matrix.shape[1])
    moment = NOW - timedelta(days=30)
    ids = [new_id(moment) for _ in range(len(matrix))]
    with store.db.write() as conn:
        for index, memory_id in enumerate(ids):
            store.memories.insert(
                conn,
                Memory(
                    id=memory_id,
                    type=MemoryType.SEMANTIC,
                    content=f"The owner mentioned topic {index}.",
                    status=MemoryStatus.ACTIVE,
                    confidence=0.8,
                    source=MemorySource.IMPORT,
                    session_id=None,
                    supersedes=None,
                    superseded_by=None,
                    created_at=moment,
                    last_confirmed_at=moment,
                    last_retrieved_at=None,
                ),
            )
        store.vectors.put_many(model, zip(ids, matrix, strict=True), conn=conn)
    store.vectors.set_active_model(model.name)


def bench(count: int, dim: int, runs: int, with_store: bool) -> None:
    single_threaded_blas()  # as consolidation (and recall) run it in the app
    matrix, planted = planted_matrix(count, dim)
    print(
        f"\n{count:,} memories, {dim}-d float32 ({matrix.nbytes / 1e6:.0f} MB of vectors), "
        f"{len(planted)} planted clusters ({sum(map(len, planted))} memories)"
    )

    seconds, cpu, groups = median_seconds(lambda: near_duplicate_groups(matrix, THRESHOLD), runs)
    found = sorted(group.tolist() for group in groups)  # type: ignore[attr-defined]
    assert found == planted, "the groups found differ from the planted ones"
    extra = peak_mb(lambda: near_duplicate_groups(matrix, THRESHOLD))
    print(
        f"  grouping (matrix in memory): {seconds:.2f} s ({cpu:.2f} s CPU) median of {runs}, "
        f"peak {extra:.0f} MB allocated on top of the matrix; {len(found)} groups, all planted"
    )
    if not with_store:
        return

    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        with Store.open(Path(folder)) as store:
            fill_store(store, matrix)
        filled = time.perf_counter() - started
        with Store.open(Path(folder)) as store:

            def step() -> object:
                return consolidate(store, None, now=NOW, dry_run=True)

            seconds, cpu, report = median_seconds(step, runs)
            peak = peak_mb(step)
        left = report.left_alone  # type: ignore[attr-defined]
        assert len(left) == len(planted), "the step did not find every planted group"
        print(
            f"  whole step via the store (dry run: read vectors, group, load, guard): "
            f"{seconds:.2f} s ({cpu:.2f} s CPU) median of {runs}, peak {peak:.0f} MB allocated "
            f"(store filled in {filled:.0f} s)"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--counts", type=int, nargs="+", default=[10_000, 50_000])
    parser.add_argument("--dim", type=int, default=1536)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-store", action="store_true", help="skip the store-backed step")
    args = parser.parse_args()
    print(
        f"near-duplicate threshold {THRESHOLD}; numpy {np.__version__}; {os.cpu_count()} CPUs; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    for count in args.counts:
        bench(count, args.dim, args.runs, not args.no_store)
    max_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
    print(f"\nprocess peak resident memory over the whole benchmark: {max_rss:.0f} MB")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} (other programs share the CPUs)")


if __name__ == "__main__":
    main()
