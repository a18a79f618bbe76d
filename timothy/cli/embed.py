"""`timothy embed`: give every active memory a vector for the embedding model.

With `--model` it switches the embedding model first (and saves that choice); the vector leg
keeps using the old model's vectors until the new model covers every memory.
"""

from __future__ import annotations

import argparse
import time
from typing import Any, TextIO

from timothy.cli.context import Context, add_json
from timothy.memory.embedding import backfill
from timothy.providers.factory import choose_embedding, embedding_provider
from timothy.settings import load_settings, save_settings

BAR_WIDTH = 30


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser(
        "embed",
        parents=[common],
        help="embed every memory that lacks a vector for the embedding model (backfill)",
    )
    p.add_argument(
        "--model",
        metavar="M",
        help="switch to this embedding model first: local, openai, bedrock, or "
        "PROVIDER/MODEL[@DIMENSION] (e.g. bedrock/amazon.titan-embed-text-v2:0@512)",
    )
    p.add_argument(
        "--status", action="store_true", help="show each model's coverage; embed nothing"
    )
    add_json(p)
    p.set_defaults(handler=cmd_embed)


class ProgressBar:
    """A one-line bar on stderr, redrawn at most ten times a second (and at the end)."""

    def __init__(self, out: TextIO, label: str) -> None:
        self.out = out
        self.label = label
        self._last = 0.0
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if total == 0 or (done < total and now - self._last < 0.1):
            return
        self._last = now
        filled = BAR_WIDTH * done // total
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        self.out.write(f"\r{self.label} [{bar}] {done}/{total}")
        self.out.flush()
        self._drawn = True

    def close(self) -> None:
        if self._drawn:
            self.out.write("\n")
            self.out.flush()


def cmd_embed(ctx: Context) -> int:
    settings = load_settings()
    if ctx.args.status:
        return _status(ctx, settings.embedding_provider)
    ctx.store(writes=True)  # a damaged store is refused before any model is loaded
    if ctx.args.model:
        settings = choose_embedding(settings, ctx.args.model)
    embedder = embedding_provider(settings)
    if embedder is None:
        ctx.fail(
            "no embedding provider is set; choose one, e.g. `timothy embed --model local` "
            "(offline, no key needed)."
        )
        return 1
    embedder.embed_query("check")  # a broken choice fails here, before it is saved
    if ctx.args.model:
        save_settings(settings)
    store = ctx.store()
    bar = ProgressBar(ctx.err, f"embedding with {embedder.model_id}")
    try:
        result = backfill(store, embedder, progress=bar)
    finally:
        bar.close()
    active = store.vectors.active_model()
    if ctx.json:
        ctx.print_json(
            {
                "model": result.model,
                "total": result.total,
                "embedded": result.embedded,
                "failed": result.failed,
                "complete": result.complete,
                "active_model": active.name if active else None,
                "error": result.error.message if result.error else None,
            }
        )
    else:
        ctx.print(f"Embedded {result.embedded} of {result.total} memories with {result.model}.")
        if result.complete:
            ctx.print(f"Every memory has a vector; recall searches {result.model}.")
        else:
            still = active.name if active else "no model (the vector leg is off)"
            ctx.print(
                f"{result.failed} memories are still without a vector; recall keeps "
                f"searching {still}. Run `timothy embed` again to finish."
            )
    if result.error is not None and not result.complete:
        ctx.fail(result.error.message)
        return 1
    return 0


def _status(ctx: Context, configured: str | None) -> int:
    store = ctx.store()
    active = store.vectors.active_model()
    rows = []
    for model in store.vectors.models():
        rows.append(
            {
                "model": model.name,
                "dimension": model.dimension,
                "vectors": store.vectors.count(model),
                "missing": len(store.vectors.missing(model)),
                "active": active is not None and active.id == model.id,
            }
        )
    if ctx.json:
        ctx.print_json({"configured_provider": configured, "models": rows})
        return 0
    ctx.print(f"configured provider: {configured or 'none (the vector leg is off)'}")
    if not rows:
        ctx.print("no vectors stored yet")
    for row in rows:
        marker = "*" if row["active"] else " "
        ctx.print(
            f"{marker} {row['model']}  {row['dimension']}-d  {row['vectors']} vectors, "
            f"{row['missing']} memories missing"
        )
    if active is not None:
        ctx.print("* = searched by recall")
    return 0
