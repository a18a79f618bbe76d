"""A whole reply as Markdown: prose pieces and code blocks, updated in place as text streams in.

Only segments whose text changed are touched, so appending to a long reply re-renders just
its last segment.

A reply shown whole (a conversation opened) can be built a part at a time instead
(`set_markdown_in_parts`, then `build_next_part` until `unfinished` is false): its prose and
code blocks each cost a few milliseconds to make and as much again to lay out and paint, so
the transcript spreads a long reply over several turns of the event loop.
"""

from __future__ import annotations

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

    def set_markdown(self, text: str) -> None:
        self.finish()
        if text == self.text:
            return
        self.text = text
        segments = split_markdown(text)
        for index, segment in enumerate(segments):
            if index < len(self.parts) and self._fits(self.parts[index], segment):
                if self.segments[index] != segment:
                    self._update(self.parts[index], segment)
                continue
            for stale in self.parts[index:]:
                self.layout_.removeWidget(stale)
                stale.deleteLater()
            del self.parts[index:]
            self.parts.append(self._create(segment))
            self.layout_.addWidget(self.parts[-1])
        for stale in self.parts[len(segments) :]:
            self.layout_.removeWidget(stale)
            stale.deleteLater()
        del self.parts[len(segments) :]
        self.segments = segments

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
