"""Whether the memory server answers, as this machine last found it.

Once a call finds the server gone, every call after it fails at once (no connect timeout
paid again and again: nothing on the memory path may slow a turn) until the change feed,
which keeps trying on a thread of its own, reaches the server again. Only a store that
follows changes latches like this; a short-lived command has no one to bring it back and
tries the server on every call instead.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime

from timothy.store.records import utc_now

log = logging.getLogger(__name__)

ReachabilityListener = Callable[[bool], None]


class ServerLink:
    """Reachable or not; listeners hear each change (on the thread that found it)."""

    def __init__(self, *, latching: bool) -> None:
        self.latching = latching
        self._reachable = True  # calls go to the server
        self._told = True  # what the listeners last heard: it answers
        self._since: datetime | None = None
        self._refusal: str | None = None
        self._lock = threading.Lock()
        self._listeners: list[ReachabilityListener] = []

    @property
    def reachable(self) -> bool:
        return self._reachable

    @property
    def away_since(self) -> datetime | None:
        """When the server was found gone (None while it answers)."""
        return self._since

    @property
    def refusal(self) -> str | None:
        """Why the server turned this machine's login away (a wrong or missing password, an
        unknown user or database), while that is why it is out of reach; None otherwise."""
        return self._refusal

    @property
    def latched(self) -> bool:
        """Whether calls should fail at once rather than try the server."""
        return self.latching and not self._reachable

    def on_change(self, listener: ReachabilityListener) -> None:
        with self._lock:
            self._listeners.append(listener)

    def lost(self, reason: str = "", *, refusal: str | None = None) -> None:
        with self._lock:
            was = self._reachable
            told = self._told
            self._reachable = False
            self._refusal = refusal
            self._told = False
            if was:
                self._since = utc_now()
            listeners = list(self._listeners)
        if was and refusal is not None:
            log.warning("the memory server refused this machine's login: %s", refusal)
        elif was:
            log.warning("the memory server is out of reach: %s", reason or "no answer")
        if told:
            self._tell(listeners, False)

    def let_through(self) -> None:
        """Calls go to the server again, before anyone is told it is back (the hand-over
        of what was kept here comes first)."""
        with self._lock:
            self._reachable = True

    def regained(self) -> None:
        """The server is back and everything kept here was handed over: tell the listeners."""
        with self._lock:
            self._reachable = True
            self._since = None
            self._refusal = None
            tell = not self._told
            self._told = True
            listeners = list(self._listeners)
        if tell:
            log.info("the memory server answers again")
            self._tell(listeners, True)

    @staticmethod
    def _tell(listeners: list[ReachabilityListener], reachable: bool) -> None:
        for listener in listeners:
            try:
                listener(reachable)
            except Exception:  # a listener's failure must not stop the store
                log.exception("a reachability listener failed")
