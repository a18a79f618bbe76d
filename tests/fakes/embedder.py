"""A deterministic embedder for tests: each word hashed to a few dimensions, unit length.

It implements the EmbeddingProvider protocol so the vector leg runs for real (sqlite-vec
tables, the in-memory copy, cosine ranking); texts that share words get similar vectors.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence

import numpy as np

from timothy.text import words


class HashingEmbedder:
    def __init__(self, dimension: int = 64, model_id: str = "test/hashing-64") -> None:
        self.model_id = model_id
        self.dimension = dimension
        self.queries: list[str] = []
        self.release: threading.Event | None = None  # when set: embed_query waits for it
        self.error: Exception | None = None  # when set: embed_query raises it

    def _vector(self, text: str) -> list[float]:
        vector = np.zeros(self.dimension, dtype=np.float64)
        for word in words(text):
            digest = hashlib.sha256(word.encode()).digest()
            for i in range(3):
                vector[digest[i] % self.dimension] += 1.0 if digest[i + 3] % 2 else -1.0
        norm = np.linalg.norm(vector)
        if norm == 0:
            vector[0] = 1.0
            norm = 1.0
        return (vector / norm).tolist()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        if self.error is not None:
            raise self.error
        if self.release is not None:
            self.release.wait()
        return self._vector(text)
