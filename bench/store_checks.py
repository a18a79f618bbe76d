"""What the damage checks and a backup cost on stores of 10k and 100k memories (1536-d vectors).

Prints, per size: the file's size, `PRAGMA quick_check` (run at every open: on a thread in the
app, before the command in the CLI), `PRAGMA integrity_check` (doctor), and a verified backup
(online copy + integrity_check of the copy). Run from the repository root:

    .venv/bin/python bench/store_checks.py [--sizes 10000,100000] [--keep DIR]

The stores are the recall benchmark's (`bench/recall.py`); `--keep DIR` reuses them.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.recall import build  # noqa: E402
from timothy.store import DamageCheck, Store  # noqa: E402
from timothy.store.backups import make_backup  # noqa: E402


def timed(action: Callable[[], object], runs: int = 3) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def measure(folder: Path, size: int) -> None:
    build(folder, size).close()
    path = folder / "timothy.db"
    print(f"{size:,} memories, {path.stat().st_size / 2**20:,.0f} MiB", flush=True)
    with Store.open(folder, check=DamageCheck.OFF) as store:
        quick = timed(store.db.quick_check)
        full = timed(store.db.integrity_check)
        print(f"  quick_check      {quick * 1000:8.0f} ms (median of 3)", flush=True)
        print(f"  integrity_check  {full * 1000:8.0f} ms (median of 3)", flush=True)
        with tempfile.TemporaryDirectory() as target:
            started = time.perf_counter()
            make_backup(store, Path(target) / "copy.db", now=datetime.now(UTC))
            print(f"  verified backup  {(time.perf_counter() - started) * 1000:8.0f} ms")
    load = os.getloadavg()
    print(f"  load average {load[0]:.1f} on {os.cpu_count()} cores", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--keep", metavar="DIR", help="build (or reuse) the stores here")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(args.keep) if args.keep else Path(scratch)
        for size in sizes:
            measure(base / str(size), size)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
