"""A whole reply as Markdown: prose pieces and code blocks, updated in place as text streams in.

Only segments whose text changed are touched, so appending to a long reply re-renders just
its last segment.

A reply shown whole (a conversation opened) can be built a part at a time instead
(`set_markdown_in_parts`, then `build_next_part` until `unfinished` is false): its prose and
code blocks each cost a few milliseconds to make and as much again to lay out and paint, so
the transcript spreads a long reply over several turns of the event loop. A reply streaming in
is given a time budget per repaint for its new parts (`set_markdown(text, budget_ms=...)`):
a repaint that brought several code blocks at once made them all in one go, 40-60 ms, and
the longer repaint then spaced the next ones further apart, each bringing more.
"""

from __future__ import annotations

import time

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QVBoxLayout, QWidget

from app.transcript.code_block import CodeBlock
from app.transcript.markdown_blocks import Segment, split_markdown
from app.transcript.prose_view import ProseView


class MarkdownView(QWidget):
    code_copied = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.layout_ = QVBoxLayout(self)
        self.layout_.setContentsMargins(0, 0, 0, 0)
        self.layout_.setSpacing(10)
        # Grown to hold a new part before its parts are laid out: otherwise a part added
        # squeezed every other one for a pass (the reply still had its old height) and the
        # next let them grow back, two resizes of each code block at every repaint of a
        # streaming reply (~3,800 in a reply of 40 blocks, each re-measuring its lines).
        self.layout_.setSizeConstraint(QVBoxLayout.SizeConstraint.SetMinimumSize)
        self.segments: list[Segment] = []
        self.parts: list[ProseView | CodeBlock] = []
        self.text = ""
        self._later: list[Segment] = []  # the segments of a reply built in parts, not made yet

    @property
    def unfinished(self) -> bool:
        """Parts of a reply built in parts are still to be made (`build_next_part`)."""
        return bool(self._later)

    def set_markdown_in_parts(self, text: str) -> None:
        """Show `text`, making only its first part now; the rest wait for `build_next_part`
        (or the next `set_markdown`, which makes whatever still waits first)."""
        self.finish()
        if text == self.text:
            return
        if self.parts:
            self.set_markdown(text)
            return
        self.text = text
        self.segments = split_markdown(text)
        self._later = list(self.segments)
        self.build_next_part()

    def build_next_part(self) -> bool:
        """Make the next waiting part; whether more still wait."""
        if self._later:
            part = self._create(self._later.pop(0))
            self.parts.append(part)
            self.layout_.addWidget(part)
        return bool(self._later)

    def finish(self) -> None:
        """Make every part still waiting."""
        while self.build_next_part():
            pass

    def set_markdown(self, text: str, *, budget_ms: float | None = None) -> None:
        """Show `text`. With `budget_ms` (a reply streaming in), new parts are made until
        that much time has gone by, one at least; the rest wait for the next call (with the
        same text or more) or `build_next_part`. Without it, every part is made now."""
        if budget_ms is None:
            self.finish()
        if text == self.text:
            if budget_ms is not None:
                self._build_for(budget_ms)
            return
        started = time.perf_counter()
        self.text = text
        segments = split_markdown(text)
        self._later = []
        made = 0
        for index, segment in enumerate(segments):
            if index < len(self.parts) and self._fits(self.parts[index], segment):
                if self.segments[index] != segment:
                    self._update(self.parts[index], segment)
                continue
            self._drop_from(index)
            if budget_ms is not None and made and _since(started) >= budget_ms:
                self._later = segments[index:]
                break
            self.parts.append(self._create(segment))
            self.layout_.addWidget(self.parts[-1])
            made += 1
        self._drop_from(len(segments))
        self.segments = segments

    def _build_for(self, budget_ms: float) -> None:
        """Make waiting parts until `budget_ms` has gone by (one at least)."""
        started = time.perf_counter()
        while self.build_next_part() and _since(started) < budget_ms:
            pass

    def _drop_from(self, index: int) -> None:
        """Take away the parts from `index` on."""
        for stale in self.parts[index:]:
            self.layout_.removeWidget(stale)
            stale.deleteLater()
        del self.parts[index:]

    def _fits(self, part: ProseView | CodeBlock, segment: Segment) -> bool:
        if segment.kind == "code":
            return isinstance(part, CodeBlock) and part.language == segment.language
        return isinstance(part, ProseView)

    def _create(self, segment: Segment) -> ProseView | CodeBlock:
        if segment.kind == "code":
            block = CodeBlock(segment.text, segment.language, self)
            block.code_copied.connect(self.code_copied)
            return block
        prose = ProseView(self)
        prose.set_markdown(segment.text)
        return prose

    def _update(self, part: ProseView | CodeBlock, segment: Segment) -> None:
        if isinstance(part, CodeBlock):
            part.set_code(segment.text)
        else:
            part.set_markdown(segment.text)

    def code_blocks(self) -> list[CodeBlock]:
        return [part for part in self.parts if isinstance(part, CodeBlock)]


def _since(started: float) -> float:
    """Milliseconds since `started` (time.perf_counter)."""
    return (time.perf_counter() - started) * 1000
