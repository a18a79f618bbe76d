"""The providers' sections of the owner's settings, and the view of them the factory reads.

`timothy.settings` composes these with the other sections into one file; the providers only
ever see `ProviderChoice`, so nothing here reaches back up to the composer.
"""

from __future__ import annotations

from dataclasses import Field, dataclass
from typing import Any, ClassVar, Protocol


@dataclass(frozen=True, slots=True)
class OpenAISettings:
    """OpenAI, or any OpenAI-compatible server (Ollama, LM Studio, llama.cpp) via base_url."""

    base_url: str | None = None
    chat_model: str = "gpt-4o-mini"
    embedding_model: str = "text-embedding-3-small"
    embedding_dimension: int | None = None  # text-embedding-3 models can shorten their vectors
    use_memories: bool = True  # send recalled memories and run extraction with this provider
    timeout_seconds: float = 60.0  # connect is capped at 10 s; read = the longest silence
    retry_seconds: float = 30.0  # the most time spent retrying a throttled request


@dataclass(frozen=True, slots=True)
class BedrockSettings:
    """Amazon Bedrock: credentials from the standard AWS chain, optionally a named profile."""

    region: str | None = None
    profile: str | None = None
    chat_model: str = "us.amazon.nova-lite-v1:0"
    embedding_model: str = "amazon.titan-embed-text-v2:0"
    embedding_dimension: int = 1024
    use_memories: bool = True
    timeout_seconds: float = 60.0  # connect is capped at 10 s; read = the longest silence
    retry_seconds: float = 30.0  # the most time spent retrying a throttled request
    endpoint_url: str | None = None  # a VPC endpoint or proxy; None: the region's own


class ProviderChoice(Protocol):
    """What the factory needs to know: which providers are chosen, and their sections.

    The composed `timothy.settings.Settings` is one; being a dataclass, the factory can hand
    back a changed copy of it (`choose_embedding`)."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def chat_provider(self) -> str | None: ...

    @property
    def embedding_provider(self) -> str | None: ...

    @property
    def openai(self) -> OpenAISettings: ...

    @property
    def bedrock(self) -> BedrockSettings: ...
