"""Benchmark: starting the desktop app on a big store (10k memories, 200 conversations).

Run: .venv/bin/python bench/app_startup.py [--memories N] [--conversations N] [--runs N]
     [--against DIR]

Fills a throwaway store once (memories with vectors of the local embedder, so nothing is
re-embedded at start), then starts the real window in a fresh process per run (offscreen),
in the order the launcher does, with the local embedder chosen and a chat model on a fake
OpenAI server on 127.0.0.1 (in a process of its own, started before the measured process: it
stands for another program, already running; starting it took ~250 ms, which earlier versions
of this bench counted in "shown" and "usable"). Per run and as medians it prints:
- window shown: the window is on screen (painted once);
- usable: the composer accepts text and the conversation list shows the conversations (a
  message sent before the chat engine is built waits for it);
- loaded: everything the start-up loads has arrived (the chat engine, the local embedder,
  the confirmation queue, the first page of Browse, the counts, the model list, Pygments'
  lexers) and no worker is busy;
- the longest the GUI thread went without running a 10 ms timer, from shown to loaded, and
  during one turn (a long Markdown reply with a code block, streamed, with recall); in
  brackets, that gap less the time the thread sat ready but waiting for a CPU (Linux), which
  on a shared machine is the scheduler's, not the app's; and the GUI thread's own CPU time
  in the longest gap (what is neither is waiting for the GIL another thread holds);
- the longest pause of Python's garbage collector (on any thread: it holds the GIL) and
  the number of full collections, from shown to loaded and during the turn, and how long a
  full collection takes after Browse has paged in every memory;
- the longest GUI stall while Browse pages through every memory and is scrolled back to
  the top a screen at a time;
- resident memory once idle after loading, and after that browsing.
`--against DIR` runs another checkout's code (e.g. a worktree of main) in turn with this
one, run by run, so both see the same load. The machine's load average is printed. Python's
bytecode caches are written first, as an installed app has them. No threshold is asserted.
"""

from __future__ import annotations

import argparse
import gc
import inspect
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
    import numpy as np

    from tests.app.many_memories import add_many
    from timothy.providers.local import DIMENSION, MODEL_ID
    from timothy.store import MemoryStatus, Store
    from timothy.store.records import utc_now

    rng = random.Random(3)
    now = utc_now()
    with Store.open(data) as store:
        add_many(store, memories - memories // 20)
        add_many(store, memories // 20, status=MemoryStatus.STAGED, seed=11)
        # Vectors of the local model for the active memories (random: recall's quality is
        # not measured here), so the start-up finds nothing to re-embed.
        model = store.vectors.ensure_model(MODEL_ID, DIMENSION)
        with store.db.read() as conn:
            ids = [str(row[0]) for row in conn.execute("SELECT id FROM memories")]
        vectors = np.random.default_rng(5).standard_normal((len(ids), DIMENSION))
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        store.vectors.put_many(model, zip(ids, vectors.astype(np.float32), strict=True))
        store.vectors.set_active_model(MODEL_ID)
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


REPLY = (
    "Here is what I found, in **three** parts:\n\n"
    + "".join(
        f"{n}. A point about *tea* and the `garden`, with some more words.\n" for n in range(8)
    )
    + "\n```python\n"
    + "".join(
        f"def step_{n}(x: int) -> int:\n    return x * {n} + 1  # line {n}\n" for n in range(40)
    )
    + "```\n\nAnd a closing paragraph that wraps across the width of the chat column. " * 3
)


def run_queue_wait() -> float:
    """Seconds this thread has spent ready to run but waiting for a CPU (Linux's schedstat;
    0 elsewhere): on a shared machine, the scheduler's part of a gap, not the app's."""
    try:
        with open("/proc/thread-self/schedstat", encoding="ascii") as stats:
            return int(stats.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


class StallMeter:
    """The longest the GUI thread went without running a 10 ms timer: how frozen it felt.
    Also that gap less the time the thread waited for a CPU meanwhile (the app's own part),
    and the CPU time the GUI thread itself spent in it: the rest of a long gap is waiting,
    for a CPU or for the GIL another thread held (a C extension's long call)."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.gaps: list[tuple[float, float, float]] = []
        self.last = (time.perf_counter(), run_queue_wait(), time.thread_time())
        self.timer = QTimer()
        self.timer.setInterval(10)
        self.timer.timeout.connect(self._tick)

    def _tick(self) -> None:
        now = (time.perf_counter(), run_queue_wait(), time.thread_time())
        gap = now[0] - self.last[0]
        own = max(gap - (now[1] - self.last[1]), 0.0)
        self.gaps.append((gap, own, now[2] - self.last[2]))
        self.last = now

    def start(self) -> None:
        self.gaps.clear()
        self.last = (time.perf_counter(), run_queue_wait(), time.thread_time())
        self.timer.start()

    def longest_ms(self) -> tuple[float, float, float]:
        """(the longest gap, the longest gap less its wait for a CPU, the GUI thread's CPU
        time in the longest gap), in ms."""
        self.timer.stop()
        longest = max(self.gaps, default=(0.0, 0.0, 0.0))
        return (
            longest[0] * 1000,
            max((own for _, own, _ in self.gaps), default=0.0) * 1000,
            longest[2] * 1000,
        )


class GcMeter:
    """The longest pause of Python's cyclic garbage collector (any generation, on any
    thread: it holds the GIL, so every other thread, the GUI's too, waits it out), and the
    number of full (generation 2) collections, since `start`."""

    def __init__(self) -> None:
        self.began = 0.0
        self.longest = 0.0
        self.full = 0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self.began = time.perf_counter()
            return
        self.longest = max(self.longest, time.perf_counter() - self.began)
        self.full += info["generation"] == 2

    def start(self) -> None:
        self.longest, self.full = 0.0, 0

    def figures(self) -> tuple[float, float]:
        """(the longest pause in ms, the full collections)."""
        return self.longest * 1000, float(self.full)


class FakeServerProcess:
    """The fake OpenAI server in a process of its own, answering the turn with REPLY: it
    stands for OpenAI's or a local model server, so its memory (http.server, email, ssl:
    ~9 MB) is not the app's. Stopped when its input closes."""

    SCRIPT = (
        "import sys\n"
        "from bench.app_startup import REPLY\n"
        "from tests.fakes.openai_server import OpenAIServer\n"
        "server = OpenAIServer().start()\n"
        "server.reply(REPLY, interval=0.002)\n"
        "print(server.base_url, flush=True)\n"
        "sys.stdin.read()\n"
        "server.stop()\n"
    )

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", self.SCRIPT],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        self.base_url = self.process.stdout.readline().strip()
        if not self.base_url:
            raise SystemExit("the fake OpenAI server did not start")

    def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)


def measure(data: Path, code: Path, server_url: str | None = None) -> dict[str, float]:
    """One start of the real window on `data`, with the app's code from `code`, its chat
    model on the fake server at `server_url` (started here when None)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sys.path.insert(0, str(code))
    # As the launcher does (the real entry point, with the CLI it also is): newer code does
    # some work before Qt is imported (`before_qt`: the token encoding's warm-up among it).
    import app.launcher

    before_qt = getattr(app.launcher, "before_qt", None)
    warming = before_qt() if before_qt is not None else None
    from PySide6.QtWidgets import QApplication

    from app.application import warm_up
    from app.look import theme
    from app.mainwindow.main_window import MainWindow
    from timothy.settings import OpenAISettings, Settings
    from timothy.store import Store

    imported = time.perf_counter() - START
    warming = warming or warm_up()  # as run_app does
    app = QApplication(sys.argv[:1])
    theme.apply(app)
    store = Store.open(data)
    server = FakeServerProcess() if server_url is None else None
    base_url = server.base_url if server is not None else server_url
    settings = Settings(
        chat_provider="openai",
        openai=OpenAISettings(base_url=base_url, timeout_seconds=5.0, chat_model="gpt-4o-mini"),
        embedding_provider="local",
    )
    # As run_app: newer windows warm Pygments up themselves, after start-up's other loads.
    warms_itself = "warm_up_code" in inspect.signature(MainWindow).parameters
    window = MainWindow(
        store,
        settings=settings,
        probe_local_servers=lambda: [],
        consolidation_delay_ms=None,
        **({"warm_up_code": True} if warms_itself else {}),
    )
    meter = StallMeter()
    collector = GcMeter()
    warming.join()  # as run_app does
    try:  # as newer run_apps do
        from app.collector import set_aside_start
    except ImportError:
        pass
    else:
        set_aside_start(window.start_loads)
    try:  # as newer run_apps do
        from app.application import responsive_threads
    except ImportError:
        pass
    else:
        responsive_threads()
    meter.start()
    collector.start()
    window.show()
    app.processEvents()
    shown = time.perf_counter() - START
    if not warms_itself:
        from app.transcript.code_highlighter import warm_up as warm_up_highlighting

        window.jobs.run(window, warm_up_highlighting, "preparing code highlighting")
    deadline = time.monotonic() + 120
    browser = window.memory_pane.browser
    queue = window.memory_pane.queue
    assert browser is not None and queue is not None
    composer = window.chat.composer

    def usable() -> bool:
        return composer.input.isEnabled() and len(window.sidebar.model.conversations()) > 0

    def loaded() -> bool:
        assistant = window.assistant
        setup = assistant.setup if assistant is not None else None
        return (
            setup is not None
            and bool(getattr(setup.embedder, "loaded", True))
            and not window.workers.busy
            and not window.network.busy
            and not window.jobs.busy  # Pygments' warm-up, in older windows
            and getattr(getattr(window, "start_loads", None), "done", True)
            and browser.model.rowCount() > 0
            and len(queue.model.memories) > 0
            and usable()
        )

    usable_at = None
    while time.monotonic() < deadline and not loaded():
        app.processEvents()
        if usable_at is None and usable():
            usable_at = time.perf_counter() - START
    loaded_at = time.perf_counter() - START
    figures = {
        "imports_s": imported,
        "shown_s": shown,
        "usable_s": usable_at if usable_at is not None else loaded_at,
        "loaded_s": loaded_at,
    }
    (
        figures["stall_start_ms"],
        figures["stall_start_own_ms"],
        figures["stall_start_cpu_ms"],
    ) = meter.longest_ms()
    figures["gc_start_ms"], figures["gc_start_full"] = collector.figures()
    # Idle for a second (a settled window), then its resident memory.
    settle = time.monotonic() + 1.0
    while time.monotonic() < settle:
        app.processEvents()
    figures["rss_idle_mb"] = rss_mb()

    # One turn: recall, a streamed Markdown reply with a code block, title and extraction
    # (the server was given the reply when it started).
    meter.start()
    collector.start()
    finished = [False]
    window.chat.turn_finished.connect(lambda: finished.__setitem__(0, True))
    composer.input.setPlainText("What do I know about tea in the garden?")
    composer.submit()
    began = time.perf_counter()
    while time.monotonic() < deadline and not finished[0]:
        app.processEvents()
    figures["turn_s"] = time.perf_counter() - began
    (
        figures["stall_turn_ms"],
        figures["stall_turn_own_ms"],
        figures["stall_turn_cpu_ms"],
    ) = meter.longest_ms()
    figures["gc_turn_ms"], figures["gc_turn_full"] = collector.figures()

    # Scrolling Browse to the end pages in every memory: the worst case for memory use.
    window.memory_pane.tabs.setCurrentWidget(browser)
    meter.start()
    scroll_start = time.perf_counter()
    while browser.model.canFetchMore() or browser.model.loading:
        browser.view.scrollToBottom()
        app.processEvents()
        if time.monotonic() > deadline:
            break
    figures["browse_all_s"] = time.perf_counter() - scroll_start
    figures["rows_listed"] = float(browser.model.rowCount())
    # Then back up to the top a screen at a time (rows let go are read again, where the
    # list holds only those around what it shows), waiting for the work to finish.
    bar = browser.view.verticalScrollBar()
    while bar.value() > bar.minimum() and time.monotonic() < deadline:
        bar.setValue(bar.value() - bar.pageStep())
        app.processEvents()
    while window.workers.busy and time.monotonic() < deadline:
        app.processEvents()
    figures["stall_browse_ms"], figures["stall_browse_own_ms"], _ = meter.longest_ms()
    figures["rss_after_browse_all_mb"] = rss_mb()
    # What a full collection would walk now (the longest a later one can hold the GIL).
    began = time.perf_counter()
    gc.collect()
    figures["gc_full_after_browse_ms"] = (time.perf_counter() - began) * 1000
    figures["peak_mb"] = peak_mb()
    window.close()
    store.close()
    if server is not None:
        server.stop()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--messages", type=int, default=10, help="per conversation")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--against", type=Path, help="another checkout, run in turn with this one")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--code", type=Path, default=ROOT, help=argparse.SUPPRESS)
    parser.add_argument("--server", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.code.resolve(), args.server)))
        return
    folder = Path(tempfile.mkdtemp(prefix="timothy-bench-"))
    try:
        run_all(args, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


COLUMNS = (
    ("shown_s", "window shown", "s"),
    ("usable_s", "usable", "s"),
    ("loaded_s", "all loaded", "s"),
    ("stall_start_ms", "longest GUI stall, shown to loaded", "ms"),
    ("stall_start_own_ms", "  the same less waiting for a CPU", "ms"),
    ("stall_start_cpu_ms", "  the GUI thread's own CPU in the longest", "ms"),
    ("stall_turn_ms", "longest GUI stall during a turn", "ms"),
    ("stall_turn_own_ms", "  the same less waiting for a CPU", "ms"),
    ("stall_turn_cpu_ms", "  the GUI thread's own CPU in the longest", "ms"),
    ("gc_start_ms", "longest garbage collection, shown to loaded", "ms"),
    ("gc_start_full", "  full collections meanwhile", ""),
    ("gc_turn_ms", "longest garbage collection during a turn", "ms"),
    ("gc_turn_full", "  full collections meanwhile", ""),
    ("gc_full_after_browse_ms", "a full collection after browsing all", "ms"),
    ("stall_browse_ms", "longest GUI stall, browsing all and back", "ms"),
    ("stall_browse_own_ms", "  the same less waiting for a CPU", "ms"),
    ("rss_idle_mb", "RSS idle after loading", "MB"),
    ("rss_after_browse_all_mb", "RSS after browsing all and back", "MB"),
)


def load_average() -> str:
    try:
        return " ".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "?"


def run_all(args: argparse.Namespace, folder: Path) -> None:
    env = dict(os.environ)
    for name in ("DATA", "CONFIG", "CACHE", "LOG"):
        env[f"TIMOTHY_{name}_DIR"] = str(folder / name.lower())
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed app has its bytecode cached
    env.pop("PYTHONPATH", None)
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
    trees = {"this": ROOT}
    if args.against is not None:
        trees["against"] = args.against.resolve()
    for tree in trees.values():
        subprocess.run(
            [sys.executable, "-m", "compileall", "-q", "app", "timothy", "tests/fakes"],
            cwd=tree,
            env=env,
            check=False,
            capture_output=True,
        )
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for run in range(args.runs + 1):  # the first round only warms the file cache
        for name, tree in trees.items():
            # A server of its own each start (it answers one turn), up before the app starts.
            server = FakeServerProcess()
            try:
                result = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--measure",
                        str(data),
                        "--code",
                        str(tree),
                        "--server",
                        server.base_url,
                    ],
                    capture_output=True,
                    text=True,
                    env=env,
                    check=False,
                )
            finally:
                server.stop()
            if result.returncode != 0:
                raise SystemExit(f"{name}: the measured start failed:\n{result.stderr}")
            figures = json.loads(result.stdout.strip().splitlines()[-1])
            if run == 0:
                continue
            runs[name].append(figures)
            print(
                f"run {run} {name}: imports {figures['imports_s']:.2f} s, shown "
                f"{figures['shown_s']:.2f} s, usable {figures['usable_s']:.2f} s, loaded "
                f"{figures['loaded_s']:.2f} s, stalls {figures['stall_start_ms']:.0f} "
                f"({figures['stall_start_own_ms']:.0f}, "
                f"CPU {figures['stall_start_cpu_ms']:.0f}) ms at start / "
                f"{figures['stall_turn_ms']:.0f} ({figures['stall_turn_own_ms']:.0f}, "
                f"CPU {figures['stall_turn_cpu_ms']:.0f}) ms in a turn "
                f"({figures['turn_s']:.2f} s), GC pauses {figures.get('gc_start_ms', 0):.0f} / "
                f"{figures.get('gc_turn_ms', 0):.0f} ms, RSS idle {figures['rss_idle_mb']:.0f} MB, "
                f"after browsing {figures['rows_listed']:,.0f} rows and back "
                f"{figures['rss_after_browse_all_mb']:.0f} MB, stall meanwhile "
                f"{figures['stall_browse_ms']:.0f} ({figures['stall_browse_own_ms']:.0f}) ms "
                f"(load {load_average()})"
            )
    print(f"medians of {args.runs} runs (load average now {load_average()}):")
    for key, label, unit in COLUMNS:
        line = f"  {label}: " + ", ".join(
            f"{name} {statistics.median(r[key] for r in found):.2f} {unit}"
            for name, found in runs.items()
        )
        if len(runs) == 2:
            mine = statistics.median(r[key] for r in runs["this"])
            other = statistics.median(r[key] for r in runs["against"])
            line += f" (ratio {mine / other:.2f})" if other else ""
        print(line)


if __name__ == "__main__":
    main()
