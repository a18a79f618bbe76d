"""*Last recall*: what the model saw for a turn. The exact memory block, its tokens against the
budget, and for each memory the legs that found it, its ranks, and how its score was made.

It renders the turn's `RecallRecord` (the same record `timothy recall --json` prints).
"""

from __future__ import annotations

import html
from collections import Counter

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
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
from app.look.text_direction import block_html
from app.memories.memory_card_delegate import type_colour
from timothy.store.records import RECALL_LEGS, BelowFloorMemory, RecalledMemory, RecallRecord


def leg_counts(recall: RecallRecord) -> Counter[str]:
    """How many ranked candidates each leg found (recall reports only "ok" per leg)."""
    return Counter(leg for candidate in recall.ranked for leg in candidate.legs)


def leg_summary(status: str, found: int) -> str:
    """One leg's outcome as words: "12 found", "off", "failed: ..."."""
    return f"{found} found" if status == "ok" else status


ORDER_NOTE = (
    "Numbered by rank. The block lists them in a deliberate order, best first and second best "
    "last (serial-position order: a model attends most to the start and the end of a list)."
)


def _item_html(item: RecalledMemory, ranks: dict[str, int] | None = None) -> str:
    """One packed memory; `ranks` (id -> rank) names the hit it was said beside."""
    c = theme.colours()
    muted = c.muted.name()
    content = invisible.reveal_html(
        item.content, c.invisible_marker.name(), c.invisible_marker_background.name()
    )
    found = [f"<b>{html.escape(leg)}</b> #{item.ranks[leg]}" for leg in item.legs]
    legs_text = "found by " + (" · ".join(found) or "–")
    if item.beside is not None:
        hit = (ranks or {}).get(item.beside)
        beside = f"said beside #{hit}" if hit else "said beside a top hit"
        legs_text = f"{legs_text} · {beside}" if found else beside
    maths = f"rrf {item.rrf:.4f} × decay {item.decay:.3f} × weight {item.weight:.2f}"
    if item.beside is not None:
        maths = f"({maths} + beside {item.context:.4f})"
    if item.time != 1.0:
        maths += f" × named day {item.time:g}"
    maths += f" = <b>{item.score:.4f}</b>"
    if item.tokens is not None:
        maths += f" · {item.tokens} tokens"
    return (
        f'<table width="100%" cellspacing="0" cellpadding="8" '
        f'style="border:1px solid {c.faint.name()}; background-color:{c.card.name()}; '
        f'margin-bottom:6px;"><tr><td>'
        f'<span style="color:{muted};">#{item.rank}</span> '
        f'<span style="color:{type_colour(item.type).name()}; font-weight:600;">'
        f"{html.escape(item.type.value)}</span>"
        f"{block_html(content, item.content)}"
        f'<div style="color:{muted}; font-size:small;">{legs_text}<br>{maths}</div>'
        f"</td></tr></table>"
    )


BELOW_FLOOR_NOTE = (
    "Found but not sent: below the relevance floor. A search leg found each of these, but "
    "none had real evidence that it bears on the message, so the model never saw them."
)


def _greyed_card(memory: BelowFloorMemory | RecalledMemory, label: str, detail: str) -> str:
    """A memory the model never saw, greyed: its type and `label`, its text, `detail`."""
    c = theme.colours()
    muted = c.muted.name()
    content = invisible.reveal_html(
        memory.content, c.invisible_marker.name(), c.invisible_marker_background.name()
    )
    greyed = f'<span style="color:{muted};">{content}</span>'
    return (
        f'<table width="100%" cellspacing="0" cellpadding="8" '
        f'style="border:1px dashed {c.faint.name()}; margin-bottom:6px;"><tr><td>'
        f'<span style="color:{muted};">{html.escape(memory.type.value)} · {label}</span>'
        f"{block_html(greyed, memory.content)}"
        f'<div style="color:{muted}; font-size:small;">{detail}</div>'
        f"</td></tr></table>"
    )


def _greyed_section(note: str, cards: list[str]) -> str:
    if not cards:
        return ""
    muted = theme.colours().muted.name()
    return f'<p style="color:{muted};">{note}</p>' + "".join(cards)


def _below_floor_html(memory: BelowFloorMemory) -> str:
    """A candidate no leg admitted: what it is and why each leg let it go."""
    reasons = "<br>".join(
        f"<b>{html.escape(leg)}</b> #{verdict.rank}: {html.escape(verdict.why)}"
        for leg, verdict in memory.floors.items()
    )
    return _greyed_card(memory, "below the floor", reasons)


def below_floor_html(recall: RecallRecord) -> str:
    return _greyed_section(BELOW_FLOOR_NOTE, [_below_floor_html(m) for m in recall.below_floor])


FADED_NOTE = (
    "Found but faded: relevant, but unconfirmed for so long that its score fell under the "
    "minimum, so the model never saw it. Confirming it (Still true?) brings it back."
)


def _faded_html(memory: RecalledMemory) -> str:
    """A relevant memory time took out: how long unconfirmed, and its score."""
    found = " · ".join(f"<b>{html.escape(leg)}</b> #{memory.ranks[leg]}" for leg in memory.legs)
    maths = (
        f"rrf {memory.rrf:.4f} × decay {memory.decay:.3f} × weight {memory.weight:.2f} = "
        f"<b>{memory.score:.4f}</b>"
    )
    label = f"faded, unconfirmed for {memory.days_unconfirmed:,.0f} days"
    return _greyed_card(memory, label, f"found by {found or '–'}<br>{maths}")


def faded_html(recall: RecallRecord) -> str:
    return _greyed_section(FADED_NOTE, [_faded_html(m) for m in recall.faded])


def items_html(recall: RecallRecord) -> str:
    muted = theme.colours().muted.name()
    if not recall.items:
        if recall.below_floor and not recall.ranked and not recall.faded:
            why = "nothing it found cleared the relevance floor"
        elif recall.faded and not recall.ranked:
            why = "what it found has faded, unconfirmed for too long"
        else:
            why = "none matched well enough, or none fitted the budget"
        return (
            f'<p style="color:{muted};">No memory was packed into the block for this turn '
            f"({why}).</p>" + faded_html(recall) + below_floor_html(recall)
        )
    ranks = {candidate.id: candidate.rank for candidate in recall.ranked}
    rows = [_item_html(item, ranks) for item in recall.items]  # in the block's order
    if len(recall.items) > 1:
        rows.insert(0, f'<p style="color:{muted}; font-size:small;">{ORDER_NOTE}</p>')
    if len(recall.ranked) > len(recall.items):
        left_out = len(recall.ranked) - len(recall.items)
        rows.append(
            f'<p style="color:{muted};">{left_out} more ranked above the minimum score but did '
            "not fit the token budget.</p>"
        )
    rows.append(faded_html(recall))
    rows.append(below_floor_html(recall))
    return "".join(rows)


class RecallView(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.recall: RecallRecord | None = None
        # A record shown while this view is hidden waits here, and is rendered when the view
        # is shown or its lists are read (the turn's list is ~5 ms of HTML: at start, the
        # opened conversation's last record arrives while the tab is hidden).
        self._unrendered: RecallRecord | None = None
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
        self._legs_label = QLabel(page)
        self._legs_label.setWordWrap(True)
        self._legs_label.setProperty("muted", True)
        layout.addWidget(self._legs_label)
        splitter = QSplitter(Qt.Orientation.Vertical, page)
        self._items_view = QTextBrowser(splitter)
        self._items_view.setFrameShape(QFrame.Shape.NoFrame)
        theme.see_through(self._items_view)
        block_box = QWidget(splitter)
        block_layout = QVBoxLayout(block_box)
        block_layout.setContentsMargins(0, 6, 0, 0)
        block_title = QLabel("The exact block sent to the model", block_box)
        block_title.setProperty("heading", True)
        block_layout.addWidget(block_title)
        self._block_view = QPlainTextEdit(block_box)
        self._block_view.setObjectName("RecallBlock")
        self._block_view.setReadOnly(True)
        self._block_view.setFont(theme.monospace_font())
        self._block_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        block_layout.addWidget(self._block_view)
        splitter.addWidget(self._items_view)
        splitter.addWidget(block_box)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout.addWidget(splitter, 1)
        self.stack.addWidget(page)
        self.page = page
        self.show_nothing()

    @property
    def legs_label(self) -> QLabel:
        """Each leg's outcome and recall's time (a record waiting to be rendered is first)."""
        self._render()
        return self._legs_label

    @property
    def items_view(self) -> QTextBrowser:
        """The turn's memories, as listed (a record waiting to be rendered is first)."""
        self._render()
        return self._items_view

    @property
    def block_view(self) -> QPlainTextEdit:
        """The exact block sent to the model (a record waiting to be rendered is first)."""
        self._render()
        return self._block_view

    def showEvent(self, event: QShowEvent) -> None:
        self._render()
        super().showEvent(event)

    def _render(self) -> None:
        recall, self._unrendered = self._unrendered, None
        if recall is None:
            return
        # Each leg's count reads the ranked list, which a stored record reads only when
        # first used (ReadLater): the Last recall tab hidden at start leaves it unread.
        counts = leg_counts(recall)
        parts = [
            f"{leg}: {leg_summary(recall.legs[leg], counts[leg])}"
            for leg in RECALL_LEGS
            if leg in recall.legs
        ]
        parts.append(f"{recall.elapsed_ms:.0f} ms in all")
        self._legs_label.setText(" · ".join(parts))
        c = theme.colours()
        self._items_view.setHtml(f'<div style="color:{c.text.name()};">{items_html(recall)}</div>')
        self._block_view.setPlainText(recall.block or "(empty)")

    def show_nothing(self) -> None:
        self.recall = None
        self._unrendered = None
        self.empty.setText(
            "After you send a message, this shows exactly which memories recall gave the model. "
            "Choose “Memories used” under any reply to see that turn's."
        )
        self.stack.setCurrentWidget(self.empty)

    def show_no_block(self, caption: str = "", reason: str = "") -> None:
        """No block went with this turn; `reason` says why when it is known."""
        self.recall = None
        self._unrendered = None
        why = (
            f"No memory block was sent with this turn: {reason}."
            if reason
            else "No memory block was sent with this turn: nothing matched, memories are off "
            "for this provider, or recall did not finish in time."
        )
        self.empty.setText((caption + "\n\n" if caption else "") + why)
        self.stack.setCurrentWidget(self.empty)

    def memory_forgotten(self, memory_id: str) -> None:
        """A memory was forgotten for good: a record on show that names it holds words the
        store no longer keeps, so it goes (the turn's redacted record is read again)."""
        recall = self.recall
        if recall is None:
            return
        named = {m.id for m in (*recall.items, *recall.ranked, *recall.faded)}
        named.update(m.id for m in recall.below_floor)
        if memory_id not in named:
            return
        self.recall = None
        self._unrendered = None
        self._items_view.clear()
        self._block_view.clear()
        self.empty.setText(
            "This turn's memory block named a memory you forgot for good. Choose “Memories "
            "used” under a reply to see its block as it is kept now."
        )
        self.stack.setCurrentWidget(self.empty)

    def show_recall(self, recall: RecallRecord, caption: str = "Latest turn") -> None:
        self.recall = recall
        self.caption.setText(caption)
        if recall.budget:
            share = recall.tokens / recall.budget
            self.meter_label.setText(
                f"{recall.tokens:,} of {recall.budget:,} tokens ({share:.0%} of the memory budget)"
            )
            self.meter.setRange(0, recall.budget)
            self.meter.setValue(min(recall.tokens, recall.budget))
            self.meter.show()
        else:
            self.meter_label.setText(f"{recall.tokens:,} tokens")
            self.meter.hide()
        self._legs_label.setVisible(True)
        self._unrendered = recall
        if self.isVisible():
            self._render()
        self.stack.setCurrentWidget(self.page)
