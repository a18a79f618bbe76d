"""Checking the configured providers: one small real request each, timed, or the plain error.

Used by `timothy providers test`, `timothy doctor` and the app's settings page. A provider
that is not configured is reported as such and is not a failure (and needs no network).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any, Literal

from timothy.errors import ProviderError
from timothy.providers.base import ChatMessage, SystemBlock
from timothy.providers.factory import chat_provider, embedding_provider
from timothy.providers.local import LocalEmbedder
from timothy.providers.settings import ProviderChoice

CHECK_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class ProviderCheck:
    role: Literal["chat", "embedding"]
    provider: str | None  # None: not configured
    model: str | None
    ok: bool
    latency_ms: float | None
    message: str  # "ok", the plain error, or why nothing was checked

    @property
    def configured(self) -> bool:
        return self.provider is not None

    def detail(self) -> str:
        """What was checked and how it went, without the role."""
        if not self.configured:
            return self.message
        what = f"{self.provider} {self.model}" if self.role == "chat" else f"{self.model}"
        if self.ok:
            return f"{what}: ok, {self.latency_ms:.0f} ms{self.message}"
        return f"{what}: {self.message}"

    def line(self) -> str:
        """One line for `timothy providers test`."""
        if self.configured and not self.ok:
            return f"{self.role:<10} FAIL {self.detail()}"
        return f"{self.role:<10} {self.detail()}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def check_chat(settings: ProviderChoice, *, openai_key: str | None = None) -> ProviderCheck:
    """One small completion; `openai_key` tests a key not yet saved (see `chat_provider`)."""
    name = settings.chat_provider
    if not name:
        return ProviderCheck("chat", None, None, True, None, "not configured")
    model = {"openai": settings.openai.chat_model, "bedrock": settings.bedrock.chat_model}.get(
        name, "?"
    )
    try:
        provider = chat_provider(settings, openai_key=openai_key)
        assert provider is not None
        started = time.perf_counter()
        provider.complete(
            [SystemBlock("You are checking a connection. Answer in one word.")],
            [ChatMessage("user", "Reply with the word: ok")],
            max_tokens=16,
            timeout=CHECK_TIMEOUT,
        )
        elapsed = (time.perf_counter() - started) * 1000
    except ProviderError as exc:
        return ProviderCheck("chat", name, model, False, None, exc.message)
    return ProviderCheck("chat", name, provider.model, True, elapsed, "")


def check_embedding(settings: ProviderChoice, *, openai_key: str | None = None) -> ProviderCheck:
    name = settings.embedding_provider
    if not name:
        return ProviderCheck(
            "embedding", None, None, True, None, "not configured (the vector leg is off)"
        )
    model = {
        "openai": f"openai/{settings.openai.embedding_model}",
        "bedrock": f"bedrock/{settings.bedrock.embedding_model}",
    }.get(name, name)
    try:
        provider = embedding_provider(settings, openai_key=openai_key)
        assert provider is not None
        model = provider.model_id
        note = ""
        if isinstance(provider, LocalEmbedder) and not provider.loaded:
            started = time.perf_counter()
            provider.load()
            note = f" (model loaded in {(time.perf_counter() - started) * 1000:.0f} ms)"
        started = time.perf_counter()
        vector = provider.embed_query("Which seat do I prefer on long flights?")
        elapsed = (time.perf_counter() - started) * 1000
        if len(vector) != provider.dimension:
            return ProviderCheck(
                "embedding",
                name,
                model,
                False,
                None,
                f"the vector has {len(vector)} numbers, not {provider.dimension}",
            )
    except ProviderError as exc:
        return ProviderCheck("embedding", name, model, False, None, exc.message)
    return ProviderCheck(
        "embedding", name, f"{model} ({provider.dimension}-d)", True, elapsed, note
    )


def check_providers(settings: ProviderChoice) -> list[ProviderCheck]:
    return [check_chat(settings), check_embedding(settings)]
