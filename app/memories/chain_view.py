"""A memory's whole version history, oldest to newest: each version's text, status and dates."""

from __future__ import annotations

import html
from collections.abc import Sequence

from PySide6.QtWidgets import QFrame, QTextBrowser, QWidget

from app.look import invisible, theme
from app.look.time_text import exact_time
from app.memories.memory_row_delegate import status_colour
from timothy.store import Memory, MemorySource, MemoryStatus

NOWRAP = "white-space:nowrap;"

SOURCE_WORDS = {
    MemorySource.EXTRACTION: "picked up from a conversation",
    MemorySource.REMEMBER: "saved when you asked",
    MemorySource.MANUAL: "written by you",
    MemorySource.IMPORT: "imported",
    MemorySource.CONSOLIDATION: "merged from similar memories",
}


def chain_html(chain: Sequence[Memory], selected_id: str | None) -> str:
    c = theme.colours()
    muted = c.muted.name()
    parts = [f'<div style="color:{c.text.name()};">']
    total = len(chain)
    for number, memory in enumerate(chain, start=1):
        colour = status_colour(memory.status, c).name()
        chosen = memory.id == selected_id
        border = c.accent.name() if chosen else c.faint.name()
        background = c.card_selected.name() if chosen else c.card.name()
        label = f"version {number} of {total}" if total > 1 else "the only version"
        if memory.status is MemoryStatus.ACTIVE and number == total and total > 1:
            label += " · current"
        about = ", ".join(html.escape(invisible.reveal(e)) for e in memory.entities)
        details = [
            memory.type.value,
            f"{memory.confidence:.0%} sure",
            SOURCE_WORDS.get(memory.source, memory.source.value),
        ]
        if about:
            details.append(f"about {about}")
        dates = []
        if memory.status is MemoryStatus.REJECTED:
            # Rejecting keeps no date of its own; a fact saved active and then taken back
            # still carries its old confirmation, which no longer holds.
            dates.append("rejected: never recalled, kept so it is not proposed again")
        elif memory.last_confirmed_at:
            dates.append(f"confirmed {exact_time(memory.last_confirmed_at)}")
        if memory.last_retrieved_at:
            dates.append(f"last recalled {exact_time(memory.last_retrieved_at)}")
        dates.append(f"id {memory.id}")
        dates_html = " · ".join(f'<span style="{NOWRAP}">{part}</span>' for part in dates)
        text = invisible.reveal_html(
            memory.content, c.invisible_marker.name(), c.invisible_marker_background.name()
        )
        parts.append(
            f'<a name="v{number}"></a>'
            f'<table width="100%" cellspacing="0" cellpadding="8" border="0" '
            f'style="background-color:{background}; border: 1px solid {border}; '
            f'margin-bottom: 2px;"><tr><td>'
            # One line that wraps only between its parts, never inside one, however narrow.
            f'<p style="margin:0;"><span style="color:{colour}; font-weight:600; {NOWRAP}">'
            f"{memory.status.value}</span>"
            f'<span style="color:{muted};"> · </span><span style="color:{muted}; {NOWRAP}">'
            f"{label}</span>"
            f'<span style="color:{muted};"> · </span><span style="color:{muted}; {NOWRAP}">'
            f"{exact_time(memory.created_at)}</span></p>"
            f"{text}<br>"
            f'<span style="color:{muted}; font-size:small;">{" · ".join(details)}<br>'
            f"{dates_html}</span>"
            f"</td></tr></table>"
        )
        if number < total:
            arrow = "edited into" if memory.status is MemoryStatus.SUPERSEDED else "then"
            parts.append(
                f'<p align="center" style="color:{muted}; margin:0; font-size:small;">↓ {arrow}</p>'
            )
    parts.append("</div>")
    return "".join(parts)


class ChainView(QTextBrowser):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setOpenLinks(False)
        theme.see_through(self)
        self.chain: list[Memory] = []

    def show_chain(self, chain: Sequence[Memory], selected_id: str | None) -> None:
        self.chain = list(chain)
        self.setHtml(chain_html(chain, selected_id))
        for number, memory in enumerate(chain, start=1):
            if memory.id == selected_id and number > 1:
                self.scrollToAnchor(f"v{number}")

    def clear_chain(self, message: str = "") -> None:
        self.chain = []
        self.setHtml(f'<p style="color:{theme.colours().muted.name()};">{html.escape(message)}</p>')
