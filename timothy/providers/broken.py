"""What a reply that breaks in the middle of its stream becomes: one plain sentence each.

A server can send a line that is not JSON, a chunk of the wrong shape, a frame that fails its
checksum, drop the connection, or just stop before the reply is complete. The owner cannot
act on a parser's message; they can retry. The parser's own words go to the log.
"""

from __future__ import annotations

import logging

from timothy.errors import ErrorKind, ProviderError

log = logging.getLogger(__name__)


def damaged(who: str, exc: BaseException) -> ProviderError:
    """The reply held something no provider sends: a malformed line, frame or chunk."""
    detail = f"{type(exc).__name__}: {exc}"[:500]
    log.warning("%s sent a damaged reply: %s", who, detail)
    return ProviderError(ErrorKind.SERVER, f"{who} sent a damaged reply; try again.", detail=detail)


def broke_off(who: str, exc: BaseException) -> ProviderError:
    """The connection dropped after the reply had begun."""
    detail = f"{type(exc).__name__}: {exc}"[:500]
    log.warning("the connection to %s broke off mid-reply: %s", who, detail)
    where = "the" + who[3:] if who.startswith("The ") else who
    return ProviderError(
        ErrorKind.UNREACHABLE,
        f"The connection to {where} broke off in the middle of the reply; try again.",
        detail=detail,
    )


def cut_off(who: str) -> ProviderError:
    """The stream ended cleanly but before the reply said it was complete."""
    log.warning("%s ended the reply before it was complete", who)
    return ProviderError(
        ErrorKind.SERVER, f"{who} stopped before the reply was complete; try again."
    )
