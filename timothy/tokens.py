"""Token counting with tiktoken's o200k_base, loaded offline from the shipped encoding file.

Reading the shipped file (200k base64 lines, parsed in Python) took most of the encoding's
load: after the first load the ranks are kept in the cache folder as one marshal blob with its
sha256 in front, read back in a few milliseconds; a missing, damaged or foreign copy is
ignored and the shipped file read as before. The blob is the ranks' dict itself: marshal
rebuilds it in ~45 ms, against ~85 ms for a list of the pieces zipped into a dict, and the
load holds the GIL throughout, before the window shows (see app/launcher.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import marshal
import os
import shutil
import tempfile
import threading
from pathlib import Path

import tiktoken

from timothy import heap, paths
from timothy.errors import TimothyError

log = logging.getLogger(__name__)

ENCODING_NAME = "o200k_base"
ENCODING_FILENAME = "o200k_base.tiktoken"
# tiktoken caches a download under the sha1 of its URL and checks the file's sha256.
ENCODING_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
ENCODING_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
RANK_COUNT = 199_998  # o200k_base's mergeable tokens, ranked 0 .. RANK_COUNT - 1
# The compact copy of the ranks: named after the shipped file it was made from (".rankmap":
# the dict itself; the earlier ".ranks" copies held a list and are left unread).
RANKS_COPY = f"{ENCODING_NAME}-{ENCODING_SHA256[:16]}.rankmap"

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


def _copy_folders() -> list[Path]:
    return [paths.cache_dir() / "tokens", Path(tempfile.gettempdir()) / "timothy-tokens"]


def _read_ranks_copy() -> dict[bytes, int] | None:
    """The ranks from the compact copy, or None when there is no intact one."""
    for folder in _copy_folders():
        try:
            data = (folder / RANKS_COPY).read_bytes()
        except OSError:
            continue
        digest, blob = data[:32], data[32:]
        if hashlib.sha256(blob).digest() != digest:
            log.warning("the token encoding's cached copy in %s is damaged; not used", folder)
            continue
        try:
            ranks = marshal.loads(blob)
        except (EOFError, ValueError, TypeError):
            continue
        # The checksum says it is the blob this module wrote, from tiktoken's own reading;
        # tiktoken's constructor refuses a key that is not bytes or a rank that is not an int.
        if isinstance(ranks, dict) and len(ranks) == RANK_COUNT:
            return ranks
    return None


def _write_ranks_copy(ranks: dict[bytes, int]) -> None:
    """Keep the ranks as one blob for the next start; best effort (a start without it only
    reads the shipped file again)."""
    if len(ranks) != RANK_COUNT or sorted(ranks.values()) != list(range(RANK_COUNT)):
        return  # not the contiguous ranks of o200k_base
    blob = marshal.dumps(dict(ranks))
    for folder in _copy_folders():
        partial = folder / f"{RANKS_COPY}.{os.getpid()}.partial"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            partial.write_bytes(hashlib.sha256(blob).digest() + blob)
            os.replace(partial, folder / RANKS_COPY)
        except OSError:
            partial.unlink(missing_ok=True)
            continue
        _remove_stale_copies(folder)
        return


def _remove_stale_copies(folder: Path) -> None:
    """Remove the copies an earlier Timothy kept in `folder` (a list of pieces as `.ranks`,
    or made from another shipped file): nothing reads them again, and each is ~3 MB."""
    for pattern in (f"{ENCODING_NAME}-*.ranks", f"{ENCODING_NAME}-*.rankmap"):
        for stale in folder.glob(pattern):
            if stale.name != RANKS_COPY:
                # Another start removing it too, or a read-only file: harmless.
                with contextlib.suppress(OSError):
                    stale.unlink()


def _load() -> tiktoken.Encoding:
    from tiktoken_ext import openai_public

    ranks = _read_ranks_copy()
    if ranks is None:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(_prepare_cache())
        encoding = tiktoken.get_encoding(ENCODING_NAME)
        _write_ranks_copy(encoding._mergeable_ranks)
        return encoding
    # tiktoken's own definition of o200k_base (pattern, special tokens), given our ranks
    # instead of its reading of the file.
    reader = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda *_args, **_kwargs: ranks
    try:
        definition = openai_public.o200k_base()
    finally:
        openai_public.load_tiktoken_bpe = reader
    return tiktoken.Encoding(**definition)


def encoding() -> tiktoken.Encoding:
    """The o200k_base encoding, never fetched from the network."""
    global _encoding
    with _lock:
        if _encoding is None:
            _encoding = _load()
            # The Python copy of the 200k merge ranks (33 MB) is only kept for pickling the
            # encoding; the Rust core that encodes has its own. Every Timothy process holds
            # an encoding, so it lets the copy go.
            _encoding._mergeable_ranks = {}
            # The load's temporaries (the ranks read, their Python copy) are free now: their
            # pages go back to the system rather than stay under the heap (14 MB).
            heap.give_back()
        return _encoding


def count_tokens(text: str) -> int:
    """Tokens in `text` as the model counts them; special-token look-alikes count as text."""
    return len(encoding().encode(text, disallowed_special=()))
