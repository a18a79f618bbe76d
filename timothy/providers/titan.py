"""Embeddings through Amazon Titan Text Embeddings on Bedrock (InvokeModel), v2 and v1.

v2 (`amazon.titan-embed-text-v2:0`) makes 1024, 512 or 256 numbers and is asked to normalise
them; v1 (`amazon.titan-embed-text-v1`) makes 1536 and takes nothing but the text. Titan
embeds one text per call, so a batch runs a few calls side by side.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from timothy.errors import ErrorKind, ProviderError
from timothy.providers.backoff import Backoff
from timothy.providers.bedrock_client import make_client, region_of, translate
from timothy.providers.settings import BedrockSettings

log = logging.getLogger(__name__)

TITAN_V2 = "amazon.titan-embed-text-v2:0"
TITAN_V1 = "amazon.titan-embed-text-v1"
V2_DIMENSIONS = (1024, 512, 256)
V1_DIMENSION = 1536
MAX_CHARS = 40_000  # Titan takes up to 8k tokens / 50k characters per text
PARALLEL_CALLS = 4


def is_v2(model: str) -> bool:
    return "titan-embed-text-v2" in model


def is_titan(model: str) -> bool:
    return "titan-embed-text-v1" in model or is_v2(model) or "titan-embed-g1-text" in model


class TitanEmbeddings:
    """EmbeddingProvider for Titan Text Embeddings v2 (default, 1024-d) and v1 (1536-d)."""

    def __init__(self, settings: BedrockSettings, *, backoff: Backoff | None = None) -> None:
        self.settings = settings
        self.model = settings.embedding_model
        if not is_titan(self.model):
            raise ProviderError(
                ErrorKind.NOT_CONFIGURED,
                f"Timothy embeds on Bedrock with Titan Text Embeddings ({TITAN_V2} or "
                f"{TITAN_V1}), not '{self.model}'.",
            )
        if is_v2(self.model):
            if settings.embedding_dimension not in V2_DIMENSIONS:
                raise ProviderError(
                    ErrorKind.NOT_CONFIGURED,
                    f"Titan v2 makes vectors of 1024, 512 or 256 numbers, not "
                    f"{settings.embedding_dimension}.",
                )
            self._dimension = settings.embedding_dimension
            self._model_id = f"bedrock/{self.model}@{self._dimension}"
        else:
            self._dimension = V1_DIMENSION
            self._model_id = f"bedrock/{self.model}"
        self._client = make_client(settings)
        self.region = region_of(self._client)
        self._backoff = backoff or Backoff(total_seconds=settings.retry_seconds)

    @property
    def model_id(self) -> str:
        return self._model_id

    @property
    def dimension(self) -> int:
        return self._dimension

    def body(self, text: str) -> dict[str, Any]:
        """The InvokeModel request body for one text."""
        clipped = (text.strip() or ".")[:MAX_CHARS]
        if is_v2(self.model):
            return {"inputText": clipped, "dimensions": self._dimension, "normalize": True}
        return {"inputText": clipped}

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if len(texts) <= 1:
            return [self._embed_one(text) for text in texts]
        with ThreadPoolExecutor(max_workers=PARALLEL_CALLS) as pool:
            return list(pool.map(self._embed_one, texts))

    def embed_query(self, text: str) -> list[float]:
        return self._embed_one(text)

    def _embed_one(self, text: str) -> list[float]:
        return self._backoff.call(lambda: self._invoke(text))

    def _invoke(self, text: str) -> list[float]:
        try:
            response = self._client.invoke_model(
                modelId=self.model,
                body=json.dumps(self.body(text)),
                contentType="application/json",
                accept="application/json",
            )
            answer = json.loads(response["body"].read())
        except Exception as exc:
            raise translate(exc, model=self.model, region=self.region, what="embeddings") from exc
        vector = answer.get("embedding") if isinstance(answer, dict) else None
        if not isinstance(vector, list) or len(vector) != self._dimension:
            log.warning(
                "Titan %s answered %r instead of a %d-number vector",
                self.model,
                type(vector).__name__,
                self._dimension,
            )
            raise ProviderError(
                ErrorKind.UNKNOWN, f"Bedrock returned an unusable vector from '{self.model}'."
            )
        return [float(x) for x in vector]
