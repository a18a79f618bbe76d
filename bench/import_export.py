"""Benchmark: import and export of 10k memories with 1536-d embeddings (JSON Lines).

Run: .venv/bin/python bench/import_export.py [--count N] [--dim D]
Prints the time of each step; the issue's target is an import "well under a minute".
"""

from __future__ import annotations

import argparse
import io
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from timothy.store import Store
from timothy.store.transfer import export_memories, import_memories


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=1536)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    lines = []
    for i in range(args.count):
        vector = rng.standard_normal(args.dim).astype(np.float32)
        vector /= np.linalg.norm(vector)
        lines.append(
            json.dumps(
                {
                    "content": f"Memory number {i}: the owner mentioned topic {i % 97}.",
                    "entities": [f"Person {i % 13}"],
                    "embedding": vector.tolist(),
                    "embedding_model": "bench/1536",
                }
            )
        )
    size_mb = sum(len(line) for line in lines) / 1e6
    with tempfile.TemporaryDirectory() as folder, Store.open(Path(folder)) as store:
        started = time.perf_counter()
        count = import_memories(store, lines)
        imported = time.perf_counter() - started
        out = io.StringIO()
        started = time.perf_counter()
        export_memories(store, out)
        exported = time.perf_counter() - started
    print(f"{count} memories, {args.dim}-d vectors, {size_mb:.0f} MB of JSON Lines")
    print(f"import: {imported:.1f} s ({count / imported:.0f} memories/s)")
    print(f"export: {exported:.1f} s ({count / exported:.0f} memories/s)")


if __name__ == "__main__":
    main()
