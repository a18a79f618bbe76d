"""Cutting a streaming HTTP response off at once, from another thread (cancel mid-stream).

Closing a socket does not wake a thread blocked reading it; shutting it down does, and the
server sees the connection end. The SDKs keep their sockets a few attributes deep.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from timothy.providers.base import CancelToken

log = logging.getLogger(__name__)

T = TypeVar("T")


def hang_up(sock: socket.socket | None) -> bool:
    """Shut the connection down both ways; True if there was one to shut."""
    if sock is None:
        return False
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed: nothing left to cut
        return False
    return True


def socket_of_httpx(response: Any) -> socket.socket | None:
    """The socket under an httpx (httpx2) response, as httpcore exposes it."""
    try:
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
    except Exception:
        log.debug("no socket found under the httpx response", exc_info=True)
        return None
    return sock if isinstance(sock, socket.socket) else None


def socket_of_urllib3(raw: Any) -> socket.socket | None:
    """The socket under a urllib3 response (botocore's streaming body)."""
    connection = getattr(raw, "_connection", None) or getattr(raw, "connection", None)
    sock = getattr(connection, "sock", None)
    if sock is None:  # urllib3 let go of the connection object; the file still holds it
        fp = getattr(getattr(raw, "_fp", None), "fp", None)
        sock = getattr(getattr(fp, "raw", None), "_sock", None)
    return sock if isinstance(sock, socket.socket) else None


def start_or_abandon(
    start: Callable[[], T], cancel: CancelToken, discard: Callable[[T], None]
) -> T | None:
    """`start()` on a helper thread, or None as soon as `cancel` fires, whichever comes first.

    A request still waiting for its first byte (a model thinking over a long prompt, a server
    that hangs) cannot be interrupted from outside its thread; this returns at once instead,
    and whatever `start` later produces is discarded (its connection closed) when it arrives.
    Exceptions from `start` are raised here, unless the caller has gone.
    """
    lock = threading.Lock()
    wake = threading.Event()
    outcome: list[T] = []
    failure: list[BaseException] = []
    abandoned = False

    def run() -> None:
        try:
            result = start()
        except BaseException as exc:
            with lock:
                if not abandoned:
                    failure.append(exc)
            wake.set()
            return
        with lock:
            late = abandoned
            if not late:
                outcome.append(result)
        if late:
            discard(result)
        wake.set()

    unregister = cancel.on_cancel(wake.set)
    threading.Thread(target=run, name="timothy-provider-start", daemon=True).start()
    try:
        wake.wait()
    finally:
        unregister()
    with lock:
        if outcome:
            return outcome[0]
        if failure:
            raise failure[0]
        abandoned = True
        return None
