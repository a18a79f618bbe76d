"""LoCoMo evidence recall: how often recall's ranked list holds the turns a question needs.

Every dialog turn of a conversation becomes an episodic memory (id = its dia_id, the speaker
as its entity, dated by its session, in a session of its own per LoCoMo session; a shared
photo's caption is part of its text). Each question is recalled with decay off, and:

- recall@k: the share of its evidence turns among the first k of `ranked`, averaged over
  questions; for categories 1-4 (what DRAGON's comparable figures cover), for all five
  (the paper's printed overall includes the adversarial category 5), per category and per
  conversation;
- session recall@k: the share of its evidence sessions found, a session counting as found
  when any of its evidence turns is in the first k (the basis of peers who publish
  session-level figures);
- evidence that survives packing: of the evidence turns in the fused top 30, the share
  that lands inside the packed block (the 1,000-token budget). Goal >= 90 %.

Run from the repository root:

    .venv/bin/python bench/locomo.py [--data FILE_OR_FOLDER] [--embedder NAME] [--json]
        [--store URL|pgserver]

With `--store` each conversation is kept on a PostgreSQL server (a fresh schema each) and
recalled through the server engine: the figures must equal the file's.

Data: LoCoMo (Maharana et al., ACL 2024), CC BY-NC 4.0; see ../shared/bench/locomo/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from server_store import LOCAL_SERVER, open_schema, server_url  # noqa: E402

from timothy.memory.embedding import backfill  # noqa: E402
from timothy.providers.base import EmbeddingProvider  # noqa: E402
from timothy.providers.factory import local_embedder  # noqa: E402
from timothy.retrieval import Recaller, RecallSettings  # noqa: E402
from timothy.store import Store  # noqa: E402
from timothy.store.engine import StoreEngine  # noqa: E402
from timothy.store.records import Memory, MemorySource, MemoryStatus, MemoryType  # noqa: E402

KS = (5, 10, 25, 50)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
ALL_CATEGORIES = {**CATEGORIES, 5: "adversarial"}
# The paper's Table 3: DRAGON over dialog turns, all five categories as printed, and its
# per-category figures re-weighted by the released question counts of categories 1-4.
DRAGON = {5: 58.8, 10: 67.5, 25: 79.9, 50: 84.8}
DRAGON_1_4 = {5: 63.4, 10: 72.1, 25: 84.0, 50: 87.7}
# Packing is judged on the evidence found among this many of the fused list.
PACK_TOP = 30
_DIA_ID = re.compile(r"^D(\d+):(\d+)$")
_SESSION = re.compile(r"^session_(\d+)$")

# Embedders the vector leg can use here: name -> factory. None by default (text + entity
# legs only); "local" is all-MiniLM-L6-v2, offline.
EMBEDDERS: dict[str, Callable[[], EmbeddingProvider]] = {"local": local_embedder}


def default_data() -> Path:
    """The development split, wherever the shared folder sits beside this checkout."""
    for root in (REPO.parent, REPO.parent.parent):
        candidate = root / "shared" / "bench" / "locomo" / "locomo-dev.json"
        if candidate.is_file():
            return candidate
    raise SystemExit("LoCoMo data not found: pass --data PATH (a .json file or a folder).")


def load_samples(path: Path) -> list[dict[str, Any]]:
    files = sorted(path.glob("*.json")) if path.is_dir() else [path]
    samples: list[dict[str, Any]] = []
    for file in files:
        samples.extend(json.loads(file.read_text(encoding="utf-8")))
    return samples


def session_time(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> an aware datetime. The data has no zone: it is the
    speakers' wall clock, so it is read as local time, as an owner's own moments are (the
    day a memory was made is indexed as the owner's local day)."""
    return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").astimezone()


def evidence_ids(evidence: list[str]) -> set[str]:
    """Valid dia_ids only: a few entries join two with ';', some do not parse at all."""
    found: set[str] = set()
    for entry in evidence:
        for part in str(entry).split(";"):
            part = part.strip()
            if _DIA_ID.match(part):
                found.add(part)
    return found


def turns(sample: dict[str, Any]) -> Iterator[tuple[dict[str, Any], datetime]]:
    conversation = sample["conversation"]
    for key, value in conversation.items():
        match = _SESSION.match(key)
        if match and isinstance(value, list):
            when = session_time(conversation[f"{key}_date_time"])
            for turn in value:
                yield turn, when


def turn_text(turn: dict[str, Any]) -> str:
    text = str(turn.get("text", "")).strip()
    caption = turn.get("blip_caption")
    if caption:
        text = f"{text} [shared a photo: {str(caption).strip()}]".strip()
    return text


def build_store(
    folder: Path, sample: dict[str, Any], url: str | None = None
) -> tuple[StoreEngine, datetime]:
    """The conversation's turns as memories: in a file in `folder`, or on the server at `url`
    (a fresh schema per conversation)."""
    store: StoreEngine = (
        open_schema(url, f"locomo_{folder.name}", fresh=True) if url else Store.open(folder)
    )
    latest = datetime.min.replace(tzinfo=UTC)
    with store.db.write() as conn:
        for turn, when in turns(sample):
            latest = max(latest, when)
            store.memories.insert(
                conn,
                Memory(
                    id=str(turn["dia_id"]),
                    type=MemoryType.EPISODIC,
                    content=turn_text(turn) or "(no text)",
                    status=MemoryStatus.ACTIVE,
                    confidence=1.0,
                    source=MemorySource.IMPORT,
                    # One chat session per LoCoMo session: the turns said around a turn.
                    session_id=f"{sample.get('sample_id', '?')}:{session_of(str(turn['dia_id']))}",
                    supersedes=None,
                    superseded_by=None,
                    created_at=when,
                    last_confirmed_at=when,
                    last_retrieved_at=None,
                    entities=(str(turn["speaker"]),),
                ),
            )
    return store, latest


def embed_store(store: StoreEngine, embedder: EmbeddingProvider, batch: int = 64) -> None:
    """Embed every turn as Timothy embeds memories (its backfill: entities, then text), which
    also points the vector leg at the model once every memory has its vector."""
    result = backfill(store, embedder, batch_size=batch)
    if not result.complete:
        raise SystemExit(f"embedding failed: {result.error.message if result.error else '?'}")


def session_of(dia_id: str) -> str:
    """'D12:3' -> 'D12'."""
    return dia_id.partition(":")[0]


@dataclass
class Tally:
    recalls: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in KS})
    sessions: dict[int, list[float]] = field(default_factory=lambda: {k: [] for k in KS})
    in_top: int = 0  # evidence turns among the fused top PACK_TOP
    packed: int = 0  # ... of which the packed block holds

    def add(self, ranked: list[str], evidence: set[str], packed: set[str]) -> None:
        wanted = {session_of(turn) for turn in evidence}
        for k in KS:
            top = set(ranked[:k])
            self.recalls[k].append(len(evidence & top) / len(evidence))
            found = {session_of(turn) for turn in evidence & top}
            self.sessions[k].append(len(found) / len(wanted))
        survivors = evidence & set(ranked[:PACK_TOP])
        self.in_top += len(survivors)
        self.packed += len(survivors & packed)

    @property
    def count(self) -> int:
        return len(self.recalls[KS[0]])

    def percent(self, k: int) -> float:
        values = self.recalls[k]
        return 100.0 * sum(values) / len(values) if values else 0.0

    def session_percent(self, k: int) -> float:
        values = self.sessions[k]
        return 100.0 * sum(values) / len(values) if values else 0.0

    def survival(self) -> float | None:
        return round(100.0 * self.packed / self.in_top, 1) if self.in_top else None

    def row(self) -> dict[str, Any]:
        return {
            "n": self.count,
            **{f"R@{k}": round(self.percent(k), 1) for k in KS},
            **{f"S@{k}": round(self.session_percent(k), 1) for k in KS},
            "packed": self.survival(),
        }


def run(
    data: Path,
    embedder_name: str | None,
    settings: RecallSettings | None = None,
    store_url: str | None = None,
) -> dict[str, Any]:
    embedder = EMBEDDERS[embedder_name]() if embedder_name else None
    samples = load_samples(data)
    by_category = {c: Tally() for c in ALL_CATEGORIES}
    by_conversation: dict[str, Tally] = {}
    overall = Tally()  # categories 1-4
    every = Tally()  # all five
    skipped = 0
    timings: list[float] = []
    legs_seen: dict[str, set[str]] = {}
    with tempfile.TemporaryDirectory(prefix="locomo-") as scratch:
        for index, sample in enumerate(samples):
            store, latest = build_store(Path(scratch) / f"s{index}", sample, store_url)
            conversation = by_conversation.setdefault(str(sample.get("sample_id", index)), Tally())
            try:
                if embedder is not None:
                    embed_store(store, embedder)
                with Recaller(store, settings or RecallSettings(), embedder=embedder) as recaller:
                    recaller.prepare().result()
                    for qa in sample["qa"]:
                        category = int(qa.get("category", 0))
                        if category not in ALL_CATEGORIES:
                            continue
                        evidence = evidence_ids(qa.get("evidence", []))
                        if not evidence:
                            skipped += 1
                            continue
                        started = time.perf_counter()
                        result = recaller.recall(
                            str(qa["question"]),
                            now=latest + timedelta(days=1),
                            decay=False,
                            mark=False,
                        )
                        timings.append((time.perf_counter() - started) * 1000)
                        for leg, status in result.legs.items():
                            legs_seen.setdefault(leg, set()).add(status)
                        ranked = [c.memory.id for c in result.ranked]
                        packed = set(result.packed_ids)
                        every.add(ranked, evidence, packed)
                        by_category[category].add(ranked, evidence, packed)
                        if category in CATEGORIES:
                            overall.add(ranked, evidence, packed)
                            conversation.add(ranked, evidence, packed)
            finally:
                store.close()
    timings.sort()
    return {
        "data": str(data),
        "conversations": len(samples),
        "questions": overall.count,
        "skipped_without_evidence": skipped,
        "embedder": embedder_name,
        "store": "server" if store_url else "file",
        "legs": {leg: sorted(statuses) for leg, statuses in legs_seen.items()},
        "overall": overall.row(),
        "all_five": every.row(),
        "categories": {f"{c} {name}": by_category[c].row() for c, name in ALL_CATEGORIES.items()},
        # Tune nothing to one of these: the held-out conversations are measured too.
        "conversations_recall": {name: tally.row() for name, tally in by_conversation.items()},
        "recall_ms": {
            "p50": round(statistics.median(timings), 2) if timings else None,
            "p95": round(timings[int(0.95 * (len(timings) - 1))], 2) if timings else None,
        },
    }


def _line(name: str, row: dict[str, Any]) -> str:
    packed = "" if row.get("packed") is None else f"{row['packed']:>9.1f}"
    n = f"{row['n']:>5}" if "n" in row else f"{'':>5}"
    turns = "".join(f"{row[f'R@{k}']:>7.1f}" for k in KS)
    sessions = "".join(f"{row[f'S@{k}']:>7.1f}" for k in KS) if "S@5" in row else " " * 28
    return f"{name:<18}{n}{turns}  |{sessions}{packed}"


def print_report(report: dict[str, Any]) -> None:
    print(
        f"LoCoMo evidence recall: {report['conversations']} conversations, "
        f"{report['questions']} questions in categories 1-4, "
        f"{report['all_five']['n']} in all five "
        f"({report['skipped_without_evidence']} without a usable evidence id skipped)"
    )
    legs = ", ".join(f"{leg} {'/'.join(s)}" for leg, s in report["legs"].items())
    store = report.get("store", "file")
    print(f"store: {store}; embedder: {report['embedder'] or 'none'}; legs: {legs}")
    print(
        f"{'':<18}{'n':>5}"
        + "".join(f"{'R@' + str(k):>7}" for k in KS)
        + "  |"
        + "".join(f"{'S@' + str(k):>7}" for k in KS)
        + f"{'packed %':>9}"
    )
    for name, row in report["categories"].items():
        print(_line(name, row))
    print(_line("categories 1-4", report["overall"]))
    print(_line("  DRAGON (paper)", {f"R@{k}": DRAGON_1_4[k] for k in KS}))
    print(_line("all five", report["all_five"]))
    print(_line("  DRAGON (paper)", {f"R@{k}": DRAGON[k] for k in KS}))
    print("per conversation, categories 1-4")
    for name, row in report["conversations_recall"].items():
        print(_line("  " + name, row))
    print(
        "R@k: evidence turns in the top k; S@k: evidence sessions with a turn in the top k; "
        f"packed %: evidence in the top {PACK_TOP} that the packed block holds"
    )
    timing = report["recall_ms"]
    print(f"recall per question: p50 {timing['p50']} ms, p95 {timing['p95']} ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="LoCoMo JSON file, or a folder of them")
    parser.add_argument(
        "--embedder",
        metavar="NAME",
        default=None,
        help="embed turns and queries with this provider (default: none, vector leg off); "
        f"available: {', '.join(sorted(EMBEDDERS)) or 'none yet'}",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--no-floor", action="store_true", help="recall without the floor")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="override a numeric recall setting (e.g. text_min_evidence=3.5); repeatable",
    )
    parser.add_argument(
        "--article",
        action="store_true",
        help="fuse as the article does (RecallSettings.article(): k 60, legs alike, no "
        "neighbourhood, no named days)",
    )
    parser.add_argument(
        "--store",
        metavar="URL",
        help="keep the conversations on this PostgreSQL server, a schema each "
        f"({LOCAL_SERVER!r}: start one from its wheel); default: a file each",
    )
    args = parser.parse_args(argv)
    overrides: dict[str, Any] = {}
    numbers: dict[str, Callable[[str], float]] = {
        item.name: int if isinstance(item.default, int) else float
        for item in dataclasses.fields(RecallSettings)
        if isinstance(item.default, int | float) and not isinstance(item.default, bool)
    }
    for item in args.set:
        name, _, value = item.partition("=")
        name = name.strip()
        if name not in numbers:
            parser.error(f"--set {item}: {name!r} is not a numeric recall setting")
        try:
            overrides[name] = numbers[name](value)
        except ValueError:
            parser.error(f"--set {item}: the value must be a number")
    make = RecallSettings.article if args.article else RecallSettings
    settings = make(relevance_floor=not args.no_floor, **overrides)
    if args.embedder is not None and args.embedder not in EMBEDDERS:
        parser.error(
            f"unknown embedder {args.embedder!r}; available: "
            f"{', '.join(sorted(EMBEDDERS)) or 'none yet'}"
        )
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(server_url(args.store)) if args.store else None
        report = run(args.data or default_data(), args.embedder, settings, url)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
