"""*Last recall*: what the model saw for a turn. The exact memory block, its tokens against the
budget, and for each memory the legs that found it, its ranks, and how its score was made.

It renders the plain dict of `RecallResult.to_json()` and reads it defensively: a field
that is missing shows as a dash, never as an error.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QSplitter,
    QStackedWidget,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from app.look import invisible, theme
from app.memories.memory_card_delegate import type_colour
from timothy.store import MemoryType

LEGS = ("vector", "text", "entity")


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _fmt(value: Any, digits: int = 4) -> str:
    number = _number(value)
    return "–" if number is None else f"{number:.{digits}f}"


def _rank(value: Any) -> int | None:
    number = _number(value)
    return None if number is None else int(number)


def item_memory(item: dict[str, Any]) -> dict[str, Any]:
    """The memory part of an item, whether nested under "memory" or flat."""
    nested = item.get("memory")
    return nested if isinstance(nested, dict) else item


def leg_ranks(item: dict[str, Any]) -> list[tuple[str, int | None]]:
    """(leg, rank) for each leg that found the item, in the fixed leg order.

    Reads recall's own shape (`"ranks": {"vector": 3, "text": null, ...}`, null meaning the
    leg did not find it) and a nested `"explanation"` or a plain list of legs as well.
    """
    explanation = item.get("explanation")
    source = explanation if isinstance(explanation, dict) else item
    legs = source.get("legs")
    ranks = source.get("ranks")
    found: dict[str, int | None] = {}
    if isinstance(legs, list | tuple):
        for leg in legs:
            found[str(leg)] = _rank(ranks.get(leg) if isinstance(ranks, dict) else None)
    else:
        table = legs if isinstance(legs, dict) else ranks if isinstance(ranks, dict) else {}
        for leg, rank in table.items():
            if isinstance(rank, dict):
                rank = rank.get("rank")
            if _rank(rank) is not None:
                found[str(leg)] = _rank(rank)
    ordered = [leg for leg in LEGS if leg in found] + [leg for leg in found if leg not in LEGS]
    return [(leg, found[leg]) for leg in ordered]


def leg_counts(recall: dict[str, Any]) -> dict[str, int]:
    """How many ranked candidates each leg found (recall reports only "ok" per leg)."""
    counts: dict[str, int] = {}
    ranked = recall.get("ranked")
    for candidate in ranked if isinstance(ranked, list) else []:
        if isinstance(candidate, dict):
            for leg, _rank_value in leg_ranks(candidate):
                counts[leg] = counts.get(leg, 0) + 1
    return counts


def leg_summary(value: Any, found: int | None = None) -> str:
    """One leg's outcome as words: "12 found", "off", "failed: ...", "timed out"."""
    if value is None or value is False:
        return "off"
    if isinstance(value, str):
        if value == "ok" and found is not None:
            return f"{found} found"
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value} found"
    if isinstance(value, list | tuple):
        return f"{len(value)} found"
    if isinstance(value, dict):
        error = value.get("error")
        if error:
            return f"failed: {error}"
        status = value.get("status")
        if isinstance(status, str) and status not in ("ok", "done"):
            return status
        for key in ("count", "hits", "found", "candidates"):
            count = value.get(key)
            if isinstance(count, int):
                words = f"{count} found"
                elapsed = _number(value.get("elapsed_ms"))
                return words + (f" in {elapsed:.0f} ms" if elapsed is not None else "")
            if isinstance(count, list):
                return f"{len(count)} found"
        ids = value.get("ids")
        if isinstance(ids, list):
            return f"{len(ids)} found"
        return "ran"
    return str(value)


def items_html(recall: dict[str, Any]) -> str:
    c = theme.colours()
    muted = c.muted.name()
    items = [item for item in recall.get("items") or [] if isinstance(item, dict)]
    if not items:
        return (
            f'<p style="color:{muted};">No memory was packed into the block for this turn '
            "(none matched well enough, or none fitted the budget).</p>"
        )
    rows = []
    for position, item in enumerate(items, start=1):
        memory = item_memory(item)
        explanation = item.get("explanation") if isinstance(item.get("explanation"), dict) else item
        assert isinstance(explanation, dict)
        kind = str(memory.get("type", ""))
        try:
            hue = type_colour(MemoryType(kind)).name()
        except ValueError:
            hue = muted
        content = invisible.reveal_html(
            str(memory.get("content", "")),
            c.invisible_marker.name(),
            c.invisible_marker_background.name(),
        )
        legs = leg_ranks(item)
        legs_text = (
            " · ".join(
                f"<b>{html.escape(leg)}</b> #{rank}"
                if rank is not None
                else f"<b>{html.escape(leg)}</b>"
                for leg, rank in legs
            )
            or "–"
        )
        score = explanation.get("score", item.get("score"))
        maths = (
            f"rrf {_fmt(explanation.get('rrf'))} × decay {_fmt(explanation.get('decay'), 3)}"
            f" × weight {_fmt(explanation.get('weight'), 2)} = <b>{_fmt(score)}</b>"
        )
        cost = _number(item.get("tokens"))
        if cost is not None:
            maths += f" · {int(cost)} tokens"
        rows.append(
            f'<table width="100%" cellspacing="0" cellpadding="8" '
            f'style="border:1px solid {c.faint.name()}; background-color:{c.card.name()}; '
            f'margin-bottom:6px;"><tr><td>'
            f'<span style="color:{muted};">#{position}</span> '
            f'<span style="color:{hue}; font-weight:600;">'
            f"{html.escape(kind) or 'memory'}</span><br>"
            f"{content}<br>"
            f'<span style="color:{muted}; font-size:small;">found by {legs_text}<br>{maths}</span>'
            f"</td></tr></table>"
        )
    ranked = recall.get("ranked")
    if isinstance(ranked, list) and len(ranked) > len(items):
        left_out = len(ranked) - len(items)
        rows.append(
            f'<p style="color:{muted};">{left_out} more ranked above the minimum score but did '
            "not fit the token budget.</p>"
        )
    return "".join(rows)


class RecallView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.recall: dict[str, Any] | None = None
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        self.stack = QStackedWidget(self)
        outer.addWidget(self.stack)

        self.empty = QLabel(self.stack)
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setProperty("muted", True)
        self.empty.setContentsMargins(28, 0, 28, 0)
        self.stack.addWidget(self.empty)

        page = QWidget(self.stack)
        layout = QVBoxLayout(page)
        layout.setContentsMargins(12, 10, 12, 8)
        layout.setSpacing(6)
        self.caption = QLabel(page)
        self.caption.setProperty("heading", True)
        layout.addWidget(self.caption)
        self.meter_label = QLabel(page)
        layout.addWidget(self.meter_label)
        self.meter = QProgressBar(page)
        self.meter.setTextVisible(False)
        self.meter.setFixedHeight(6)
        layout.addWidget(self.meter)
        self.legs_label = QLabel(page)
        self.legs_label.setWordWrap(True)
        self.legs_label.setProperty("muted", True)
        layout.addWidget(self.legs_label)
        splitter = QSplitter(Qt.Orientation.Vertical, page)
        self.items_view = QTextBrowser(splitter)
        self.items_view.setFrameShape(QFrame.Shape.NoFrame)
        theme.see_through(self.items_view)
        block_box = QWidget(splitter)
        block_layout = QVBoxLayout(block_box)
        block_layout.setContentsMargins(0, 6, 0, 0)
        block_title = QLabel("The exact block sent to the model", block_box)
        block_title.setProperty("heading", True)
        block_layout.addWidget(block_title)
        self.block_view = QPlainTextEdit(block_box)
        self.block_view.setObjectName("RecallBlock")
        self.block_view.setReadOnly(True)
        self.block_view.setFont(theme.monospace_font())
        self.block_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        block_layout.addWidget(self.block_view)
        splitter.addWidget(self.items_view)
        splitter.addWidget(block_box)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout.addWidget(splitter, 1)
        self.stack.addWidget(page)
        self.page = page
        self.show_nothing()

    def show_nothing(self) -> None:
        self.recall = None
        self.empty.setText(
            "After you send a message, this shows exactly which memories recall gave the model. "
            "Choose “Memories used” under any reply to see that turn's."
        )
        self.stack.setCurrentWidget(self.empty)

    def show_no_block(self, caption: str = "", reason: str = "") -> None:
        """No block went with this turn; `reason` says why when it is known."""
        self.recall = None
        why = (
            f"No memory block was sent with this turn: {reason}."
            if reason
            else "No memory block was sent with this turn: nothing matched, memories are off "
            "for this provider, or recall did not finish in time."
        )
        self.empty.setText((caption + "\n\n" if caption else "") + why)
        self.stack.setCurrentWidget(self.empty)

    def show_recall(self, recall: dict[str, Any], caption: str = "Latest turn") -> None:
        self.recall = recall
        c = theme.colours()
        self.caption.setText(caption)
        tokens = _number(recall.get("tokens"))
        budget = _number(recall.get("budget"))
        if tokens is not None and budget:
            share = tokens / budget
            self.meter_label.setText(
                f"{int(tokens):,} of {int(budget):,} tokens ({share:.0%} of the memory budget)"
            )
            self.meter.setRange(0, int(budget))
            self.meter.setValue(min(int(tokens), int(budget)))
            self.meter.show()
        else:
            self.meter_label.setText(
                f"{int(tokens):,} tokens" if tokens is not None else "Token count unknown"
            )
            self.meter.hide()
        legs = recall.get("legs") if isinstance(recall.get("legs"), dict) else {}
        assert isinstance(legs, dict)
        counts = leg_counts(recall)
        parts = [
            f"{leg}: {leg_summary(legs.get(leg), counts.get(leg, 0))}"
            for leg in LEGS
            if leg in legs
        ]
        parts += [
            f"{leg}: {leg_summary(value, counts.get(leg, 0))}"
            for leg, value in legs.items()
            if leg not in LEGS
        ]
        elapsed = _number(recall.get("elapsed_ms"))
        if elapsed is not None:
            parts.append(f"{elapsed:.0f} ms in all")
        self.legs_label.setText(" · ".join(parts) if parts else "")
        self.legs_label.setVisible(bool(parts))
        self.items_view.setHtml(f'<div style="color:{c.text.name()};">{items_html(recall)}</div>')
        block = recall.get("block")
        self.block_view.setPlainText(block if isinstance(block, str) and block else "(empty)")
        self.stack.setCurrentWidget(self.page)
