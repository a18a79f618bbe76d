""" "Test connection": one small real request to the chosen provider, through the providers'
own checks (`timothy.providers.checks`), said in a sentence. Runs on a worker.

A key the owner typed but has not saved yet is tested as typed; otherwise the keyring's.
"""

from __future__ import annotations

from collections.abc import Callable

from timothy.errors import ProviderError
from timothy.providers.checks import ProviderCheck, check_chat, check_embedding
from timothy.settings import Settings

ConnectionCheck = Callable[[Settings, "str | None"], str]


def _sentence(check: ProviderCheck, what: str) -> str:
    if not check.configured:
        raise ProviderError(f"Choose {what} first.")
    if not check.ok:
        raise ProviderError(check.message)
    latency = f" in {check.latency_ms:,.0f} ms" if check.latency_ms is not None else ""
    return f"Connected: {check.model} answered{latency}.{check.message}"


def check_connection(settings: Settings, typed_key: str | None) -> str:
    """A sentence saying the chat model answered; raises ProviderError with one saying why
    not (a refused key, an unknown model, an unreachable server, ...)."""
    return _sentence(check_chat(settings, openai_key=typed_key), "a chat provider")


def check_embeddings(settings: Settings, typed_key: str | None) -> str:
    """The same for the embedding provider: one query embedded, its size checked."""
    return _sentence(check_embedding(settings, openai_key=typed_key), "an embedding provider")
