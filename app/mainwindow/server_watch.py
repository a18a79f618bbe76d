"""Whether the memory server answers, as the window hears it: the store's reachability
(heard on a store thread) turned into a signal on the GUI thread, and the words the window
shows for it."""

from __future__ import annotations

import contextlib

from PySide6.QtCore import QObject, Signal

from timothy.store.engine import StoreEngine

AWAY_TEXT = (
    "The memory server {where} is out of reach — retrying. Your conversations are kept on "
    "this machine and replies go on without your memories until it answers again."
)
REFUSED_LOGIN_TEXT = (
    "The memory server {where} refused this machine: {why}. Check the address and the "
    "password in Settings ▸ Storage. Your conversations are kept on this machine and replies "
    "go on without your memories until it lets this machine in."
)
BACK_TEXT = "The memory server answers again: what was kept on this machine has been handed over."


REFUSED_TEXT = (
    "The memory server answers again, but it refused {count} kept on this machine. They stay "
    "here and are offered again each time the server reconnects; the log says why."
)


def refused_text(count: int) -> str:
    return REFUSED_TEXT.format(count="1 change" if count == 1 else f"{count} changes")


def away_text(store: StoreEngine) -> str:
    """Why the window works from this machine: a server that does not answer (it mends
    itself), or one that turned this machine's login away (the owner must act)."""
    if store.refused is not None:
        return REFUSED_LOGIN_TEXT.format(where=store.location, why=store.refused)
    return AWAY_TEXT.format(where=store.location)


def is_unreachable_message(message: str) -> bool:
    """A view's failure that only says the server did not answer or let this machine in
    (the away banner says it already)."""
    return message.startswith("The memory server") and (
        "did not answer" in message or "refused this machine" in message
    )


class ServerWatch(QObject):
    reachability_changed = Signal(bool)  # True: the server answers again

    def __init__(self, store: StoreEngine, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.store = store
        store.on_reachability(self._heard)

    @property
    def reachable(self) -> bool:
        return self.store.reachable

    def _heard(self, reachable: bool) -> None:
        # On a store thread: the signal is queued to the window's thread. A window already
        # gone (the store closing after it) has no one left to tell.
        with contextlib.suppress(RuntimeError):
            self.reachability_changed.emit(reachable)
