"""Recall's scoring constants in one frozen object: the article's, or measured departures."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from timothy.errors import InvalidInputError
from timothy.store.records import MemoryType

# The legs, in recall's fixed order (store.records.RECALL_LEGS).
LEG_NAMES = ("vector", "text", "entity")


def _per_type(value: float) -> Mapping[MemoryType, float]:
    return MappingProxyType({memory_type: value for memory_type in MemoryType})


def _frozen_per_type(
    name: str, given: Mapping[MemoryType, float] | Mapping[str, float], *, positive: bool
) -> Mapping[MemoryType, float]:
    """Every type present (missing ones keep the default), keys parsed, values checked."""
    values = dict(_per_type(90.0 if name == "half_life_days" else 1.0))
    for key, raw in given.items():
        try:
            memory_type = MemoryType(key)
        except ValueError:
            raise InvalidInputError(f"{name}: unknown memory type {key!r}.") from None
        value = float(raw)
        if not math.isfinite(value) or value < 0 or (positive and value == 0):
            bound = "above zero" if positive else "zero or more"
            raise InvalidInputError(f"{name}[{memory_type.value}] must be a number {bound}.")
        values[memory_type] = value
    return MappingProxyType(values)


def _frozen_per_leg(given: Mapping[str, float]) -> Mapping[str, float]:
    """Every leg present (missing ones weigh 1), names checked, values zero or more."""
    values = dict.fromkeys(LEG_NAMES, 1.0)
    for leg, raw in given.items():
        if leg not in values:
            raise InvalidInputError(f"leg_weights: unknown leg {leg!r}.")
        value = float(raw)
        if not math.isfinite(value) or value < 0:
            raise InvalidInputError(f"leg_weights[{leg}] must be a number zero or more.")
        values[leg] = value
    return MappingProxyType(values)


# The article's fusion: every leg weighs the same, k = 60, minimum 0.005, nothing added.
ARTICLE_FUSION: dict[str, object] = {
    "rrf_k": 60.0,
    "min_score": 0.005,
    "leg_weights": {"vector": 1.0, "text": 1.0, "entity": 1.0},
    "neighbour_share": 0.0,
    "time_boost": 0.0,
    "vector_depth": 1,
}


@dataclass(frozen=True)
class RecallSettings:
    """How recall finds, scores and packs memories, and the relevance floor each leg's hits
    must clear before fusion (see timothy/retrieval/floor.py).

    The seed (the article) fuses with RRF k 60, every leg weighing the same, a minimum score
    of 0.005, half-life 90 days, type weights 1.0, 30 per leg, 1,000 tokens, 10 s. Where a
    measured departure ranks better (issue 17, LoCoMo) it is a named setting below, and
    `RecallSettings.article()` gives the article's fusion back exactly:
    - `rrf_k` 10 (the article: 60): a leg's first places count for more than agreement far
      down the lists;
    - `min_score` 0.0277: the article's 0.005 at k 60 carried to k 10 (0.005 * 61 / 11), so
      a memory one leg ranks first still fades after the same 154 days unconfirmed;
    - `leg_weights`: the vector leg weighs 2 (it reads the whole sentence; the text and
      entity legs match words);
    - `neighbour_share`: an episodic memory said just before or after a top hit, in the same
      session, shares in that hit's score (timothy/retrieval/context.py);
    - `time_boost`: a memory made on a day the question names counts for more
      (timothy/retrieval/when.py);
    - `vector_depth` 2 (the article: 1): the vector leg hands fusion twice `per_leg_limit`
      hits; the answer a question needs is often a sentence worded nothing like it, found
      just past the vector leg's 30th place.
    """

    # RRF: one leg's share of a memory's score is leg_weight / (rrf_k + rank).
    rrf_k: float = 10.0
    half_life_days: Mapping[MemoryType, float] = field(default_factory=lambda: _per_type(90.0))
    type_weights: Mapping[MemoryType, float] = field(default_factory=lambda: _per_type(1.0))
    min_score: float = 0.005 * 61 / 11  # 0.0277: the article's fading horizon at k 10
    # Leg -> weight of its RRF term (the article: 1 for every leg).
    leg_weights: Mapping[str, float] = field(
        default_factory=lambda: MappingProxyType({"vector": 2.0, "text": 1.0, "entity": 1.0})
    )
    # The conversational neighbourhood: an active episodic memory within `neighbour_width`
    # places of one of the fused list's first `neighbour_seeds` (in the same session, in the
    # order they were made) gains this share of that hit's score, divided by its distance;
    # 0 turns it off (the article).
    neighbour_share: float = 0.4
    neighbour_seeds: int = 10
    neighbour_width: int = 2
    # Time: when the question names a day, month or year ("on 8 May, 2023", "in March
    # 2024"), a candidate made then scores (1 + this) times as much; 0 turns it off.
    time_boost: float = 1.0
    per_leg_limit: int = 30
    # The vector leg returns this many times per_leg_limit hits (the article: 1). On LoCoMo
    # (local model) 2 lifts R@25 and R@50 by 0.5-1.3 in every conversation, R@5 the same.
    vector_depth: int = 2
    token_budget: int = 1000
    time_bound_seconds: float = 10.0
    # The relevance floor; False lets every hit of every leg into fusion (the seed's rules).
    relevance_floor: bool = True
    # Vector: a hit must be more similar to the query than the query's best background
    # sentence, plus this many standard deviations of the query's background similarities
    # (scale-free, so it means the same for every embedding model).
    vector_floor_margin: float = 0.25
    # Text: the matched query terms' weights (idf-like, ln units) must add up to this. One
    # term found in 1 of 10 memories and uncommon in English weighs about 2.4; "today" 1.45.
    text_min_evidence: float = 2.5
    # Text: the same for a message in the first person ("what car do I drive?"): a question
    # about the owner needs less to show that it concerns the owner's memory.
    text_min_evidence_personal: float = 1.0
    # Text: once the query's best match reaches text_min_evidence (the query is about
    # something in the store), the other matches need only this much.
    text_tail_evidence: float = 0.5
    # Text: a term weighing less than this counts for nothing (English ranks below ~700:
    # "today", "good", "work", "time"), so common words never add up to evidence.
    text_common_weight: float = 1.0
    # Text: what a memory's terms must weigh when the vector leg ran and did not admit it
    # (the whole sentence reads as unrelated: a shared word is likely a coincidence).
    text_min_evidence_unrelated: float = 4.0
    # Text: the store is taken to hold this many more memories lacking each term, so in a
    # small store a word in 1 of 5 memories is not taken for a rare one.
    text_prior_memories: float = 50.0
    # Text: a word of English rank r weighs at most ln(1 + r / this) (rank 0 = "the").
    common_word_rank_scale: float = 200.0

    def __post_init__(self) -> None:
        # Accept plain dicts with string keys; store read-only maps covering every type.
        object.__setattr__(
            self,
            "half_life_days",
            _frozen_per_type("half_life_days", self.half_life_days, positive=True),
        )
        object.__setattr__(
            self,
            "type_weights",
            _frozen_per_type("type_weights", self.type_weights, positive=False),
        )
        object.__setattr__(self, "leg_weights", _frozen_per_leg(self.leg_weights))
        checks = (
            (
                "neighbour_share",
                math.isfinite(self.neighbour_share) and self.neighbour_share >= 0,
            ),
            ("neighbour_seeds", 0 <= self.neighbour_seeds <= 1000),
            ("neighbour_width", 0 <= self.neighbour_width <= 100),
            ("time_boost", math.isfinite(self.time_boost) and self.time_boost >= 0),
            ("rrf_k", self.rrf_k >= 0 and math.isfinite(self.rrf_k)),
            ("min_score", self.min_score >= 0 and math.isfinite(self.min_score)),
            ("per_leg_limit", 0 < self.per_leg_limit <= 1000),
            ("vector_depth", 1 <= self.vector_depth <= 10),
            (
                "vector_floor_margin",
                math.isfinite(self.vector_floor_margin) and self.vector_floor_margin >= 0,
            ),
            (
                "text_min_evidence",
                math.isfinite(self.text_min_evidence) and self.text_min_evidence >= 0,
            ),
            (
                "text_min_evidence_personal",
                math.isfinite(self.text_min_evidence_personal)
                and self.text_min_evidence_personal >= 0,
            ),
            (
                "text_min_evidence_unrelated",
                math.isfinite(self.text_min_evidence_unrelated)
                and self.text_min_evidence_unrelated >= 0,
            ),
            (
                "text_tail_evidence",
                math.isfinite(self.text_tail_evidence) and self.text_tail_evidence >= 0,
            ),
            (
                "text_common_weight",
                math.isfinite(self.text_common_weight) and self.text_common_weight >= 0,
            ),
            (
                "text_prior_memories",
                math.isfinite(self.text_prior_memories) and self.text_prior_memories >= 0,
            ),
            (
                "common_word_rank_scale",
                math.isfinite(self.common_word_rank_scale) and self.common_word_rank_scale > 0,
            ),
            ("token_budget", self.token_budget >= 0),
            (
                "time_bound_seconds",
                self.time_bound_seconds > 0 and math.isfinite(self.time_bound_seconds),
            ),
        )
        for name, ok in checks:
            if not ok:
                raise InvalidInputError(f"The recall setting {name} is out of range.")

    @classmethod
    def article(cls, **overrides: object) -> RecallSettings:
        """The article's fusion (k 60, legs alike, minimum 0.005, no neighbourhood, no time
        boost, the same number of hits from every leg), with the rest at the defaults or
        `overrides`."""
        return cls(**{**ARTICLE_FUSION, **overrides})  # type: ignore[arg-type]

    def half_life(self, memory_type: MemoryType) -> float:
        return self.half_life_days[memory_type]

    def weight(self, memory_type: MemoryType) -> float:
        return self.type_weights[memory_type]

    def leg_limit(self, leg: str) -> int:
        """How many hits `leg` hands fusion at most: `per_leg_limit`, times `vector_depth`
        for the vector leg."""
        return self.per_leg_limit * (self.vector_depth if leg == "vector" else 1)

    def leg_weight(self, leg: str) -> float:
        return self.leg_weights.get(leg, 1.0)
