"""Token counting with tiktoken's o200k_base, loaded offline from the shipped encoding file."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
from pathlib import Path

import tiktoken

from timothy import paths
from timothy.errors import TimothyError

ENCODING_NAME = "o200k_base"
ENCODING_FILENAME = "o200k_base.tiktoken"
# tiktoken caches a download under the sha1 of its URL and checks the file's sha256.
ENCODING_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
ENCODING_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"

_lock = threading.Lock()
_encoding: tiktoken.Encoding | None = None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _prepare_cache() -> Path:
    """A tiktoken cache folder that holds the encoding under the name tiktoken looks for."""
    source = paths.resources_dir() / ENCODING_FILENAME
    if not source.is_file():
        raise TimothyError(f"The token encoding file is missing: {source}")
    cache_name = hashlib.sha1(ENCODING_URL.encode()).hexdigest()
    for folder in (
        paths.cache_dir() / "tiktoken",
        Path(tempfile.gettempdir()) / "timothy-tiktoken",
    ):
        target = folder / cache_name
        try:
            if (
                target.is_file()
                and target.stat().st_size == source.stat().st_size
                and _sha256(target) == ENCODING_SHA256
            ):
                return folder
            folder.mkdir(parents=True, exist_ok=True)
            if _sha256(source) != ENCODING_SHA256:
                raise TimothyError(f"The token encoding file is damaged: {source}")
            partial = folder / f"{cache_name}.{os.getpid()}.partial"
            shutil.copyfile(source, partial)
            os.replace(partial, target)
            return folder
        except OSError:
            continue
    raise TimothyError("No writable cache folder for the token encoding.")


def encoding() -> tiktoken.Encoding:
    """The o200k_base encoding, never fetched from the network."""
    global _encoding
    with _lock:
        if _encoding is None:
            os.environ["TIKTOKEN_CACHE_DIR"] = str(_prepare_cache())
            _encoding = tiktoken.get_encoding(ENCODING_NAME)
            # The Python copy of the 200k merge ranks (33 MB) is only kept for pickling the
            # encoding; the Rust core that encodes has its own. Every Timothy process holds
            # an encoding, so it lets the copy go.
            _encoding._mergeable_ranks = {}
        return _encoding


def count_tokens(text: str) -> int:
    """Tokens in `text` as the model counts them; special-token look-alikes count as text."""
    return len(encoding().encode(text, disallowed_special=()))
