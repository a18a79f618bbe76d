"""The menu bar and the window's keyboard shortcuts: File (new and temporary chats, a
conversation's name, instructions and export), View, Memory, Help (the user guide,
shortcuts, logs, About), and Escape to stop a reply. Every action is added to the
window too, so its shortcut works with the menu bar hidden.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QMainWindow, QMenu

from app.look import icons

Command = Callable[[], object]
Switch = Callable[[bool], object]


@dataclass(frozen=True, slots=True)
class MenuCommands:
    """What the menus do: the window's own slots."""

    new_chat: Command
    temporary_chat: Switch  # called with the state the owner chose
    conversation_instructions: Command
    rename_conversation: Command
    export_conversation: Command
    open_settings: Command
    quit: Command
    show_conversations: Switch  # the View ticks: called with the state the owner chose
    show_memory_pane: Switch
    search_conversations: Command
    search_memories: Command
    show_queue: Command
    add_memory: Command
    export_memories: Command
    import_memories: Command
    open_logs: Command
    show_user_guide: Command
    show_shortcuts: Command
    show_about: Command
    stop_reply: Command


class WindowMenus:
    def __init__(self, window: QMainWindow, commands: MenuCommands) -> None:
        self.window = window
        bar = window.menuBar()
        file_menu = bar.addMenu("&File")
        self.new_chat_action = self._action(
            file_menu, "New chat", "Ctrl+N", commands.new_chat, "new-chat"
        )
        self.temporary_action = self._switch(
            file_menu, "Temporary chat", "Ctrl+Shift+N", commands.temporary_chat
        )
        self.temporary_action.setIcon(icons.icon("temporary", "text", 16))
        self._action(file_menu, "Rename conversation", "F2", commands.rename_conversation, "rename")
        self.instructions_action = self._action(
            file_menu,
            "Instructions for this conversation…",
            "Ctrl+Shift+I",
            commands.conversation_instructions,
            "instructions",
        )
        self.export_conversation_action = self._action(
            file_menu,
            "Export conversation as Markdown…",
            "Ctrl+Shift+E",
            commands.export_conversation,
        )
        file_menu.addSeparator()
        self.settings_action = self._action(
            file_menu,
            "Settings…",
            QKeySequence.StandardKey.Preferences,
            commands.open_settings,
            "settings",
        )
        if not self.settings_action.shortcut().toString():
            self.settings_action.setShortcut(QKeySequence("Ctrl+,"))
        file_menu.addSeparator()
        self._action(file_menu, "Quit", QKeySequence.StandardKey.Quit, commands.quit)
        view = bar.addMenu("&View")
        self.conversations_action = self._switch(
            view, "Conversations", "Ctrl+B", commands.show_conversations
        )
        self.memory_action = self._switch(
            view, "Memory pane", "Ctrl+Alt+B", commands.show_memory_pane
        )
        memory = bar.addMenu("&Memory")
        self._action(
            memory, "Search conversations", "Ctrl+K", commands.search_conversations, "search"
        )
        self._action(memory, "Search memories", "Ctrl+Shift+M", commands.search_memories, "search")
        self._action(memory, "Facts to confirm", "Ctrl+Shift+C", commands.show_queue, "check")
        memory.addSeparator()
        self.add_memory_action = self._action(
            memory, "Add a memory…", "Ctrl+Shift+A", commands.add_memory, "memory"
        )
        memory.addSeparator()
        self.export_action = self._action(
            memory, "Export memories…", None, commands.export_memories
        )
        self.import_action = self._action(
            memory, "Import memories…", None, commands.import_memories
        )
        help_menu = bar.addMenu("&Help")
        self.user_guide_action = self._action(
            help_menu, "User guide", QKeySequence.StandardKey.HelpContents, commands.show_user_guide
        )
        if not self.user_guide_action.shortcut().toString():
            self.user_guide_action.setShortcut(QKeySequence("F1"))
        self.shortcuts_action = self._action(
            help_menu, "Keyboard shortcuts", "Ctrl+/", commands.show_shortcuts
        )
        self._action(help_menu, "Open log folder", None, commands.open_logs)
        help_menu.addSeparator()
        self.about_action = self._action(help_menu, "About Timothy", None, commands.show_about)
        self.about_action.setMenuRole(QAction.MenuRole.AboutRole)
        stop = QShortcut(QKeySequence(Qt.Key.Key_Escape), window)
        stop.setContext(Qt.ShortcutContext.WindowShortcut)
        stop.activated.connect(commands.stop_reply)
        self.stop_shortcut = stop

    def _action(
        self,
        menu: QMenu,
        text: str,
        shortcut: str | QKeySequence.StandardKey | None,
        slot: Command,
        icon: str | None = None,
    ) -> QAction:
        action = self._add(menu, text, shortcut, icon)
        action.triggered.connect(lambda _checked=False: slot())
        return action

    def _switch(self, menu: QMenu, text: str, shortcut: str, slot: Switch) -> QAction:
        """A ticked item. Qt flips the tick before `triggered` arrives, so the slot is handed
        the new state (and sets the tick to match what it did), rather than toggling again."""
        action = self._add(menu, text, shortcut, None)
        action.setCheckable(True)
        action.triggered.connect(lambda checked: slot(bool(checked)))
        return action

    def _add(
        self,
        menu: QMenu,
        text: str,
        shortcut: str | QKeySequence.StandardKey | None,
        icon: str | None,
    ) -> QAction:
        action = QAction(text, self.window)
        if icon:
            action.setIcon(icons.icon(icon, "text", 16))
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        menu.addAction(action)
        self.window.addAction(action)  # shortcuts work even with the menu bar hidden
        return action
