"""Work that waits until the owner turns to the chat: types in the composer, or points at,
focuses or opens the header's model picker. At start the server's model list waits there
(see `MainWindow._offer_chat_models`): asking for it imports the openai SDK, which a window
that is only open need not hold."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, SignalInstance


class ChatWanted(QObject):
    def __init__(self, *signals: SignalInstance, parent: QObject | None = None) -> None:
        """`signals`: each says the owner turned to the chat."""
        super().__init__(parent)
        self._action: Callable[[], None] | None = None
        self._turned = False  # the owner has turned to the chat already
        for signal in signals:
            signal.connect(self._fire)

    @property
    def armed(self) -> bool:
        return self._action is not None

    def arm(self, action: Callable[[], None]) -> None:
        """Run `action` once, the next time the owner turns to the chat (in place of one
        armed before); at once when the owner has already (typed before the window's start
        got this far)."""
        self._action = action
        if self._turned:
            self._fire()

    def clear(self) -> None:
        self._action = None

    def _fire(self) -> None:
        self._turned = True
        action, self._action = self._action, None
        if action is not None:
            action()
