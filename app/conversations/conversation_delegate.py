"""Paints the conversation list: small muted headings, titles in rounded rows, and under a
title the matching text when the list shows search results."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics, QPainter
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from app.conversations.chat_port import ConversationSummary
from app.conversations.conversation_list_model import CONVERSATION_ROLE, HEADING_ROLE
from app.look import theme

Index = QModelIndex | QPersistentModelIndex


class ConversationDelegate(QStyledItemDelegate):
    @staticmethod
    def _small(font: QFont) -> QFont:
        small = QFont(font)
        small.setPointSizeF(max(font.pointSizeF() - 1.0, 7.0))
        return small

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        metrics = QFontMetrics(option.font)
        if index.data(HEADING_ROLE):
            return QSize(100, QFontMetrics(self._small(option.font)).height() + 16)
        conversation = index.data(CONVERSATION_ROLE)
        lines = metrics.height() + 14
        if isinstance(conversation, ConversationSummary) and conversation.snippet:
            lines += QFontMetrics(self._small(option.font)).height() + 2
        return QSize(100, lines)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        c = theme.colours()
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        heading = index.data(HEADING_ROLE)
        if heading:
            small = self._small(option.font)
            small.setWeight(QFont.Weight.DemiBold)
            painter.setFont(small)
            painter.setPen(c.muted)
            painter.drawText(
                option.rect.adjusted(14, 8, -8, 0),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                str(heading),
            )
            painter.restore()
            return
        conversation = index.data(CONVERSATION_ROLE)
        rect = option.rect.adjusted(6, 1, -6, -1)
        if option.state & QStyle.StateFlag.State_Selected:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(c.card_selected)
            painter.drawRoundedRect(QRectF(rect), 8, 8)
        elif option.state & QStyle.StateFlag.State_MouseOver:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(c.faint)
            painter.drawRoundedRect(QRectF(rect), 8, 8)
        if isinstance(conversation, ConversationSummary):
            inner = rect.adjusted(10, 7, -10, -7)
            metrics = QFontMetrics(option.font)
            painter.setFont(option.font)
            painter.setPen(c.text)
            title_rect = QRect(inner.x(), inner.y(), inner.width(), metrics.height())
            painter.drawText(
                title_rect,
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                metrics.elidedText(conversation.title, Qt.TextElideMode.ElideRight, inner.width()),
            )
            if conversation.snippet:
                small = self._small(option.font)
                small_metrics = QFontMetrics(small)
                painter.setFont(small)
                painter.setPen(c.muted)
                snippet = " ".join(conversation.snippet.split())
                painter.drawText(
                    QRect(
                        inner.x(), title_rect.bottom() + 3, inner.width(), small_metrics.height()
                    ),
                    Qt.AlignmentFlag.AlignLeft,
                    small_metrics.elidedText(snippet, Qt.TextElideMode.ElideRight, inner.width()),
                )
        painter.restore()
