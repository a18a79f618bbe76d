"""Retrying throttled (or briefly failing) provider calls: exponential backoff, jitter, a bound.

The SDKs' own retries are switched off so that this one policy, with its total time bound,
decides for every vendor; a retry never outlives `total_seconds`, so a turn never hangs on it.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from timothy.errors import ErrorKind, ProviderError
from timothy.providers.base import CancelToken

log = logging.getLogger(__name__)

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Backoff:
    """Retry a ProviderError that is `retryable` (throttled, a 5xx) within a time bound."""

    first_delay: float = 0.5
    max_delay: float = 8.0
    total_seconds: float = 30.0  # no new attempt starts once its wait would cross this
    max_attempts: int = 6
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def delay(self, retry: int) -> float:
        """The wait before retry number `retry` (0-based): doubling, capped, half jittered."""
        ceiling = min(self.max_delay, self.first_delay * (2.0**retry))
        return ceiling / 2 + self.rng.uniform(0, ceiling / 2)

    def call(
        self,
        attempt: Callable[[], T],
        *,
        cancel: CancelToken | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> T:
        """`attempt()`, retried while it raises a retryable ProviderError and time remains."""
        started = clock()
        retry = 0
        while True:
            try:
                return attempt()
            except ProviderError as exc:
                if not exc.retryable:
                    raise
                wait = self.delay(retry)
                if exc.retry_after is not None:
                    wait = max(wait, exc.retry_after)
                elapsed = clock() - started
                if retry + 1 >= self.max_attempts or elapsed + wait > self.total_seconds:
                    log.warning(
                        "giving up after %d attempts in %.1f s: %s", retry + 1, elapsed, exc.detail
                    )
                    tries = "1 try" if retry == 0 else f"{retry + 1} tries"
                    raise ProviderError(
                        exc.kind,
                        f"{exc.message.rstrip('.')} (gave up after {tries} in {elapsed:.1f} s).",
                        detail=exc.detail,
                        retry_after=exc.retry_after,
                    ) from exc
                log.info("%s; retrying in %.2f s (try %d)", exc.kind.value, wait, retry + 2)
                if cancel is not None:
                    if cancel.wait(wait):
                        raise ProviderError(ErrorKind.CANCELLED) from exc
                else:
                    time.sleep(wait)
                retry += 1


NO_RETRY = Backoff(max_attempts=1)
