"""What the owner does to a conversation from the list: rename it, delete it (to the bin), or
restore it. Each change runs on a worker and is announced, so the window can refresh the list
and offer Undo.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from app.conversations.chat_port import Conversations
from app.jobs.workers import Failure, Workers


class ConversationActions(QObject):
    conversation_renamed = Signal(str, str)  # (id, the new title)
    conversation_deleted = Signal(str)  # moved to the bin: restore brings it back
    conversation_restored = Signal(str)
    failed = Signal(str)  # a change failed: a sentence for the owner

    def __init__(
        self, conversations: Conversations, workers: Workers, parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self.conversations = conversations
        self.workers = workers

    def rename(self, conversation_id: str, title: str) -> None:
        self._run(
            lambda: self.conversations.rename(conversation_id, title),
            "renaming the conversation",
            lambda: self.conversation_renamed.emit(conversation_id, title),
        )

    def delete(self, conversation_id: str) -> None:
        self._run(
            lambda: self.conversations.delete(conversation_id),
            "deleting the conversation",
            lambda: self.conversation_deleted.emit(conversation_id),
        )

    def restore(self, conversation_id: str) -> None:
        self._run(
            lambda: self.conversations.restore(conversation_id),
            "restoring the conversation",
            lambda: self.conversation_restored.emit(conversation_id),
        )

    def _run(self, work: Callable[[], object], what: str, done: Callable[[], None]) -> None:
        self.workers.run(
            self,
            work,
            what,
            on_success=lambda _result: done(),
            on_failure=self._failed,
        )

    def _failed(self, failure: Failure) -> None:
        self.failed.emit(failure.message)
