"""The core's small set of exceptions; every message is a sentence the owner can act on."""

from __future__ import annotations

from collections.abc import Iterator
from enum import StrEnum

# How far down a failure's causes `causes` looks.
CAUSE_DEPTH = 10


def causes(exc: BaseException, depth: int = CAUSE_DEPTH) -> Iterator[BaseException]:
    """`exc`, then what caused it (its explicit cause, else the exception it was raised
    while handling), and so on: at most `depth` of them, never one twice."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < depth:
        yield current
        seen.add(id(current))
        current = current.__cause__ or current.__context__


class TimothyError(Exception):
    """Base of every error the core raises on purpose."""


class InvalidInputError(TimothyError, ValueError):
    """Input the owner (or a caller) gave that cannot be accepted as it is."""


class StoreError(TimothyError):
    """The memory database could not do what was asked."""


class DatabaseLockedError(StoreError):
    """Another program held the database for longer than the busy timeout."""


class DamagedStoreError(StoreError):
    """The database file is damaged: it is only read from, and nothing is written to it.

    The message says which file and how to restore it (the latest backup, when there is one).
    """


class NotFoundError(StoreError, LookupError):
    """No memory (or session) has the given id."""


class IllegalTransitionError(StoreError):
    """The lifecycle does not allow this change from the memory's current status."""


class ChangedElsewhereError(IllegalTransitionError):
    """A shared store's memory was changed on another machine between our read and our write.

    `ours` is what this machine wanted to write, `theirs` the version now stored (both as
    the owner would read them), so nothing is lost: the owner picks."""

    def __init__(self, message: str, *, ours: str, theirs: str) -> None:
        super().__init__(message)
        self.ours = ours
        self.theirs = theirs


class StoreUnreachableError(StoreError):
    """The shared store's server did not answer (down, unreachable, refusing us)."""


class ImportFailedError(StoreError):
    """An import file was refused; nothing from it was written."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason} (nothing was imported)")
        self.line = line
        self.reason = reason


class ErrorKind(StrEnum):
    """What went wrong with a model provider, in terms the owner can act on."""

    AUTH = "auth"  # bad or missing key / credentials
    MODEL_NOT_FOUND = "model_not_found"
    ACCESS_DENIED = "access_denied"  # e.g. no access to the model in this region
    THROTTLED = "throttled"  # too many requests: retried with backoff, then given up
    QUOTA = "quota"  # out of credit or over a hard quota: retrying will not help
    TIMEOUT = "timeout"
    UNREACHABLE = "unreachable"
    BAD_REQUEST = "bad_request"  # the request was refused as invalid
    CONTEXT_TOO_LONG = "context_too_long"  # the conversation outgrew the model's context
    SERVER = "server"  # the vendor's own failure (5xx)
    NOT_CONFIGURED = "not_configured"  # no provider, region or model file set up
    CANCELLED = "cancelled"
    UNKNOWN = "unknown"


class ProviderError(TimothyError):
    """A model provider failed; the message is plain, the vendor's detail goes to the log.

    `kind` says what to do about it (retry later, fix the key, pick another model); `detail`
    is the vendor's own words, for the log only: it never holds a key. The message defaults to
    a plain sentence for the kind.
    """

    def __init__(
        self,
        kind: ErrorKind | str,
        message: str | None = None,
        *,
        detail: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        try:
            parsed = ErrorKind(kind)
        except ValueError:  # ProviderError("some message"): a caller that gave only words
            parsed, message = ErrorKind.UNKNOWN, message or str(kind)
        self.kind = parsed
        self.message = message or DEFAULT_MESSAGES[parsed]
        self.detail = detail
        self.retry_after = retry_after  # the vendor's hint (seconds), when it gave one
        super().__init__(self.message)

    @property
    def retryable(self) -> bool:
        return self.kind in (ErrorKind.THROTTLED, ErrorKind.SERVER)


DEFAULT_MESSAGES = {
    ErrorKind.AUTH: "The provider refused the key or credentials.",
    ErrorKind.MODEL_NOT_FOUND: "The provider does not know this model.",
    ErrorKind.ACCESS_DENIED: "Your account has no access to this model here.",
    ErrorKind.THROTTLED: "The provider is rate-limiting requests; try again in a minute.",
    ErrorKind.QUOTA: "The provider account is out of credit or over its quota.",
    ErrorKind.TIMEOUT: "The provider did not answer in time.",
    ErrorKind.UNREACHABLE: "The provider could not be reached; check the network.",
    ErrorKind.BAD_REQUEST: "The provider refused the request.",
    ErrorKind.CONTEXT_TOO_LONG: "The conversation is too long for the model.",
    ErrorKind.SERVER: "The provider had an internal error; try again later.",
    ErrorKind.NOT_CONFIGURED: "No provider is set up for this.",
    ErrorKind.CANCELLED: "The request was cancelled.",
    ErrorKind.UNKNOWN: "The provider failed for an unknown reason.",
}


class RecallError(TimothyError):
    """Every recall leg that ran failed, or recall outlived its time bound (`timed_out`)."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out
