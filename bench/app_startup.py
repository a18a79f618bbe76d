"""Benchmark: starting the desktop app on a big store (10k memories, 200 conversations).

Run: .venv/bin/python bench/app_startup.py [--memories N] [--conversations N] [--runs N]

Fills a throwaway store once, then starts the real window in a fresh process per run
(offscreen) and prints, per run and as the median: time to the window shown, time until it
is usable (the chat engine built, the conversation list, the confirmation queue, the first
page of Browse and the counts all loaded), and the process's resident memory at that point
and its peak. The issue asks that this "stays quick"; no threshold is asserted here.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
START = time.perf_counter()  # as early as possible: imports count towards start-up
WORDS = ("lorem", "ipsum", "dolor", "sit", "amet", "tea", "garden", "train", "Porto")


def rss_mb() -> float:
    """The process's resident memory now (Linux /proc), in MB."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def peak_mb() -> float:
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def fill(data: Path, memories: int, conversations: int, messages: int) -> None:
    sys.path.insert(0, str(ROOT))
    from tests.app.many_memories import add_many
    from timothy.store import MemoryStatus, Store
    from timothy.store.records import utc_now

    rng = random.Random(3)
    now = utc_now()
    with Store.open(data) as store:
        add_many(store, memories - memories // 20)
        add_many(store, memories // 20, status=MemoryStatus.STAGED, seed=11)
        with store.db.write():  # one transaction: the inner writes become savepoints
            for number in range(conversations):
                moment = now - timedelta(hours=rng.randrange(0, 24 * 365))
                session = store.sessions.create(title=f"Conversation {number}", now=moment)
                for turn in range(messages):
                    role = "user" if turn % 2 == 0 else "assistant"
                    text = " ".join(rng.choices(WORDS, k=40))
                    store.sessions.add_message(
                        session.id, role, text, now=moment + timedelta(minutes=turn)
                    )


def measure(data: Path) -> dict[str, float]:
    """One start of the real window on `data` (runs in its own process)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from app.application import warm_up
    from app.look import theme
    from app.mainwindow.main_window import MainWindow
    from timothy.settings import OpenAISettings, Settings
    from timothy.store import Store

    imported = time.perf_counter() - START
    warming = warm_up()  # as run_app does
    app = QApplication(sys.argv[:1])
    theme.apply(app)
    store = Store.open(data)
    # A configured chat model (a local server address: building the provider makes no
    # request) so the real chat engine is built at start-up, as in the app. Consolidation
    # has its own benchmark and starts later than this measures.
    settings = Settings(
        chat_provider="openai", openai=OpenAISettings(base_url="http://127.0.0.1:9/v1")
    )
    window = MainWindow(
        store, settings=settings, probe_local_servers=lambda: [], consolidation_delay_ms=None
    )
    started = [False]
    window.started.connect(lambda: started.__setitem__(0, True))
    # The longest the GUI thread went without running a 10 ms timer: how frozen it felt.
    gaps: list[float] = []
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    ticker = QTimer()
    ticker.setInterval(10)
    ticker.timeout.connect(tick)
    warming.join()  # as run_app does
    ticker.start()
    window.show()
    app.processEvents()
    shown = time.perf_counter() - START
    deadline = time.monotonic() + 60
    browser = window.memory_pane.browser
    queue = window.memory_pane.queue
    assert browser is not None and queue is not None
    while time.monotonic() < deadline:
        app.processEvents()
        loaded = (
            started[0]
            and window.assistant is not None
            and window.assistant.setup is not None
            and not window.workers.busy
            and browser.model.rowCount() > 0
            and len(window.sidebar.model.conversations()) > 0
            and len(queue.model.memories) > 0
        )
        if loaded:
            break
    usable = time.perf_counter() - START
    ticker.stop()
    figures = {
        "longest_stall_ms": max(gaps[1:], default=0.0) * 1000,
        "imports_s": imported,
        "shown_s": shown,
        "usable_s": usable,
        "rss_usable_mb": rss_mb(),
    }
    # Scrolling Browse to the end pages in every memory: the worst case for memory use.
    scroll_start = time.perf_counter()
    while browser.model.canFetchMore() or browser.model.loading:
        browser.view.scrollToBottom()
        app.processEvents()
        if time.monotonic() > deadline:
            break
    figures["browse_all_s"] = time.perf_counter() - scroll_start
    figures["rows_listed"] = float(browser.model.rowCount())
    figures["rss_after_browse_all_mb"] = rss_mb()
    figures["peak_mb"] = peak_mb()
    window.close()
    store.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--messages", type=int, default=10, help="per conversation")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        sys.path.insert(0, str(ROOT))
        print(json.dumps(measure(args.measure)))
        return
    folder = Path(tempfile.mkdtemp(prefix="timothy-bench-"))
    try:
        run_all(args, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_all(args: argparse.Namespace, folder: Path) -> None:
    env = dict(os.environ)
    for name in ("DATA", "CONFIG", "CACHE", "LOG"):
        env[f"TIMOTHY_{name}_DIR"] = str(folder / name.lower())
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    os.environ.update(env)
    data = folder / "data"
    began = time.perf_counter()
    fill(data, args.memories, args.conversations, args.messages)
    size = (data / "timothy.db").stat().st_size / 1e6
    print(
        f"store: {args.memories:,} memories ({args.memories // 20:,} staged), "
        f"{args.conversations} conversations x {args.messages} messages, "
        f"{size:.1f} MB, filled in {time.perf_counter() - began:.1f} s"
    )
    runs: list[dict[str, float]] = []
    for run in range(args.runs):
        result = subprocess.run(
            [sys.executable, __file__, "--measure", str(data)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
        )
        figures = json.loads(result.stdout.strip().splitlines()[-1])
        runs.append(figures)
        print(
            f"run {run + 1}: imports {figures['imports_s']:.2f} s, window shown "
            f"{figures['shown_s']:.2f} s, usable {figures['usable_s']:.2f} s (longest GUI stall "
            f"{figures['longest_stall_ms']:.0f} ms), "
            f"RSS {figures['rss_usable_mb']:.0f} MB; Browse paged through "
            f"{figures['rows_listed']:,.0f} rows in {figures['browse_all_s']:.2f} s, "
            f"RSS then {figures['rss_after_browse_all_mb']:.0f} MB "
            f"(peak {figures['peak_mb']:.0f} MB)"
        )
    for key, label, unit in (
        ("shown_s", "window shown", "s"),
        ("usable_s", "usable", "s"),
        ("longest_stall_ms", "longest GUI stall while loading", "ms"),
        ("rss_usable_mb", "RSS when usable", "MB"),
        ("rss_after_browse_all_mb", "RSS after browsing all", "MB"),
    ):
        print(f"median {label}: {statistics.median(r[key] for r in runs):.2f} {unit}")


if __name__ == "__main__":
    main()
