"""API keys in the OS keyring, and nowhere else (never the database, config files or logs).

`keyring` is imported by the functions that use it, not with this module: importing it finds
and loads its backends (entry points, D-Bus, ~0.1-0.2 s), which the window's start does not
wait for; the key is read by the chat engine's build on a worker.
"""

from __future__ import annotations

import contextlib
import logging

from timothy.errors import TimothyError

log = logging.getLogger(__name__)

SERVICE = "Timothy"

# Names of the secrets Timothy keeps (the keyring's "username" under SERVICE).
OPENAI_API_KEY = "openai-api-key"


class KeyringUnavailableError(TimothyError):
    """No usable OS keyring: keys cannot be stored safely."""


def keyring_available() -> bool:
    import keyring
    from keyring.backends import fail

    return not isinstance(keyring.get_keyring(), fail.Keyring)


def get_secret(name: str) -> str | None:
    """A stored secret, or None (also when the keyring cannot be read: the caller degrades)."""
    try:
        return read_secret(name)
    except KeyringUnavailableError:
        return None


def read_secret(name: str) -> str | None:
    """A stored secret, or None when none is stored; raises KeyringUnavailableError when the
    keyring cannot be read (none installed, locked, its service not answering), for a caller
    that must not tell the owner "no key is set" when one may be."""
    import keyring
    import keyring.errors

    try:
        return keyring.get_password(SERVICE, name)
    except keyring.errors.NoKeyringError as exc:
        log.warning("keyring read of %s failed: %s", name, type(exc).__name__)
        raise KeyringUnavailableError(
            "no system keyring is available; install one (e.g. GNOME Keyring or KWallet)."
        ) from exc
    except keyring.errors.KeyringError as exc:
        log.warning("keyring read of %s failed: %s", name, type(exc).__name__)
        raise KeyringUnavailableError(
            "the system keyring is locked or not answering; unlock it."
        ) from exc


def set_secret(name: str, value: str | None) -> None:
    """Store (or, with None or an empty value, delete) a secret in the OS keyring."""
    import keyring
    import keyring.errors

    try:
        if not value:
            with contextlib.suppress(keyring.errors.PasswordDeleteError):
                keyring.delete_password(SERVICE, name)
            return
        keyring.set_password(SERVICE, name, value)
    except keyring.errors.NoKeyringError as exc:
        raise KeyringUnavailableError(
            "No system keyring is available, so the key cannot be stored safely. "
            "Install and unlock one (e.g. GNOME Keyring or KWallet). For OpenAI's own API, "
            "the OPENAI_API_KEY environment variable works instead; Timothy never sends it to "
            "other servers."
        ) from exc
    except keyring.errors.KeyringError as exc:
        raise KeyringUnavailableError(f"The system keyring refused the key: {exc}") from exc
