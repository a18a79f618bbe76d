"""Packing: the best candidates that fit a token budget, counted in their rendered form.

The open and close of the block are reserved first; items are taken best first while they
fit (one that does not fit is skipped, a smaller one after it may still go in); then the
order becomes best, 3rd, 4th, ..., 2nd: the strongest memory first (primacy), the second
strongest last (recency). The final block is counted again as a whole, so the promise
"never more tokens than the budget" does not rest on token counts adding up, unless every
line provably splits the block where the tokenizer does (splits_cleanly: every rendered line
does), and then the lines' own counts are the block's.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from timothy.retrieval.fusion import Candidate
from timothy.retrieval.render import BLOCK_CLOSE, BLOCK_OPEN, render_item
from timothy.store.records import Memory, MemoryType, RecalledMemory
from timothy.tokens import count_tokens

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PackedItem:
    candidate: Candidate
    tokens: int  # what its rendered line costs on its own

    @property
    def memory(self) -> Memory:
        return self.candidate.memory

    def recalled(self) -> RecalledMemory:
        return self.candidate.recalled(self.tokens)

    def to_json(self) -> dict[str, Any]:
        return self.recalled().to_json()


@dataclass(frozen=True, slots=True)
class Packed:
    block: str  # exactly what is injected; "" when nothing was found or nothing fits
    tokens: int  # the block's token count (o200k_base), never above the budget
    budget: int
    items: tuple[PackedItem, ...]  # in block order: best, 3rd, 4th, ..., 2nd


# Kept per memory text (what never changes for a memory: its line, and that line's cost),
# as many as the memories' rows kept (KnownRows): ~0.3 KB each, ~5 MiB once full.
KEPT_LINES = 16_384


@functools.lru_cache(maxsize=KEPT_LINES)
def line_tokens(line: str) -> int:
    return count_tokens(line)


@functools.lru_cache(maxsize=KEPT_LINES)
def rendered(memory_type: MemoryType, content: str) -> str:
    """render_item, kept: the same memories come back turn after turn."""
    return render_item(memory_type, content)


def forget_lines() -> None:
    """Let go of every kept line (a memory was forgotten: no copy of its text stays)."""
    rendered.cache_clear()
    line_tokens.cache_clear()


@functools.cache
def frame_tokens() -> int:
    """What the open and close of the block cost together."""
    return count_tokens(BLOCK_OPEN + BLOCK_CLOSE)


@functools.cache
def frame_splits_cleanly() -> bool:
    """Whether the block's open and close cost what they cost together (frame_tokens), in
    any block: the open ends with a line break and the close starts with "<"."""
    return splits_cleanly(BLOCK_OPEN) and not BLOCK_CLOSE[:1].isspace() and BLOCK_CLOSE[:1] != "/"


@functools.cache
def smallest_item_tokens() -> int:
    """A lower bound on any item's cost (a one-character memory of the cheapest type)."""
    return max(1, min(count_tokens(render_item(t, ".")) for t in MemoryType) - 2)


def splits_cleanly(line: str) -> bool:
    """Whether the tokenizer cuts a block at this line's two ends, so the line costs in the
    block exactly what it costs alone: it ends with a line break, and starts with neither
    white space nor "/", the only characters o200k_base's pre-tokenizer lets a piece ending
    in a line break run on into (its patterns end a piece at a run of line breaks unless
    white space or "/" follows; none looks behind). Every rendered item is such a line
    ("- [type] text" and a break), and so is the block's opening; its close starts with
    "<". tests/retrieval/test_pack.py holds this against counting whole blocks."""
    return line.endswith("\n") and not line[0].isspace() and line[0] != "/"


def serial_order(ranked: Sequence[T]) -> list[T]:
    """best, 3rd, 4th, ..., 2nd: the two strongest at the two ends, the rest in between."""
    if len(ranked) < 3:
        return list(ranked)
    return [ranked[0], *ranked[2:], ranked[1]]


def pack(candidates: Sequence[Candidate], budget: int) -> Packed:
    """The block for `candidates` (best first) within `budget` tokens."""
    empty = Packed("", 0, budget, ())
    room = budget - frame_tokens()
    chosen: list[tuple[Candidate, str, int]] = []
    for candidate in candidates:
        if room < smallest_item_tokens():
            break
        line = rendered(candidate.memory.type, candidate.memory.content)
        cost = line_tokens(line)
        if cost <= room:
            chosen.append((candidate, line, cost))
            room -= cost
    while chosen:
        ordered = serial_order(chosen)
        block = BLOCK_OPEN + "".join(line for _, line, _ in ordered) + BLOCK_CLOSE
        if frame_splits_cleanly() and all(splits_cleanly(line) for _, line, _ in ordered):
            # The pieces' own counts add up to the block's: no need to count it again.
            tokens = frame_tokens() + sum(cost for _, _, cost in ordered)
        else:
            tokens = count_tokens(block)
        if tokens <= budget:
            items = tuple(PackedItem(candidate, cost) for candidate, _, cost in ordered)
            return Packed(block, tokens, budget, items)
        # Tokens merged across a line boundary: give up the weakest item and count again.
        chosen.pop()
    return empty
