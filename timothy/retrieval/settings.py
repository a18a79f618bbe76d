"""Recall's scoring constants in one frozen object, the seed's values as defaults."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from timothy.errors import InvalidInputError
from timothy.store.records import MemoryType


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


@dataclass(frozen=True)
class RecallSettings:
    """How recall finds, scores and packs memories (seed values: RRF k 60, half-life 90 days,
    weights 1.0, minimum score 0.005, 30 per leg, 1,000 tokens, 10 s)."""

    rrf_k: float = 60.0
    half_life_days: Mapping[MemoryType, float] = field(default_factory=lambda: _per_type(90.0))
    type_weights: Mapping[MemoryType, float] = field(default_factory=lambda: _per_type(1.0))
    min_score: float = 0.005
    per_leg_limit: int = 30
    token_budget: int = 1000
    time_bound_seconds: float = 10.0

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
        checks = (
            ("rrf_k", self.rrf_k >= 0 and math.isfinite(self.rrf_k)),
            ("min_score", self.min_score >= 0 and math.isfinite(self.min_score)),
            ("per_leg_limit", 0 < self.per_leg_limit <= 1000),
            ("token_budget", self.token_budget >= 0),
            (
                "time_bound_seconds",
                self.time_bound_seconds > 0 and math.isfinite(self.time_bound_seconds),
            ),
        )
        for name, ok in checks:
            if not ok:
                raise InvalidInputError(f"The recall setting {name} is out of range.")

    def half_life(self, memory_type: MemoryType) -> float:
        return self.half_life_days[memory_type]

    def weight(self, memory_type: MemoryType) -> float:
        return self.type_weights[memory_type]
