"""The chat models a server offers: `GET /v1/models` on OpenAI or an OpenAI-compatible server
(Ollama, LM Studio, llama.cpp), so the owner picks one of the server's own names instead of
typing it. One bounded request; call it off any UI thread.
"""

from __future__ import annotations

import dataclasses

from timothy.errors import ErrorKind, ProviderError
from timothy.providers.openai_client import (
    UNREADABLE_REPLY,
    api_key,
    is_official,
    make_client,
    not_an_api,
    server_label,
    translate,
)
from timothy.providers.sdk import importing
from timothy.providers.settings import OpenAISettings

LIST_TIMEOUT_SECONDS = 10.0
# OpenAI's own list holds every model the account may use; these are not for chatting.
_NOT_CHAT = (
    "embedding",
    "tts",
    "whisper",
    "dall-e",
    "moderation",
    "transcribe",
    "audio",
    "realtime",
    "image",
    "davinci",
    "babbage",
    "search",
)


def list_chat_models(
    settings: OpenAISettings, key: str | None = None, *, read_keyring: bool = True
) -> list[str]:
    """The ids the server lists, in its order, without embedding models (OpenAI's own:
    chat models only, sorted).

    `key`: a key typed but not saved yet; else the saved one (see `api_key`). Without
    `read_keyring`, `key` is the one a provider read already (None: none), and the keyring
    is not read again. Raises ProviderError with a plain sentence when the server cannot be
    asked or lists nothing.
    """
    if read_keyring:
        key = key or api_key(settings)
    bounded = dataclasses.replace(
        settings, timeout_seconds=min(settings.timeout_seconds, LIST_TIMEOUT_SECONDS)
    )
    client = make_client(bounded, key)
    with importing():
        import openai  # imported with the client: the SDK is slow to import

    try:
        ids = [str(model.id) for model in client.models.list()]
    except openai.NotFoundError as exc:
        translate(exc, bounded, "", key, what="model list")  # logs the detail
        fixed = _with_v1(bounded, key)
        if fixed is not None:
            raise ProviderError(
                ErrorKind.NOT_CONFIGURED,
                f"The server's API is at {fixed}: add /v1 to the server address.",
            ) from exc
        raise ProviderError(
            ErrorKind.NOT_CONFIGURED,
            f"{server_label(settings)} does not list its models; type the model's name.",
        ) from exc
    except UNREADABLE_REPLY as exc:
        translate(exc, bounded, "", key, what="model list")  # logs the detail
        raise not_an_api(settings, "a reply that is not JSON") from exc
    except Exception as exc:
        raise translate(exc, bounded, "", key, what="model list") from exc
    unique = [i for i in dict.fromkeys(ids) if "embed" not in i.lower()]  # cannot chat
    if is_official(settings):
        unique = sorted(i for i in unique if not any(word in i for word in _NOT_CHAT))
    return unique


def _with_v1(settings: OpenAISettings, key: str | None) -> str | None:
    """The address with /v1 added, when the server answers its model list there: Ollama's
    own address (http://127.0.0.1:11434) is what an owner types first, and its OpenAI API
    is under /v1. None when the address has /v1 already or the server does not answer."""
    if not settings.base_url or settings.base_url.rstrip("/").endswith("/v1"):
        return None
    fixed = settings.base_url.rstrip("/") + "/v1"
    try:
        make_client(dataclasses.replace(settings, base_url=fixed), key).models.list()
    except Exception:
        return None
    return fixed
