"""The configured chat and embedding providers, built from the owner's provider settings (and
the keyring).

Callers (the CLI, the chat turn, the app) build a provider once and reuse it, and build a new
one when the settings change. `None` means "not configured": the chat turn says so, and the
vector leg is simply off.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace
from typing import TYPE_CHECKING, TypeVar

from timothy.errors import ErrorKind, InvalidInputError, ProviderError
from timothy.providers.base import ChatProvider, EmbeddingProvider
from timothy.providers.local import LocalEmbedder
from timothy.providers.sdk import importing
from timothy.providers.settings import ProviderChoice

if TYPE_CHECKING:  # the OpenAI client module is imported when an OpenAI provider is made
    from timothy.providers.openai_client import KeyRead

C = TypeVar("C", bound=ProviderChoice)

log = logging.getLogger(__name__)

CHAT_PROVIDERS = ("openai", "bedrock")
EMBEDDING_PROVIDERS = ("openai", "bedrock", "local")

_local: LocalEmbedder | None = None
_local_lock = threading.Lock()


def local_embedder() -> LocalEmbedder:
    """The one local embedder of this process (its model is loaded once, on first use)."""
    global _local
    with _local_lock:
        if _local is None:
            _local = LocalEmbedder()
        return _local


def chat_provider(
    settings: ProviderChoice, *, openai_key: str | None = None, key_read: KeyRead | None = None
) -> ChatProvider | None:
    """The chat provider the settings name, or None. Raises ProviderError if it cannot be set
    up (no OpenAI key, no AWS region, an unknown provider name).

    `openai_key` is used instead of the keyring's key: the settings page tests a key the
    owner typed before it is saved. `key_read`: the keyring's key as read once for a build
    (see `KeyRead`); else it is read for this provider."""
    name = settings.chat_provider
    if not name:
        return None
    if name == "openai":
        from timothy.providers.openai_chat import OpenAIChat
        from timothy.providers.openai_client import KeyRead, api_key, is_official

        server = settings.openai
        read = key_read or KeyRead()
        if openai_key or is_official(server):
            return OpenAIChat(server, api_key=openai_key or api_key(server, read))
        # Another server's key (a local one needs none) is read with the first request.
        return OpenAIChat(server, read_key=read.then_afresh())
    if name == "bedrock":
        with importing():  # these import their SDK at the top
            from timothy.providers.bedrock_chat import BedrockChat

        return BedrockChat(settings.bedrock)
    raise ProviderError(
        ErrorKind.NOT_CONFIGURED,
        f"'{name}' is not a chat provider Timothy knows; choose {' or '.join(CHAT_PROVIDERS)}.",
    )


def embedding_provider(
    settings: ProviderChoice, *, openai_key: str | None = None, key_read: KeyRead | None = None
) -> EmbeddingProvider | None:
    """The embedding provider the settings name, or None (the vector leg is then off).
    `openai_key` and `key_read` as for `chat_provider`."""
    name = settings.embedding_provider
    if not name:
        return None
    if name == "local":
        return local_embedder()
    if name == "openai":
        from timothy.providers.openai_client import KeyRead, api_key, is_official
        from timothy.providers.openai_embeddings import OpenAIEmbeddings

        server = settings.openai
        read = key_read or KeyRead()
        if openai_key or is_official(server):
            return OpenAIEmbeddings(server, api_key=openai_key or api_key(server, read))
        return OpenAIEmbeddings(server, read_key=read.then_afresh())
    if name == "bedrock":
        with importing():  # these import their SDK at the top
            from timothy.providers.titan import TitanEmbeddings

        return TitanEmbeddings(settings.bedrock)
    raise ProviderError(
        ErrorKind.NOT_CONFIGURED,
        f"'{name}' is not an embedding provider Timothy knows; choose "
        f"{', '.join(EMBEDDING_PROVIDERS[:-1])} or {EMBEDDING_PROVIDERS[-1]}.",
    )


def choose_embedding(settings: C, choice: str) -> C:
    """Settings using the embedding model named by `choice`: a provider ("local", "openai",
    "bedrock") or provider/model[@dimension], as stored vectors are named, e.g.
    "bedrock/amazon.titan-embed-text-v2:0@512" or "openai/text-embedding-3-small"."""
    provider, _, rest = choice.strip().partition("/")
    model, dimension = rest, None
    head, at, tail = rest.rpartition("@")
    if at and tail.isdigit():
        model, dimension = head, int(tail)
    if provider not in EMBEDDING_PROVIDERS:
        raise InvalidInputError(
            f"{choice!r} names no embedding provider; use local, openai or bedrock, optionally "
            "followed by /MODEL (e.g. bedrock/amazon.titan-embed-text-v1)."
        )
    if provider == "local":
        return replace(settings, embedding_provider="local")
    if provider == "openai":
        section = settings.openai
        if model:
            section = replace(section, embedding_model=model, embedding_dimension=dimension)
        return replace(settings, embedding_provider="openai", openai=section)
    bedrock = settings.bedrock
    if model:
        bedrock = replace(bedrock, embedding_model=model)
    if dimension is not None:
        bedrock = replace(bedrock, embedding_dimension=dimension)
    return replace(settings, embedding_provider="bedrock", bedrock=bedrock)


def embedder_for_model(settings: ProviderChoice, model_name: str) -> EmbeddingProvider:
    """A provider that embeds like the stored model `model_name` (a `model_id`), using the
    settings for keys, servers and regions. Recall embeds its query with the *active* model,
    which during a switch is still the old one, not the configured one."""
    configured = settings.embedding_provider
    try:
        chosen = choose_embedding(settings, model_name)
    except InvalidInputError as exc:
        raise ProviderError(
            ErrorKind.NOT_CONFIGURED, f"Timothy cannot embed with the stored model {model_name!r}."
        ) from exc
    provider = embedding_provider(chosen)
    if provider is None or provider.model_id != model_name:
        raise ProviderError(
            ErrorKind.NOT_CONFIGURED,
            f"Timothy cannot embed with the stored model {model_name!r} "
            f"(the configured provider is {configured or 'none'}).",
        )
    return provider


def query_embedder(settings: ProviderChoice, active_model: str | None) -> EmbeddingProvider | None:
    """The provider for recall's query vector: the one matching the active stored model, or
    None (the vector leg is off) when there is none or it cannot be set up."""
    if active_model is None:
        return None
    try:
        return embedder_for_model(settings, active_model)
    except ProviderError as exc:
        log.warning("vector leg off: %s", exc.message)
        return None
