"""The chat turn's knobs: bounds on background work and when to compact a conversation."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ChatSettings:
    # Compaction: when the transcript passes this share of the model's context window,
    # older turns become one summary and the newest messages stay verbatim.
    context_window_tokens: int = 128_000
    compact_at_share: float = 0.75
    keep_recent_messages: int = 6
    compaction_timeout_seconds: float = 90.0
    # Extraction gets this share of the compaction budget, before the summary is written.
    compaction_extraction_share: float = 0.4
    extraction_timeout_seconds: float = 30.0
    title_timeout_seconds: float = 15.0
    max_tool_rounds: int = 4
    max_reply_tokens: int = 4_096
