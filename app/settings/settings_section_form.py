"""A form for one settings section (a frozen dataclass), built from its fields.

Sections belong to the features that define them (recall's budget and scoring constants,
for instance), so the dialog does not hard-code their fields: it shows every bool, int,
float, str and str-to-number mapping it finds, labelled from `LABELS` or the field's name.
"""

from __future__ import annotations

import dataclasses
import typing
from collections import abc
from collections.abc import Callable, Iterable
from enum import Enum
from typing import Any

from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QFormLayout,
    QLineEdit,
    QSpinBox,
    QWidget,
)

# Field name -> (label, help). Unknown fields get a label made from their name.
LABELS: dict[str, tuple[str, str]] = {
    "token_budget": ("Memory token budget", "Most tokens the memory block may take per turn."),
    "budget_tokens": ("Memory token budget", "Most tokens the memory block may take per turn."),
    "budget": ("Memory token budget", "Most tokens the memory block may take per turn."),
    "timeout_seconds": ("Recall time bound (s)", "A turn never waits longer than this for recall."),
    "recall_timeout_seconds": (
        "Recall time bound (s)",
        "A turn never waits longer than this for recall.",
    ),
    "time_bound_seconds": (
        "Recall time bound (s)",
        "A turn never waits longer than this for recall.",
    ),
    "half_life_days": (
        "Recency half-life (days)",
        "After this long unconfirmed, a memory's weight in recall halves.",
    ),
    "half_lives": ("Half-lives by type (days)", ""),
    "per_leg_limit": ("Candidates per search", "How many memories each search leg returns."),
    "type_weights": ("Weights by type", "Multiplies each memory type's score."),
    "rrf_k": ("Fusion constant k", "Reciprocal rank fusion: 1 / (k + rank)."),
    "min_score": ("Minimum score", "Below this a memory is never recalled."),
    "leg_weights": ("Weights by search", "Multiplies each search leg's share: w / (k + rank)."),
    "neighbour_share": (
        "Said beside a hit: share",
        "A memory said just before or after a top hit, in the same conversation, gains this "
        "share of its score (0: off).",
    ),
    "neighbour_seeds": ("Said beside: top hits", "How many top hits lend their neighbours."),
    "neighbour_width": ("Said beside: places", "How far before or after a hit counts."),
    "time_boost": (
        "Named day boost",
        "When a message names a day or month, memories made then score (1 + this) times "
        "as much (0: off).",
    ),
    "vector_depth": (
        "Vector search: times as many",
        "The vector search returns this many times the candidates per search (1: as many).",
    ),
    "vector_limit": ("Vector leg: top", "Candidates the vector search returns."),
    "text_limit": ("Text leg: top", "Candidates the full-text search returns."),
    "entity_limit": ("Entity leg: top", "Candidates the entity match returns."),
}

# Everyday settings; the rest (time bounds, timeouts, scoring constants) are advanced.
BASIC_WORDS = ("budget",)


def label_for(name: str) -> tuple[str, str]:
    if name in LABELS:
        return LABELS[name]
    return name.replace("_", " ").capitalize(), ""


def is_basic(name: str) -> bool:
    return any(word in name for word in BASIC_WORDS)


def _plain(kind: Any) -> Any:
    """`X | None` -> X (a None value is shown as the field's default)."""
    if typing.get_origin(kind) in (typing.Union, __import__("types").UnionType):
        options = [option for option in typing.get_args(kind) if option is not type(None)]
        if len(options) == 1:
            return options[0]
    return kind


def _exact(spin: QDoubleSpinBox, value: float) -> Callable[[], float]:
    """The spin box's number, or `value` itself while the box still shows it as set: the
    box rounds to its decimals (0.027727 shows as 0.0277), and an untouched field must not
    save the rounding."""
    shown = spin.value()
    return lambda: value if spin.value() == shown else spin.value()


class SettingsSectionForm(QWidget):
    """Edits the chosen fields of a settings dataclass; `value()` returns the edited copy."""

    def __init__(
        self,
        section: Any,
        *,
        include: Callable[[str], bool] = lambda _name: True,
        skip: Iterable[str] = (),
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.section = section
        self.readers: dict[str, Callable[[], Any]] = {}
        self.editors: dict[str, QWidget] = {}
        layout = QFormLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        hints = typing.get_type_hints(type(section))
        skipped = set(skip)
        for item in dataclasses.fields(section):
            if item.name in skipped or not include(item.name):
                continue
            kind = _plain(hints.get(item.name))
            value = getattr(section, item.name)
            label, help_text = label_for(item.name)
            made = self._editor(kind, value, item.name)
            if made is None:
                continue
            widget, reader = made
            if help_text:
                widget.setToolTip(help_text)
            layout.addRow(label, widget)
            self.readers[item.name] = reader
            self.editors[item.name] = widget

    def _editor(self, kind: Any, value: Any, name: str) -> tuple[QWidget, Callable[[], Any]] | None:
        if kind is bool:
            check = QCheckBox(self)
            check.setChecked(bool(value))
            return check, check.isChecked
        if kind is int:
            whole = QSpinBox(self)
            whole.setRange(0, 1_000_000_000)
            whole.setValue(int(value or 0))
            whole.setGroupSeparatorShown(True)
            return whole, whole.value
        if kind is float:
            double = QDoubleSpinBox(self)
            double.setRange(0.0, 1_000_000.0)
            double.setDecimals(4 if abs(float(value or 0)) < 1 else 2)
            double.setSingleStep(0.001 if abs(float(value or 0)) < 0.1 else 0.1)
            double.setValue(float(value or 0.0))
            return double, _exact(double, float(value or 0.0))
        if kind is str:
            line = QLineEdit(str(value or ""), self)
            return line, line.text
        if typing.get_origin(kind) in (dict, abc.Mapping) and isinstance(value, abc.Mapping):
            _key, item_kind = typing.get_args(kind)
            if item_kind not in (int, float):
                return None
            box: QWidget = QWidget(self)
            form = QFormLayout(box)
            form.setContentsMargins(0, 0, 0, 0)
            readers: dict[Any, Callable[[], Any]] = {}
            for key, number in value.items():
                shown = str(key.value if isinstance(key, Enum) else key).capitalize()
                if item_kind is int:
                    count = QSpinBox(box)
                    count.setRange(0, 1_000_000_000)
                    count.setValue(int(number))
                    form.addRow(shown, count)
                    readers[key] = count.value
                else:
                    weight = QDoubleSpinBox(box)
                    weight.setRange(0.0, 1_000_000.0)
                    weight.setDecimals(2)
                    weight.setSingleStep(0.05)
                    weight.setValue(float(number))
                    form.addRow(shown, weight)
                    readers[key] = _exact(weight, float(number))
            return box, lambda: {key: read() for key, read in readers.items()}
        return None

    def value(self) -> Any:
        changes = {name: read() for name, read in self.readers.items()}
        return dataclasses.replace(self.section, **changes)

    def is_empty(self) -> bool:
        return not self.readers
