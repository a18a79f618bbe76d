"""Recall: three legs over active memories, fused, packed within a token budget, fenced."""

from timothy.retrieval.fusion import Candidate, Explanation, fuse
from timothy.retrieval.pack import Packed, PackedItem, pack, serial_order
from timothy.retrieval.recall import Recaller, RecallResult
from timothy.retrieval.render import (
    BLOCK_CLOSE,
    BLOCK_OPEN,
    escape_content,
    fence_tags,
    render_block,
    render_item,
)
from timothy.retrieval.settings import RecallSettings

__all__ = [
    "BLOCK_CLOSE",
    "BLOCK_OPEN",
    "Candidate",
    "Explanation",
    "Packed",
    "PackedItem",
    "RecallResult",
    "RecallSettings",
    "Recaller",
    "escape_content",
    "fence_tags",
    "fuse",
    "pack",
    "render_block",
    "render_item",
    "serial_order",
]
