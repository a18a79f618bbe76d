"""Conversations, newest first, under date headings ("Today", "Previous 7 days", "March 2025").

Heading rows cannot be selected; editing a conversation row's text renames it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt, Signal

from app.conversations.chat_port import ConversationSummary
from timothy.store.sessions import clean_title
from timothy.text import strip_invisible

Index = QModelIndex | QPersistentModelIndex
CONVERSATION_ROLE = Qt.ItemDataRole.UserRole + 10
HEADING_ROLE = Qt.ItemDataRole.UserRole + 11


def heading_for(moment: datetime, now: datetime) -> str:
    local, today = moment.astimezone(), now.astimezone()
    days = (today.date() - local.date()).days
    if days <= 0:
        return "Today"
    if days == 1:
        return "Yesterday"
    if days < 7:
        return "Previous 7 days"
    if days < 30:
        return "Previous 30 days"
    return local.strftime("%B %Y")


def _shows(title: str) -> bool:
    """Whether a title has a character one can see (not only zero-width or control ones,
    which would make a blank row)."""
    return any(char.isprintable() and not char.isspace() for char in strip_invisible(title))


class ConversationListModel(QAbstractListModel):
    rename_requested = Signal(str, str)  # conversation id, new title

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[str | ConversationSummary] = []

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008 (Qt's API)
        return 0 if parent.isValid() else len(self.rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not 0 <= index.row() < len(self.rows):
            return None
        row = self.rows[index.row()]
        if isinstance(row, str):
            if role in (Qt.ItemDataRole.DisplayRole, HEADING_ROLE):
                return row
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole):
            return row.title
        if role == CONVERSATION_ROLE:
            return row
        if role == Qt.ItemDataRole.ToolTipRole:
            return row.title
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        if isinstance(self.rows[index.row()], str):
            return Qt.ItemFlag.NoItemFlags
        return Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEditable

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.EditRole or not index.isValid():
            return False
        row = self.rows[index.row()]
        title = clean_title(str(value))  # as the store keeps it: one line, not too long
        if isinstance(row, str) or not _shows(title) or title == row.title:
            return False
        self.rows[index.row()] = replace(row, title=title)
        self.dataChanged.emit(index, index)
        self.rename_requested.emit(row.id, title)
        return True

    def set_conversations(
        self, conversations: Sequence[ConversationSummary], now: datetime, *, headings: bool
    ) -> None:
        self.beginResetModel()
        self.rows = []
        last = ""
        for conversation in conversations:
            if headings:
                heading = heading_for(conversation.updated_at, now)
                if heading != last:
                    self.rows.append(heading)
                    last = heading
            self.rows.append(conversation)
        self.endResetModel()

    def conversations(self) -> list[ConversationSummary]:
        return [row for row in self.rows if not isinstance(row, str)]

    def row_of(self, conversation_id: str) -> int:
        for position, row in enumerate(self.rows):
            if not isinstance(row, str) and row.id == conversation_id:
                return position
        return -1

    def conversation_at(self, row: int) -> ConversationSummary | None:
        if 0 <= row < len(self.rows):
            item = self.rows[row]
            return None if isinstance(item, str) else item
        return None
