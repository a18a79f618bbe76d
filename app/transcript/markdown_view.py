"""A whole reply as Markdown: prose pieces and code blocks, updated in place as text streams in.

Only segments whose text changed are touched, so appending to a long reply re-renders just
its last segment.
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

    def set_markdown(self, text: str) -> None:
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
