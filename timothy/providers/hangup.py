"""Cutting a streaming HTTP response off at once, from another thread (cancel mid-stream).

Closing a socket does not wake a thread blocked reading it; shutting it down does, and the
server sees the connection end. The SDKs keep their sockets a few attributes deep.
"""

from __future__ import annotations

import logging
import socket
from typing import Any

log = logging.getLogger(__name__)


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
