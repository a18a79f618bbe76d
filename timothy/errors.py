"""The core's small set of exceptions; every message is a sentence the owner can act on."""


class TimothyError(Exception):
    """Base of every error the core raises on purpose."""


class InvalidInputError(TimothyError, ValueError):
    """Input the owner (or a caller) gave that cannot be accepted as it is."""


class StoreError(TimothyError):
    """The memory database could not do what was asked."""


class DatabaseLockedError(StoreError):
    """Another program held the database for longer than the busy timeout."""


class NotFoundError(StoreError, LookupError):
    """No memory (or session) has the given id."""


class IllegalTransitionError(StoreError):
    """The lifecycle does not allow this change from the memory's current status."""


class ImportFailedError(StoreError):
    """An import file was refused; nothing from it was written."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason} (nothing was imported)")
        self.line = line
        self.reason = reason


class ProviderError(TimothyError):
    """A model provider failed; the message is plain, the vendor's detail goes to the log."""


class RecallError(TimothyError):
    """Every recall leg that ran failed."""
