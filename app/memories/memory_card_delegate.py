"""Paints a memory as a card: type, confidence, the fact (invisible characters shown), entities,
and where it came from, with the source conversation as a link.

One delegate paints every card, so a queue of hundreds costs no widgets; `_layout` is the
single source of geometry for painting, sizing and hit-testing the link.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QPersistentModelIndex,
    QRect,
    QRectF,
    QSize,
    Qt,
    Signal,
)
from PySide6.QtGui import (
    QAbstractTextDocumentLayout,
    QColor,
    QFont,
    QFontMetrics,
    QMouseEvent,
    QPainter,
    QPalette,
    QPen,
    QTextDocument,
)
from PySide6.QtWidgets import QAbstractItemView, QStyle, QStyledItemDelegate, QStyleOptionViewItem

from app.look import invisible, theme
from app.look.time_text import exact_time, relative_time
from app.memories.memory_list_model import MEMORY_ROLE, NOTE_ROLE, SOURCE_TITLE_ROLE
from timothy.store import Memory, MemorySource, MemoryType
from timothy.store.records import utc_now

Index = QModelIndex | QPersistentModelIndex

OUTER_X, OUTER_Y, PAD = 8, 5, 12
GAP = 6

TYPE_HUES = {
    MemoryType.SEMANTIC: QColor("#3d7bfd"),
    MemoryType.PREFERENCE: QColor("#9b5de5"),
    MemoryType.EPISODIC: QColor("#e09b2d"),
    MemoryType.PROCEDURAL: QColor("#18a999"),
}


def type_colour(kind: MemoryType) -> QColor:
    return TYPE_HUES.get(kind, QColor("#888888"))


def source_text(memory: Memory, title: str | None) -> tuple[str, bool]:
    """What to say about the memory's origin, and whether it links to a conversation."""
    if memory.session_id:
        verb = {
            MemorySource.REMEMBER: "Saved when you asked, in",
            MemorySource.EXTRACTION: "Picked up in",
        }.get(memory.source, "From")
        name = f"“{title}”" if title else "a conversation"
        return f"{verb} {name}", True
    return {
        MemorySource.MANUAL: "Added by you",
        MemorySource.IMPORT: "Imported",
        MemorySource.CONSOLIDATION: "Merged from similar memories",
        MemorySource.REMEMBER: "Saved when you asked",
        MemorySource.EXTRACTION: "Picked up from a conversation",
    }.get(memory.source, memory.source.value), False


@dataclass
class CardLayout:
    card: QRect
    header_y: int
    note: str  # why the card is listed ("Not confirmed for 2 years and 5 months"), or ""
    note_rect: QRect
    document: QTextDocument
    text_rect: QRect
    warning: str
    warning_rect: QRect
    chips: list[tuple[str, QRect]]
    source: str
    source_rect: QRect
    source_is_link: bool
    height: int


class MemoryCardDelegate(QStyledItemDelegate):
    source_clicked = Signal(str)  # the session id of the memory's conversation

    def __init__(self, view: QAbstractItemView, *, now: Callable[[], datetime] = utc_now) -> None:
        super().__init__(view)
        self.view = view
        self.now = now
        self._documents: dict[tuple[str, int, str], QTextDocument] = {}
        self._layouts: dict[tuple[object, ...], CardLayout] = {}
        view.setMouseTracking(True)

    # -- geometry ----------------------------------------------------------------------

    @staticmethod
    def small_font(font: QFont) -> QFont:
        small = QFont(font)
        small.setPointSizeF(max(font.pointSizeF() - 1.0, 7.0))
        return small

    def _document(self, memory: Memory, width: int, font: QFont) -> QTextDocument:
        colours = theme.colours()
        colour = colours.invisible_marker.name()
        key = (memory.id, width, colour)
        document = self._documents.get(key)
        if document is None:
            if len(self._documents) > 600:
                self._documents.clear()
            document = QTextDocument()
            document.setDocumentMargin(0)
            document.setDefaultFont(font)
            document.setHtml(
                invisible.reveal_html(
                    memory.content, colour, colours.invisible_marker_background.name()
                )
            )
            document.setTextWidth(width)
            self._documents[key] = document
        return document

    def _layout(
        self, rect: QRect, memory: Memory, title: str | None, font: QFont, note: str = ""
    ) -> CardLayout:
        """The card's geometry inside `rect` (measured once per memory, note, width and font)."""
        key = (
            memory,
            rect.width(),
            title,
            note,
            font.key(),
            theme.colours().invisible_marker.name(),
        )
        base = self._layouts.get(key)
        if base is None:
            if len(self._layouts) > 2000:
                self._layouts.clear()
            base = self._measure(
                QRect(0, 0, rect.width(), rect.height()), memory, title, font, note
            )
            self._layouts[key] = base
        if rect.topLeft().isNull():
            return base
        offset = rect.topLeft()
        return CardLayout(
            card=base.card.translated(offset),
            header_y=base.header_y + offset.y(),
            note=base.note,
            note_rect=base.note_rect.translated(offset),
            document=base.document,
            text_rect=base.text_rect.translated(offset),
            warning=base.warning,
            warning_rect=base.warning_rect.translated(offset),
            chips=[(label, chip.translated(offset)) for label, chip in base.chips],
            source=base.source,
            source_rect=base.source_rect.translated(offset),
            source_is_link=base.source_is_link,
            height=base.height,
        )

    def _measure(
        self, rect: QRect, memory: Memory, title: str | None, font: QFont, note: str = ""
    ) -> CardLayout:
        card = rect.adjusted(OUTER_X, OUTER_Y, -OUTER_X, -OUTER_Y)
        inner_x = card.x() + PAD
        width = max(card.width() - 2 * PAD, 40)
        small = QFontMetrics(self.small_font(font))
        y = card.y() + PAD
        header_y = y
        y += small.height() + 6 + GAP
        note_rect = QRect()
        if note:
            note_rect = QRect(inner_x, y, width, small.height())
            y += small.height() + GAP
        document = self._document(memory, width, font)
        text_height = int(document.size().height())
        text_rect = QRect(inner_x, y, width, text_height)
        y += text_height
        hidden = invisible.invisible_characters(memory.content)
        warning = ""
        warning_rect = QRect()
        if hidden:
            codes = ", ".join(f"U+{ord(char):04X}" for char in hidden[:4])
            more = "…" if len(hidden) > 4 else ""
            noun = "character" if len(hidden) == 1 else "characters"
            warning = f"⚠ Contains invisible {noun}: {codes}{more}"
            y += 4
            warning_rect = QRect(inner_x, y, width, small.height())
            y += small.height()
        chips: list[tuple[str, QRect]] = []
        if memory.entities:
            y += GAP
            x = inner_x
            chip_h = small.height() + 4
            for name in memory.entities:
                label = invisible.reveal(name)
                chip_w = small.horizontalAdvance(label) + 14
                if x > inner_x and x + chip_w > inner_x + width:
                    x = inner_x
                    y += chip_h + 4
                chips.append((label, QRect(x, y, min(chip_w, width), chip_h)))
                x += chip_w + 5
            y += chip_h
        source, is_link = source_text(memory, title)
        y += GAP
        source_width = min(small.horizontalAdvance(source) + 2, width)
        source_rect = QRect(inner_x, y, source_width, small.height())
        y += small.height()
        height = y + PAD - card.y() + 2 * OUTER_Y
        return CardLayout(
            card=QRect(card.x(), card.y(), card.width(), height - 2 * OUTER_Y),
            header_y=header_y,
            note=note,
            note_rect=note_rect,
            document=document,
            text_rect=text_rect,
            warning=warning,
            warning_rect=warning_rect,
            chips=chips,
            source=source,
            source_rect=source_rect,
            source_is_link=is_link,
            height=height,
        )

    def _width(self, option: QStyleOptionViewItem) -> int:
        return max(self.view.viewport().width(), 200)

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        memory = index.data(MEMORY_ROLE)
        if not isinstance(memory, Memory):
            return super().sizeHint(option, index)
        width = self._width(option)
        layout = self._layout(
            QRect(0, 0, width, 0),
            memory,
            index.data(SOURCE_TITLE_ROLE),
            option.font,
            index.data(NOTE_ROLE) or "",
        )
        return QSize(width, layout.height)

    # -- painting ----------------------------------------------------------------------

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        memory = index.data(MEMORY_ROLE)
        if not isinstance(memory, Memory):
            super().paint(painter, option, index)
            return
        c = theme.colours()
        layout = self._layout(
            option.rect,
            memory,
            index.data(SOURCE_TITLE_ROLE),
            option.font,
            index.data(NOTE_ROLE) or "",
        )
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        hovered = bool(option.state & QStyle.StateFlag.State_MouseOver)
        focused = bool(option.state & QStyle.StateFlag.State_HasFocus)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        border = (
            c.accent if selected else (theme.blend(c.text, c.base, 0.25) if hovered else c.faint)
        )
        painter.setPen(QPen(border, 1.5 if selected and focused else 1.0))
        painter.setBrush(c.card_selected if selected else c.card)
        painter.drawRoundedRect(QRectF(layout.card).adjusted(0.5, 0.5, -0.5, -0.5), 10, 10)

        small = self.small_font(option.font)
        metrics = QFontMetrics(small)
        # header: type chip, confidence, time
        painter.setFont(small)
        hue = type_colour(memory.type)
        chip_text = memory.type.value
        chip = QRect(
            layout.card.x() + PAD,
            layout.header_y,
            metrics.horizontalAdvance(chip_text) + 14,
            metrics.height() + 6,
        )
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(theme.blend(hue, c.base, 0.22 if c.dark else 0.13))
        painter.drawRoundedRect(QRectF(chip), chip.height() / 2, chip.height() / 2)
        painter.setPen(
            theme.blend(hue, c.text, 0.85) if not c.dark else theme.blend(hue, c.text, 0.6)
        )
        painter.drawText(chip, Qt.AlignmentFlag.AlignCenter, chip_text)
        painter.setPen(c.muted)
        confidence = f"{memory.confidence:.0%} sure"
        painter.drawText(
            QRect(chip.right() + 8, chip.y(), 120, chip.height()),
            Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft,
            confidence,
        )
        when = relative_time(memory.created_at, self.now())
        painter.drawText(
            QRect(layout.card.x(), chip.y(), layout.card.width() - PAD, chip.height()),
            Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignRight,
            when,
        )

        if layout.note:
            painter.setPen(c.warning)
            painter.drawText(
                layout.note_rect,
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                metrics.elidedText(
                    layout.note, Qt.TextElideMode.ElideRight, layout.note_rect.width()
                ),
            )

        # the fact
        painter.translate(layout.text_rect.topLeft())
        context = QAbstractTextDocumentLayout.PaintContext()
        context.palette.setColor(QPalette.ColorRole.Text, c.text)
        layout.document.documentLayout().draw(painter, context)
        painter.translate(-layout.text_rect.topLeft())

        painter.setFont(small)
        if layout.warning:
            painter.setPen(c.invisible_marker)
            painter.drawText(layout.warning_rect, Qt.AlignmentFlag.AlignLeft, layout.warning)
        for label, rect in layout.chips:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(c.faint)
            painter.drawRoundedRect(QRectF(rect), rect.height() / 2, rect.height() / 2)
            painter.setPen(c.text)
            painter.drawText(
                rect,
                Qt.AlignmentFlag.AlignCenter,
                metrics.elidedText(label, Qt.TextElideMode.ElideRight, rect.width() - 10),
            )
        if layout.source_is_link:
            link_font = QFont(small)
            link_font.setUnderline(hovered)
            painter.setFont(link_font)
            painter.setPen(c.accent)
        else:
            painter.setPen(c.muted)
        source = metrics.elidedText(
            layout.source, Qt.TextElideMode.ElideRight, layout.source_rect.width()
        )
        painter.drawText(layout.source_rect, Qt.AlignmentFlag.AlignLeft, source)
        painter.restore()

    # -- the link ----------------------------------------------------------------------

    def editorEvent(
        self, event: QEvent, model: object, option: QStyleOptionViewItem, index: Index
    ) -> bool:
        memory = index.data(MEMORY_ROLE)
        if not isinstance(memory, Memory) or not isinstance(event, QMouseEvent):
            return False
        layout = self._layout(
            option.rect,
            memory,
            index.data(SOURCE_TITLE_ROLE),
            option.font,
            index.data(NOTE_ROLE) or "",
        )
        on_link = layout.source_is_link and layout.source_rect.contains(event.position().toPoint())
        if event.type() == QEvent.Type.MouseMove:
            cursor = Qt.CursorShape.PointingHandCursor if on_link else Qt.CursorShape.ArrowCursor
            self.view.viewport().setCursor(cursor)
            return False
        if (
            event.type() == QEvent.Type.MouseButtonRelease
            and event.button() == Qt.MouseButton.LeftButton
            and on_link
            and memory.session_id
        ):
            self.source_clicked.emit(memory.session_id)
            return True
        return False

    def tooltip_for(self, memory: Memory) -> str:
        return f"Created {exact_time(memory.created_at)}"
