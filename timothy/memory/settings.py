"""The memory package's sections of the owner's settings: the promotion policy and the daily
consolidation. `timothy.settings` composes them with the other sections."""

from __future__ import annotations

from dataclasses import dataclass

from timothy.errors import InvalidInputError


@dataclass(frozen=True, slots=True)
class MemoryPolicySettings:
    ask_before_saving: bool = False  # `remember` stages facts instead of saving them active
    extraction_enabled: bool = True


@dataclass(frozen=True, slots=True)
class ConsolidationSettings:
    """How consolidation decides; the defaults are the seed's numbers."""

    duplicate_cosine: float = 0.95  # vectors at least this similar are near-duplicates
    episodic_archive_days: int = 180  # an episode not recalled this long is archived
    semantic_decay_days: int = 365  # a fact unconfirmed longer than this loses confidence
    # Taken off a fact's confidence for each whole stale period: a fact saved at 1.0 and
    # never confirmed again reads 0.9 after a year, 0.5 after five.
    decay_step: float = 0.1
    # Never decayed below this: an old fact still outranks a barely-believed guess, and a
    # confirmation (which resets the clock) is all it takes to trust it again.
    decay_floor: float = 0.3
    interval_hours: float = 24.0  # at most one run a day (`due`)
    max_group_size: int = 12  # larger groups are reported and left alone (one prompt each)
    max_group_chars: int = 16_000  # likewise for a group whose text is longer than this
    max_merges_per_run: int = 50  # bounds one day's model calls; the rest wait a day
    merge_timeout_seconds: float = 60.0
    merge_max_tokens: int = 1_024

    def check(self) -> None:
        """Raise InvalidInputError naming the first setting out of range."""
        problems = [
            (0.0 < self.duplicate_cosine <= 1.0, "duplicate_cosine must be above 0 and at most 1"),
            (self.episodic_archive_days > 0, "episodic_archive_days must be at least 1"),
            (self.semantic_decay_days > 0, "semantic_decay_days must be at least 1"),
            (0.0 < self.decay_step <= 1.0, "decay_step must be above 0 and at most 1"),
            (0.0 <= self.decay_floor < 1.0, "decay_floor must be from 0 to below 1"),
            (self.interval_hours >= 0, "interval_hours cannot be negative"),
            (self.max_group_size >= 2, "max_group_size must be at least 2"),
            (self.max_group_chars > 0, "max_group_chars must be positive"),
            (self.max_merges_per_run >= 0, "max_merges_per_run cannot be negative"),
            (self.merge_timeout_seconds > 0, "merge_timeout_seconds must be positive"),
            (self.merge_max_tokens > 0, "merge_max_tokens must be positive"),
        ]
        for ok, message in problems:
            if not ok:
                raise InvalidInputError(f"Consolidation setting: {message}.")
