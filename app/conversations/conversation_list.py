"""The left pane: New chat, a search over titles and message text, and the conversations.

It only shows and asks: loading, searching, renaming and deleting are done by whoever
listens (the window, through the chat engine), on workers.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from PySide6.QtCore import (
    QEvent,
    QItemSelectionModel,
    QModelIndex,
    QObject,
    QPoint,
    Qt,
    QTimer,
    Signal,
)
from PySide6.QtGui import QKeyEvent, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QPushButton,
    QStackedWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from app.conversations.chat_port import ConversationSummary
from app.conversations.conversation_delegate import ConversationDelegate
from app.conversations.conversation_list_model import ConversationListModel
from app.look import icons
from app.look.search_escape import empties_on_escape
from app.look.tips import set_tip

SEARCH_DELAY_MS = 200


class ConversationList(QWidget):
    conversation_selected = Signal(str)
    new_chat_requested = Signal()
    temporary_chat_switched = Signal(bool)  # the state the owner chose for temporary chat
    conversation_renamed = Signal(str, str)
    conversation_deleted = Signal(str)  # the owner asked to delete it (the row is gone)
    export_requested = Signal(str)  # the owner asked for this conversation as Markdown
    search_changed = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DELAY_MS)
        self._search_timer.timeout.connect(self._search_settled)
        self.setObjectName("Sidebar")
        self.setAttribute(Qt.WidgetAttribute.WA_StyledBackground, True)
        self.setMinimumWidth(200)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 10, 8, 8)
        layout.setSpacing(8)
        self.new_button = QPushButton(icons.icon("new-chat", "text", 16), "  New chat", self)
        self.new_button.setToolTip("Start a new conversation (Ctrl+N)")
        self.new_button.setStyleSheet("text-align: left; padding: 7px 10px;")
        self.new_button.clicked.connect(self.new_chat_requested)
        top = QHBoxLayout()
        top.setSpacing(4)
        top.addWidget(self.new_button, 1)
        # Beside "New chat": the other kind of new chat (also File ▸ Temporary chat).
        self.temporary_button = QToolButton(self)
        self.temporary_button.setProperty("flat", True)
        self.temporary_button.setProperty("temporary", True)
        self.temporary_button.setIcon(icons.icon("temporary", "muted", 18))
        set_tip(
            self.temporary_button,
            "Temporary chat: nothing is recalled or remembered, and it is erased when you "
            "close it (Ctrl+Shift+N)",
        )
        self.temporary_button.setCheckable(True)
        # `clicked` carries the state Qt already flipped to: that is the owner's choice.
        self.temporary_button.clicked.connect(
            lambda checked: self.temporary_chat_switched.emit(bool(checked))
        )
        top.addWidget(self.temporary_button)
        layout.addLayout(top)
        self.search = QLineEdit(self)
        self.search.setProperty("search", True)
        self.search.setPlaceholderText("Search chats")
        self.search.setClearButtonEnabled(True)
        self.search.addAction(
            icons.icon("search", "muted", 16),
            QLineEdit.ActionPosition.LeadingPosition,
        )
        self.search.textChanged.connect(lambda _text: self._search_timer.start())
        self.search.returnPressed.connect(self._open_first)
        # Down goes on into the list, Escape empties a search: as in the memory search.
        self.search.installEventFilter(self)
        layout.addWidget(self.search)

        self.stack = QStackedWidget(self)
        self.model = ConversationListModel()
        self.model.rename_requested.connect(self.conversation_renamed)
        self.view = QListView(self.stack)
        self.view.setModel(self.model)
        self.view.setItemDelegate(ConversationDelegate(self.view))
        self.view.setMouseTracking(True)
        self.view.setFrameShape(QListView.Shape.NoFrame)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.EditKeyPressed)
        self.view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.view.customContextMenuRequested.connect(self._menu)
        self.view.setAccessibleName("Conversations")
        self.view.selectionModel().currentChanged.connect(self._current_changed)
        self.view.clicked.connect(self._clicked)
        self._just_opened: str | None = None  # opened by the press that this click ends
        self.stack.addWidget(self.view)
        self.empty = QLabel(self.stack)
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        self.empty.setProperty("muted", True)
        self.empty.setContentsMargins(12, 24, 12, 0)
        self.stack.addWidget(self.empty)
        layout.addWidget(self.stack, 1)

        delete = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.view)
        delete.setContext(Qt.ShortcutContext.WidgetShortcut)
        delete.activated.connect(self.delete_current)
        self._silent = False
        self.menu: QMenu | None = None
        self.set_conversations([], datetime.now().astimezone())

    # -- showing -----------------------------------------------------------------------

    def set_conversations(
        self,
        conversations: Sequence[ConversationSummary],
        now: datetime,
        *,
        selected: str | None = None,
    ) -> None:
        searching = bool(self.search.text().strip())
        self._silent = True
        self.model.set_conversations(conversations, now, headings=not searching)
        if selected:
            self.select(selected)
        self._silent = False
        if conversations:
            self.stack.setCurrentWidget(self.view)
        else:
            self.empty.setText(
                "No conversation matches that search."
                if searching
                else "No conversations yet.\nStart one with New chat."
            )
            self.stack.setCurrentWidget(self.empty)

    def select(self, conversation_id: str | None) -> None:
        """Highlight a conversation without announcing it (the window already opened it)."""
        silent, self._silent = self._silent, True
        row = self.model.row_of(conversation_id) if conversation_id else -1
        selection = self.view.selectionModel()
        if row < 0:
            selection.clear()
        else:
            index = self.model.index(row)
            selection.setCurrentIndex(index, QItemSelectionModel.SelectionFlag.ClearAndSelect)
            self.view.scrollTo(index)
        self._silent = silent

    def remove(self, conversation_id: str) -> None:
        remaining = [c for c in self.model.conversations() if c.id != conversation_id]
        self.set_conversations(remaining, datetime.now().astimezone())

    def focus_search(self) -> None:
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """In the search box: Down moves into the list (onto its first conversation when
        none is current), Escape empties a search; an empty box lets Escape go on to the
        window (where it stops a reply)."""
        if watched is self.search and empties_on_escape(self.search, event):
            return True
        if (
            watched is self.search
            and event.type() == QEvent.Type.KeyPress
            and isinstance(event, QKeyEvent)
            and event.modifiers() == Qt.KeyboardModifier.NoModifier
            and event.key() == Qt.Key.Key_Down
            and self.model.conversations()
        ):
            if not self.view.currentIndex().isValid():
                self._open_first()
            self.view.setFocus(Qt.FocusReason.ShortcutFocusReason)
            return True
        return super().eventFilter(watched, event)

    # -- asking ------------------------------------------------------------------------

    def _search_settled(self) -> None:
        self.search_changed.emit(self.search.text().strip())

    def _current_changed(self, current: QModelIndex, _previous: QModelIndex) -> None:
        conversation = self.model.conversation_at(current.row())
        if conversation is not None and not self._silent:
            self._just_opened = conversation.id
            self.conversation_selected.emit(conversation.id)

    def _clicked(self, index: QModelIndex) -> None:
        """A search result clicked while its conversation is already open: show its hit."""
        conversation = self.model.conversation_at(index.row())
        just_opened, self._just_opened = self._just_opened, None
        if conversation is None or conversation.id == just_opened:
            return
        if self.search.text().strip() and conversation.message_id is not None:
            self.conversation_selected.emit(conversation.id)

    def _open_first(self) -> None:
        for conversation in self.model.conversations()[:1]:
            self.select(conversation.id)
            self.conversation_selected.emit(conversation.id)
            self.view.setFocus(Qt.FocusReason.OtherFocusReason)

    def _menu(self, point: QPoint) -> None:
        index = self.view.indexAt(point)
        conversation = self.model.conversation_at(index.row())
        if conversation is None:
            return
        menu = QMenu(self)
        rename = menu.addAction(icons.icon("rename", "text", 16), "Rename")
        export = menu.addAction("Export as Markdown…")
        menu.addSeparator()
        delete = menu.addAction(icons.icon("trash", "danger", 16), "Delete")
        self.menu = menu  # while it is open (tests choose from it)
        chosen = menu.exec(self.view.viewport().mapToGlobal(point))
        self.menu = None
        if chosen is rename:
            self.view.edit(index)
        elif chosen is export:
            self.export_requested.emit(conversation.id)
        elif chosen is delete:
            self.delete(conversation.id)

    def rename_current(self) -> None:
        index = self.view.currentIndex()
        if self.model.conversation_at(index.row()) is not None:
            self.view.edit(index)

    def delete_current(self) -> None:
        conversation = self.model.conversation_at(self.view.currentIndex().row())
        if conversation is not None:
            self.delete(conversation.id)

    def delete(self, conversation_id: str) -> None:
        self.remove(conversation_id)
        self.conversation_deleted.emit(conversation_id)
