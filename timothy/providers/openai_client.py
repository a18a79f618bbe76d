"""The `openai` SDK client for OpenAI or an OpenAI-compatible server, and its failures in words.

One client per provider object: timeouts on every call (connect capped at 10 s, read = the
longest silence allowed), the SDK's own retries off (`Backoff` retries instead), the key from
the OS keyring (OPENAI_API_KEY as a fallback, for OpenAI's own API only).
"""

from __future__ import annotations

import logging
import os
import re
import ssl
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from timothy.errors import ErrorKind, InvalidInputError, ProviderError, causes
from timothy.providers.overflow import is_context_overflow, too_long_message
from timothy.providers.retry_after import parse_retry_after, throttled_message, wait_in_words
from timothy.providers.sdk import importing
from timothy.providers.settings import OpenAISettings
from timothy.secrets import OPENAI_API_KEY, KeyringUnavailableError, read_secret

if TYPE_CHECKING:  # the SDK takes about a second to import: only when a client is made
    import openai

log = logging.getLogger(__name__)

OFFICIAL_BASE_URL = "https://api.openai.com/v1"
CONNECT_TIMEOUT = 10.0
# Local servers (Ollama, LM Studio, llama.cpp) need no key, but the SDK insists on one.
KEYLESS = "no-key"
# A server's key read with its first request while the keyring was locked: read again this
# long after (a read of a locked keyring may put up an unlock prompt: not with every request).
KEY_REREAD_SECONDS = 30.0


def is_official(settings: OpenAISettings) -> bool:
    if not settings.base_url:
        return True
    return (urlsplit(settings.base_url).hostname or "").lower() == "api.openai.com"


def check_base_url(address: str) -> str:
    """`address` if an OpenAI client can use it as a server address, else InvalidInputError
    saying how to write it. Without "http://" the SDK cannot reach even a running server
    ("localhost:11434/v1" reads as a scheme named "localhost"), and only a failed reply
    would have told the owner."""
    address = address.strip()
    example = "for example http://127.0.0.1:11434/v1"
    if any(char.isspace() for char in address):
        raise InvalidInputError(
            f"The server address cannot contain spaces: write it as a web address, {example}."
        )
    parts = urlsplit(address)
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc:
        raise InvalidInputError(
            f"The server address must start with http:// or https://, {example}."
        )
    try:
        parts.port  # noqa: B018 (reading it checks it)
    except ValueError as exc:
        raise InvalidInputError(f"The server address has no valid port: {exc}.") from exc
    if not parts.hostname:
        raise InvalidInputError(f"The server address names no computer, {example}.")
    return address


def api_key(settings: OpenAISettings, read: Callable[[], str | None] | None = None) -> str | None:
    """The key for this server: the keyring's, else OPENAI_API_KEY (OpenAI's own API only:
    an OpenAI key is never sent to another server just because it is in the environment).
    `read`: how the keyring's is read (a build's `KeyRead`, shared by its providers)."""
    try:
        key = (read or stored_key)()
    except KeyringUnavailableError as exc:
        if not is_official(settings):
            return None  # a local server needs no key: a missing keyring must not stop it
        key = os.environ.get("OPENAI_API_KEY")
        if key:
            return key
        # "No key is set" would send the owner to type again a key that may be saved
        raise ProviderError(
            ErrorKind.AUTH,
            f"The OpenAI API key could not be read: {exc} The OPENAI_API_KEY environment "
            "variable works instead.",
        ) from exc
    if key:
        return key
    if is_official(settings):
        return os.environ.get("OPENAI_API_KEY") or None
    return None


def stored_key() -> str | None:
    """The keyring's key for a server other than OpenAI's own (which may need none); raises
    KeyringUnavailableError when the keyring cannot be read, for `LazyClient` to try later."""
    return read_secret(OPENAI_API_KEY)


class KeyRead:
    """The keyring's OpenAI key read once for the providers one build makes: the chat model
    and the embeddings use the same server's key, and every read of a locked keyring may put
    up the system's unlock prompt. The first to ask reads; the others get the same outcome
    (the key, None, or KeyringUnavailableError again). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done = False
        self._key: str | None = None
        self._unreadable: KeyringUnavailableError | None = None

    def __call__(self) -> str | None:
        with self._lock:
            if not self._done:
                try:
                    self._key = stored_key()
                except KeyringUnavailableError as exc:
                    self._unreadable = exc
                self._done = True
        if self._unreadable is not None:
            raise KeyringUnavailableError(str(self._unreadable)) from self._unreadable.__cause__
        return self._key

    def then_afresh(self) -> Callable[[], str | None]:
        """A `LazyClient`'s `read_key`: its first read is this shared one; a later one (a
        locked keyring tried again, half a minute on) reads the keyring."""
        first = True

        def read() -> str | None:
            nonlocal first
            if first:
                first = False
                return self()
            return stored_key()

        return read


def server_label(settings: OpenAISettings) -> str:
    return "OpenAI" if is_official(settings) else f"The server at {settings.base_url}"


def make_timeout(seconds: float) -> openai.Timeout:
    with importing():
        import openai

    return openai.Timeout(seconds, connect=min(CONNECT_TIMEOUT, seconds))


def check_key(settings: OpenAISettings, key: str | None) -> None:
    """Raises ProviderError when OpenAI's own API is asked without a key."""
    if not key and is_official(settings):
        raise ProviderError(
            ErrorKind.AUTH,
            "No OpenAI API key is set. Add one in Settings (it is kept in the system "
            "keyring), or set OPENAI_API_KEY.",
        )


def make_client(settings: OpenAISettings, key: str | None) -> openai.OpenAI:
    """A client for the configured server. Raises ProviderError when OpenAI needs a key."""
    check_key(settings, key)
    with importing():
        import openai

        client = openai.OpenAI(
            api_key=key or KEYLESS,
            base_url=settings.base_url or OFFICIAL_BASE_URL,
            timeout=make_timeout(settings.timeout_seconds),
            max_retries=0,
        )
        # The parts Timothy calls, made now: each imports its resource and models on first
        # use, which is then here, under the import lock, not in a turn beside another
        # thread's request (the SDK's types are imported as they are named: sdk.py).
        client.chat.completions  # noqa: B018
        client.embeddings  # noqa: B018
        client.models  # noqa: B018
    return client


class LazyClient:
    """The SDK's client for a provider object, made on its first request rather than with
    the provider: the SDK's import (~0.5 s, about 30 MB resident: httpx2, pydantic and the
    part of `openai.types` Timothy uses, see sdk.py) is then not paid by a window that is
    only open.

    `key` is checked at once, so a missing one is still said when the provider is built.
    `read_key` instead: the key is read (from the keyring) with the first request, for a
    server that may need none (a local one): the keyring's backends (D-Bus, cryptography,
    ~8 MB) are then not loaded by a window that is only open either. A keyring that cannot
    be read then (locked) does not stop a server that needs no key: requests go without one,
    and the key is read again with a request at least `reread_seconds` later, so a key
    unlocked after the start is used without a restart."""

    def __init__(
        self,
        settings: OpenAISettings,
        key: str | None,
        *,
        read_key: Callable[[], str | None] | None = None,
        reread_seconds: float = KEY_REREAD_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if read_key is None:
            check_key(settings, key)
        self._settings = settings
        self._key = key
        self._read_key = read_key
        self._client: openai.OpenAI | None = None
        self._lock = threading.Lock()
        self._reread_seconds = reread_seconds
        self._clock = clock
        self._unread_at: float | None = None  # when the keyring last could not be read

    @property
    def key(self) -> str | None:
        """The key the client sends (None before a key read with the first request)."""
        return self._key

    def get(self) -> openai.OpenAI:
        client = self._client
        if client is None or self._reread_due():
            with self._lock:
                if self._client is None or self._reread_due():
                    key = self._read() if self._read_key is not None else self._key
                    if self._client is None or key != self._key:
                        self._key = key
                        self._client = make_client(self._settings, key)
                client = self._client
        return client

    @property
    def key_unread(self) -> bool:
        """Requests go without a key because the keyring could not be read (locked)."""
        return self._unread_at is not None

    def _reread_due(self) -> bool:
        unread_at = self._unread_at
        return unread_at is not None and self._clock() - unread_at >= self._reread_seconds

    def _read(self) -> str | None:
        assert self._read_key is not None
        try:
            key = self._read_key()
        except KeyringUnavailableError as exc:
            # A local server needs no key: a locked keyring must not stop it meanwhile.
            level = logging.WARNING if self._unread_at is None else logging.DEBUG
            log.log(level, "%s: requests go without a key until it opens", exc)
            self._unread_at = self._clock()
            return self._key
        self._unread_at = None
        return key


_KEYISH = re.compile(r"\b(sk-[A-Za-z0-9_*.\-]{2,}|Bearer\s+\S+)")


def scrub(text: str, key: str | None) -> str:
    """The vendor's words with anything key-like removed, fit for the log."""
    if key and key != KEYLESS:
        text = text.replace(key, "[key]")
    return _KEYISH.sub("[key]", text)


# What a web server (not an API) answers a POST with: no such method, not implemented.
_NOT_AN_API_STATUSES = (405, 501)


# What to check when the address answers but is not the API.
ADDRESS_HINT = (
    "Check the server address in Settings: it is the API's, which usually ends in /v1 "
    "(Ollama: http://127.0.0.1:11434/v1, LM Studio: http://127.0.0.1:1234/v1)."
)


# What the SDK raises when it parses a body that is not the API's JSON (it hands HTML back
# as text, then reads fields of it).
UNREADABLE_REPLY = (AttributeError, TypeError)


def not_an_api(settings: OpenAISettings, what: str = "a web page") -> ProviderError:
    """The address answered, but not as an OpenAI-compatible API: a web page, a wrong path."""
    return ProviderError(
        ErrorKind.NOT_CONFIGURED,
        f"{server_label(settings)} answered with {what}, not as an OpenAI-compatible API. "
        + ADDRESS_HINT,
    )


def is_web_page(headers: Any) -> bool:
    """True when a response is HTML: a router's login page, a web server's index."""
    return "html" in str(headers.get("content-type") or "").lower()


def _ssl_error(exc: BaseException) -> ssl.SSLError | None:
    """The TLS failure under a connection error, if that is what it was."""
    return next((cause for cause in causes(exc) if isinstance(cause, ssl.SSLError)), None)


def _tls_message(settings: OpenAISettings, error: ssl.SSLError) -> str:
    who = server_label(settings)
    if isinstance(error, ssl.SSLCertVerificationError):
        return (
            f"{who} has a TLS certificate this computer does not trust "
            f"({error.verify_message or 'verification failed'})."
        )
    return (
        f"Could not talk to the server at {settings.base_url} over https (its TLS answer was "
        "not understood). A local server (Ollama, LM Studio, llama.cpp) usually speaks plain "
        "http: try the address with http:// instead of https://."
    )


def _names_the_model(exc: openai.APIStatusError, model: str) -> bool:
    """Whether a 404 is about the model (its code or its words say so), not about the path:
    a server asked at the wrong address answers 404 too, with no word of any model."""
    code = str(getattr(exc, "code", None) or "").lower()
    words = str(exc.body or exc).lower()
    return "model" in code or "model" in words or (bool(model) and model.lower() in words)


def _retry_after(exc: openai.APIStatusError) -> float | None:
    """The wait the 429 asked for (`retry-after-ms`, `retry-after` seconds or date), if any."""
    return parse_retry_after(exc.response.headers, now=datetime.now(UTC))


def translate(
    exc: Exception,
    settings: OpenAISettings,
    model: str,
    key: str | None,
    *,
    what: str,
    timeout: float | None = None,
    key_unread: bool = False,
) -> ProviderError:
    """One ProviderError with a plain message for any failure of the SDK; detail to the log.
    `timeout` is the bound the request ran under when it was not the settings' own;
    `key_unread`: the request went without a key because the keyring could not be read."""
    with importing():
        import openai

    who = server_label(settings)
    official = is_official(settings)
    detail = scrub(f"{type(exc).__name__}: {exc}", key)
    if isinstance(exc, openai.APIStatusError):
        detail = scrub(f"HTTP {exc.status_code} {exc.body!r}", key)
    log.warning("%s %s (model %s) failed: %s", who, what, model, detail)
    if isinstance(exc, ProviderError):
        return exc
    code = (getattr(exc, "code", None) or "").lower()
    kind: ErrorKind
    retry_after = None
    if isinstance(exc, openai.APITimeoutError):
        kind = ErrorKind.TIMEOUT
        bound = settings.timeout_seconds if timeout is None else timeout
        message = f"{who} did not answer within {bound:g} s."
    elif isinstance(exc, openai.APIConnectionError) and (tls := _ssl_error(exc)) is not None:
        kind = ErrorKind.UNREACHABLE
        message = _tls_message(settings, tls)
    elif isinstance(exc, openai.APIConnectionError):
        kind = ErrorKind.UNREACHABLE
        message = (
            "Could not reach OpenAI; check the network connection."
            if official
            else f"Could not reach the server at {settings.base_url}; is it running?"
        )
    elif isinstance(exc, openai.AuthenticationError) and key_unread:
        kind = ErrorKind.AUTH
        message = (
            f"{who} wants the API key, which could not be read: the system keyring is locked "
            f"or not answering. Unlock it, then try again {wait_in_words(KEY_REREAD_SECONDS)}."
        )
    elif isinstance(exc, openai.AuthenticationError):
        kind = ErrorKind.AUTH
        message = (
            "OpenAI refused the API key. Check the key in Settings."
            if official
            else f"{who} refused the API key. Check the key in Settings."
        )
    elif isinstance(exc, openai.PermissionDeniedError):
        kind = ErrorKind.ACCESS_DENIED
        if "country" in code or "region" in code:
            message = f"{who} is not available in your country or region."
        else:
            message = f"{who} denies this account access to the model '{model}'."
    elif (
        isinstance(exc, openai.NotFoundError)
        and not official
        and what == "chat"
        and not _names_the_model(exc, model)
    ):
        kind = ErrorKind.NOT_CONFIGURED
        message = f"{who} has no chat API at that address (HTTP 404). " + ADDRESS_HINT
    elif isinstance(exc, openai.NotFoundError):
        kind = ErrorKind.MODEL_NOT_FOUND
        if what == "embeddings" and not official:
            message = (
                f"{who} has no embedding model '{model}' (or offers no embeddings). "
                "Check the model name, or pick another embedding provider."
            )
        else:
            message = f"{who} does not know the model '{model}'. Check the model name in Settings."
    elif isinstance(exc, openai.RateLimitError):
        if code == "insufficient_quota":
            kind = ErrorKind.QUOTA
            message = f"{who} says the account is out of credit (insufficient quota)."
        else:
            kind = ErrorKind.THROTTLED
            retry_after = _retry_after(exc)
            message = throttled_message(who, retry_after)
    elif isinstance(
        exc, openai.BadRequestError | openai.UnprocessableEntityError
    ) and is_context_overflow(f"{code} {exc}"):
        kind = ErrorKind.CONTEXT_TOO_LONG
        message = too_long_message(model, str(exc))
    elif isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError):
        kind = ErrorKind.BAD_REQUEST
        message = f"{who} refused the request as invalid (details are in the log)."
    elif (
        isinstance(exc, openai.APIStatusError)
        and not official
        and exc.status_code in _NOT_AN_API_STATUSES
    ):
        kind = ErrorKind.NOT_CONFIGURED
        message = (
            f"{who} is not an OpenAI-compatible API (it answered HTTP {exc.status_code}). "
            + ADDRESS_HINT
        )
    elif isinstance(exc, openai.APIStatusError) and exc.status_code >= 500:
        kind = ErrorKind.SERVER
        message = f"{who} had an internal error (HTTP {exc.status_code}); try again later."
    elif isinstance(exc, openai.APIStatusError):
        kind = ErrorKind.UNKNOWN
        message = f"{who} answered with an unexpected error (HTTP {exc.status_code})."
    else:
        kind = ErrorKind.UNKNOWN
        message = f"{who} failed unexpectedly (details are in the log)."
    return ProviderError(kind, message, detail=detail, retry_after=retry_after)
