"""Paints a memory as one compact two-line row for the browser: the fact, then its status,
type, date and entities. Rows have one height, so the view lays out 10k of them cheaply."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from app.look import invisible, theme
from app.look.text_direction import line_option
from app.look.time_text import relative_time
from app.memories.memory_card_delegate import type_colour
from app.memories.memory_list_model import MEMORY_ROLE
from timothy.store import Memory, MemoryStatus
from timothy.store.records import utc_now

Index = QModelIndex | QPersistentModelIndex


def status_colour(status: MemoryStatus, c: theme.Colours) -> QColor:
    return {
        MemoryStatus.ACTIVE: c.success,
        MemoryStatus.STAGED: c.warning,
        MemoryStatus.SUPERSEDED: c.muted,
        MemoryStatus.REJECTED: c.danger,
        MemoryStatus.ARCHIVED: c.muted,
    }[status]


class MemoryRowDelegate(QStyledItemDelegate):
    def __init__(self, parent: QWidget, *, now: Callable[[], datetime] = utc_now) -> None:
        super().__init__(parent)
        self.now = now

    @staticmethod
    def _small(font: QFont) -> QFont:
        small = QFont(font)
        small.setPointSizeF(max(font.pointSizeF() - 1.0, 7.0))
        return small

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        big = QFontMetrics(option.font).height()
        small = QFontMetrics(self._small(option.font)).height()
        return QSize(200, big + small + 18)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        memory = index.data(MEMORY_ROLE)
        if not isinstance(memory, Memory):
            super().paint(painter, option, index)
            return
        c = theme.colours()
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = option.rect.adjusted(6, 1, -6, -1)
        if option.state & QStyle.StateFlag.State_Selected:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(c.card_selected)
            painter.drawRoundedRect(QRectF(rect), 8, 8)
        elif option.state & QStyle.StateFlag.State_MouseOver:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(c.faint)
            painter.drawRoundedRect(QRectF(rect), 8, 8)
        current = memory.status in (MemoryStatus.ACTIVE, MemoryStatus.STAGED)
        inner = rect.adjusted(10, 6, -10, -6)
        metrics = QFontMetrics(option.font)
        first = QRect(inner.x(), inner.y(), inner.width(), metrics.height())
        text = invisible.reveal(" ".join(memory.content.split()))
        painter.setFont(option.font)
        painter.setPen(c.text if current else c.muted)
        # From its own side: an Arabic or Hebrew fact starts at the right.
        painter.drawText(
            QRectF(first),
            metrics.elidedText(text, Qt.TextElideMode.ElideRight, first.width()),
            line_option(text),
        )
        small = self._small(option.font)
        small_metrics = QFontMetrics(small)
        second = QRect(inner.x(), first.bottom() + 3, inner.width(), small_metrics.height())
        painter.setFont(small)
        x = second.x()
        dot = status_colour(memory.status, c)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(dot)
        radius = 3.5
        painter.drawEllipse(QRectF(x, second.center().y() - radius + 1, 2 * radius, 2 * radius))
        x += 11
        parts = [
            (memory.status.value, dot),
            (memory.type.value, type_colour(memory.type) if current else c.muted),
            (relative_time(memory.created_at, self.now()), c.muted),
        ]
        if memory.entities:
            parts.append((", ".join(invisible.reveal(e) for e in memory.entities), c.muted))
        for position, (label, colour) in enumerate(parts):
            if position:
                painter.setPen(c.muted)
                painter.drawText(
                    QRect(x, second.y(), 14, second.height()), Qt.AlignmentFlag.AlignCenter, "·"
                )
                x += 14
            room = second.right() - x
            if room <= 12:
                break
            shown = small_metrics.elidedText(label, Qt.TextElideMode.ElideRight, room)
            painter.setPen(colour)
            painter.drawText(
                QRect(x, second.y(), room, second.height()),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                shown,
            )
            x += small_metrics.horizontalAdvance(shown)
        painter.restore()
