"""Embeddings through OpenAI's /embeddings (or an OpenAI-compatible server's), batched.

OpenAI has no separate query path, so `embed_query` embeds like a document. A compatible
server's model of unknown size is asked once for its dimension.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from functools import partial

from timothy import tokens
from timothy.errors import ErrorKind, ProviderError
from timothy.providers.backoff import Backoff
from timothy.providers.openai_client import LazyClient, not_an_api, translate
from timothy.providers.sdk import importing
from timothy.providers.settings import OpenAISettings

log = logging.getLogger(__name__)

KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
BATCH_SIZE = 128  # inputs per request (OpenAI allows 2048, but smaller batches retry cheaper)
MAX_INPUT_TOKENS = 6000  # under the 8191 limit, with room for the tokenizers' differences


def clip(text: str, limit: int = MAX_INPUT_TOKENS) -> str:
    """The text cut to at most `limit` tokens (embedding models refuse longer inputs)."""
    cleaned = text.strip() or "."
    encoded = tokens.encoding().encode_ordinary(cleaned)
    if len(encoded) <= limit:
        return cleaned
    return tokens.encoding().decode(encoded[:limit])


class OpenAIEmbeddings:
    """EmbeddingProvider for OpenAI (`text-embedding-3-small`, 1536-d) and compatible servers."""

    def __init__(
        self,
        settings: OpenAISettings,
        *,
        api_key: str | None = None,
        read_key: Callable[[], str | None] | None = None,
        backoff: Backoff | None = None,
    ) -> None:
        """`read_key`: read the key with the first request instead (see `LazyClient`)."""
        self.settings = settings
        self.model = settings.embedding_model
        requested = settings.embedding_dimension
        # only the text-embedding-3 family can shorten its vectors on request
        self._shorten = (
            requested if requested and self.model.startswith("text-embedding-3") else None
        )
        self._dimension = self._shorten or KNOWN_DIMENSIONS.get(self.model)
        suffix = f"@{self._shorten}" if self._shorten else ""
        self._model_id = f"openai/{self.model}{suffix}"
        self._client = LazyClient(settings, api_key, read_key=read_key)
        self._backoff = backoff or Backoff(total_seconds=settings.retry_seconds)
        self._lock = threading.Lock()

    def prepare(self) -> None:
        """Make the SDK's client now (its key read, its HTTP client and TLS context built:
        tens of milliseconds holding the GIL) on the caller's worker, not in a turn's first
        request, where it would stall the window."""
        self._client.get()

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            with self._lock:
                if self._dimension is None:
                    self._dimension = len(self._request(["dimension check"])[0])
        return self._dimension

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), BATCH_SIZE):
            batch = [clip(text) for text in texts[start : start + BATCH_SIZE]]
            vectors.extend(self._backoff.call(partial(self._request, batch)))
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text])[0]

    def _request(self, batch: list[str]) -> list[list[float]]:
        with importing():
            import openai

        client = self._client.get()
        try:
            if self._shorten:
                response = client.embeddings.create(
                    model=self.model, input=batch, encoding_format="float", dimensions=self._shorten
                )
            else:
                response = client.embeddings.create(
                    model=self.model, input=batch, encoding_format="float"
                )
        except openai.OpenAIError as exc:
            raise translate(
                exc,
                self.settings,
                self.model,
                self._client.key,
                what="embeddings",
                key_unread=self._client.key_unread,
            ) from exc
        if isinstance(response, str):  # the SDK hands back a body that is not JSON as text
            raise translate(
                not_an_api(self.settings), self.settings, self.model, None, what="embeddings"
            )
        data = sorted(response.data, key=lambda item: item.index)
        vectors = [list(map(float, item.embedding)) for item in data]
        sizes = {len(vector) for vector in vectors}
        expected = self._dimension
        if len(vectors) != len(batch) or len(sizes) != 1 or (expected and sizes != {expected}):
            log.warning(
                "embeddings from %s: %d vectors of sizes %s for %d texts (expected %s)",
                self.model,
                len(vectors),
                sorted(sizes),
                len(batch),
                expected,
            )
            raise ProviderError(
                ErrorKind.UNKNOWN,
                f"The embedding server returned unusable vectors for the model '{self.model}'.",
            )
        return vectors
