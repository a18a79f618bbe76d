"""Work that waits until the owner turns to the chat: types in the composer, or points at,
focuses or opens the header's model picker. At start the server's model list waits there
(asking for it imports the openai SDK, ~38 MB), and so does Pygments' warm-up (the common
lexers compiled, ~10 MB): a window that is only open need not hold them, and one being
typed into has them ready by the time the message is sent (see `MainWindow`)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, SignalInstance


class ChatWanted(QObject):
    def __init__(self, *signals: SignalInstance, parent: QObject | None = None) -> None:
        """`signals`: each says the owner turned to the chat."""
        super().__init__(parent)
        self._actions: dict[str, Callable[[], None]] = {}
        self._turned = False  # the owner has turned to the chat already
        for signal in signals:
            signal.connect(self._fire)

    @property
    def waiting(self) -> list[str]:
        return list(self._actions)

    def arm(self, name: str, action: Callable[[], None]) -> None:
        """Run `action` once, the next time the owner turns to the chat (in place of one
        of that name armed before); at once when the owner already has (typed before the
        window's start got this far)."""
        self._actions[name] = action
        if self._turned:
            self._fire()

    def disarm(self, name: str) -> None:
        self._actions.pop(name, None)

    def _fire(self) -> None:
        self._turned = True
        actions, self._actions = self._actions, {}
        for action in actions.values():
            action()
