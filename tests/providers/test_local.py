"""The offline embedder: verified files, no network, the MiniLM recipe, safe across threads."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import REPO
from timothy import paths
from timothy.errors import ErrorKind, ProviderError
from timothy.providers.local import (
    DIMENSION,
    MAX_WORD_PIECES,
    MODEL_ID,
    LocalEmbedder,
    model_file,
    tokenizer_file,
)

MEMORIES = [
    "My birthday is on the 3rd of March",
    "I prefer aisle seats on long flights",
    "I am allergic to peanuts",
    "My sister Ana lives in Lisbon",
    "I work as a data engineer at a bank",
    "Our dog is called Biscuit",
    "I take my coffee black, no sugar",
]
QUERY = "On long-haul flights I like sitting by the aisle"

# Runs in a fresh interpreter where any attempt to use the network raises.
OFFLINE_SCRIPT = textwrap.dedent(
    """
    import json, socket, sys

    def refuse(*args, **kwargs):
        raise OSError("network access attempted")

    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.getaddrinfo = refuse
    socket.create_connection = refuse

    import numpy as np
    from timothy.providers.local import LocalEmbedder

    memories, query = json.loads(sys.stdin.read())
    embedder = LocalEmbedder()
    vectors = np.array(embedder.embed(memories))
    wanted = np.array(embedder.embed_query(query))
    scores = vectors @ wanted
    print(json.dumps({
        "ranking": [memories[i] for i in np.argsort(-scores)],
        "scores": sorted(scores.tolist(), reverse=True),
        "norms": np.linalg.norm(vectors, axis=1).tolist(),
        "dimension": len(wanted),
    }))
    """
)


def test_loads_offline_and_ranks_the_paraphrase_first() -> None:
    result = subprocess.run(
        [sys.executable, "-c", OFFLINE_SCRIPT],
        input=json.dumps([MEMORIES, QUERY]),
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found["ranking"][0] == "I prefer aisle seats on long flights"
    best, runner_up = found["scores"][:2]
    assert best > 0.6 and best - runner_up > 0.3  # not a near tie
    assert found["dimension"] == DIMENSION == 384
    assert np.allclose(found["norms"], 1.0, atol=1e-4)


def _copy(source: Path, target: Path, change: bytes = b"") -> Path:
    shutil.copyfile(source, target)
    if change:
        with target.open("ab") as handle:
            handle.write(change)
    return target


def test_a_damaged_tokenizer_is_refused(tmp_path: Path) -> None:
    damaged = _copy(tokenizer_file(), tmp_path / "tokenizer.json", b" ")
    embedder = LocalEmbedder(tokenizer_path=damaged)
    with pytest.raises(ProviderError) as refused:
        embedder.embed(["hello"])
    assert refused.value.kind is ErrorKind.NOT_CONFIGURED
    assert "tokenizer is damaged" in refused.value.message
    assert refused.value.detail and "expected be50c362" in refused.value.detail


def test_a_damaged_model_is_refused(tmp_path: Path) -> None:
    damaged = _copy(model_file(), tmp_path / "model.onnx", b"\0")
    with pytest.raises(ProviderError) as refused:
        LocalEmbedder(model_path=damaged).load()
    assert "model is damaged" in refused.value.message


def test_a_missing_model_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ProviderError) as refused:
        LocalEmbedder(model_path=tmp_path / "absent.onnx").load()
    assert "model is missing" in refused.value.message


def test_loads_lazily_once_even_when_many_threads_start_together(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="timothy.providers.local")
    embedder = LocalEmbedder()
    assert not embedder.loaded
    assert (embedder.model_id, embedder.dimension) == (MODEL_ID, 384)  # no load needed for these
    assert not embedder.loaded
    results: list[list[float]] = []
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def work() -> None:
        try:
            start.wait()
            results.append(embedder.embed_query("aisle seats on long flights"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors
    assert len(results) == 4
    assert all(np.allclose(results[0], other, atol=1e-6) for other in results)
    assert sum("local embedder loaded" in r.getMessage() for r in caplog.records) == 1


def test_text_beyond_256_word_pieces_does_not_count() -> None:
    embedder = LocalEmbedder()
    prefix = " ".join(f"word{i}" for i in range(400))  # far more than 256 pieces
    assert len(embedder._load().tokenizer.encode(prefix).ids) == MAX_WORD_PIECES
    a, b = embedder.embed([prefix + " about aisles", prefix + " about birthdays"])
    assert np.allclose(a, b, atol=1e-6)
    short_a, short_b = embedder.embed(["about aisles", "about birthdays"])
    assert not np.allclose(short_a, short_b, atol=1e-3)


def test_a_batch_gives_the_same_vectors_as_one_at_a_time() -> None:
    embedder = LocalEmbedder()
    texts = ["short", "a somewhat longer sentence about seats on aeroplanes", "", "  "]
    together = embedder.embed(texts)
    alone = [embedder.embed_query(text) for text in texts]
    assert np.allclose(together, alone, atol=1e-4)
    assert embedder.embed([]) == []


# The resident memory a fresh interpreter gains by loading the embedder and embedding a batch.
MEMORY_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from timothy.providers.local import LocalEmbedder

    def rss():
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    import onnxruntime, tokenizers  # their own code is not the model's weight
    before = rss()
    embedder = LocalEmbedder(lean=sys.argv[1] == "lean")
    embedder.embed(["a sentence about tea in the garden"] * 32)
    print(json.dumps(rss() - before))
    """
)


def test_the_lean_model_gives_the_shipped_models_vectors_within_a_tolerance() -> None:
    texts = [*MEMORIES, QUERY, "x", "Ünïcödé and emoji 🍣, then a long tail " * 30]
    shipped = LocalEmbedder(lean=False).embed_matrix(texts)
    lean = LocalEmbedder().embed_matrix(texts)
    assert np.abs(lean - shipped).max() < 2e-2
    assert (lean * shipped).sum(axis=1).min() > 0.999
    assert not np.array_equal(lean, shipped)  # the lean model did run
    # the same best two memories for the paraphrase query (the rest are near ties)
    query = len(MEMORIES)
    order = [np.argsort(-(m[: len(MEMORIES)] @ m[query])).tolist()[:2] for m in (shipped, lean)]
    assert order[0] == order[1]


def test_the_lean_model_is_made_once_and_remade_when_damaged() -> None:
    from timothy.providers.local import lean_model

    made = lean_model(model_file())
    assert made is not None and made.parent.parent == paths.cache_dir()
    stamp = made.stat().st_mtime_ns
    assert lean_model(model_file()) == made and made.stat().st_mtime_ns == stamp  # reused
    with made.open("r+b") as handle:  # one byte changed: its digest no longer matches
        handle.seek(1000)
        byte = handle.read(1)
        handle.seek(1000)
        handle.write(bytes([byte[0] ^ 0xFF]))
    remade = lean_model(model_file())
    assert remade == made
    assert lean_model(model_file()) == made
    embedder = LocalEmbedder()
    assert np.allclose(embedder.embed_matrix([QUERY]), LocalEmbedder().embed_matrix([QUERY]))


def test_the_lean_model_holds_far_less_memory() -> None:
    from timothy.providers.local import lean_model

    assert lean_model(model_file()) is not None  # made once beforehand, as after a first start
    grown = {}
    for kind in ("lean", "shipped"):
        result = subprocess.run(
            [sys.executable, "-c", MEMORY_SCRIPT, kind],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr
        grown[kind] = json.loads(result.stdout)
    # measured: about 49 MB against 108 MB (the load's and the batch's freed temporaries
    # are handed back after either: the shipped model's float copies are what stays)
    assert grown["lean"] < 0.6 * grown["shipped"], grown


def test_the_optimised_model_is_cached_and_gives_the_same_vectors() -> None:
    import onnxruntime

    from timothy.providers.local import lean_model, optimized_model

    texts = [*MEMORIES, QUERY]
    lean = lean_model(model_file())
    assert lean is not None
    cached, _ready = optimized_model(lean, onnxruntime.__version__)
    cached.unlink(missing_ok=True)
    first = LocalEmbedder().embed_matrix(texts)  # optimises the graph and keeps the result
    assert optimized_model(lean, onnxruntime.__version__) == (cached, True)
    stamp = cached.stat().st_mtime_ns
    again = LocalEmbedder().embed_matrix(texts)  # made from the kept file
    assert cached.stat().st_mtime_ns == stamp
    assert np.array_equal(first, again)
    with cached.open("r+b") as handle:  # damaged: its digest no longer matches
        handle.seek(1000)
        byte = handle.read(1)
        handle.seek(1000)
        handle.write(bytes([byte[0] ^ 0xFF]))
    assert optimized_model(lean, onnxruntime.__version__) == (cached, False)
    assert np.array_equal(LocalEmbedder().embed_matrix(texts), first)
    assert optimized_model(lean, onnxruntime.__version__) == (cached, True)  # made again


def test_digests_damaged_out_of_utf8_are_remade_like_wrong_ones() -> None:
    """The cache folder's digests are checked as text: bytes that are not UTF-8 failed the
    vector search and `timothy embed` ("unexpected error") on every run until removed."""
    import onnxruntime

    from timothy.providers.local import lean_model, optimized_model

    first = LocalEmbedder().embed_matrix([QUERY])  # the lean and the optimised model are made
    lean = lean_model(model_file())
    assert lean is not None
    cached, ready = optimized_model(lean, onnxruntime.__version__)
    assert ready
    for made in (lean, cached):
        made.with_name(made.name + ".sha256").write_bytes(b"\xff\xfe\x00 damaged")
    assert optimized_model(lean, onnxruntime.__version__) == (cached, False)
    assert lean_model(model_file()) == lean
    assert np.array_equal(LocalEmbedder().embed_matrix([QUERY]), first)
    assert optimized_model(lean, onnxruntime.__version__) == (cached, True)


BATCH_SCRIPT = textwrap.dedent(
    """
    import json
    from pathlib import Path
    from timothy.providers.local import LocalEmbedder

    def rss():
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    embedder = LocalEmbedder()
    embedder.load()
    texts = [f"sentence {n} about the garden and tea with my sister in Porto" for n in range(60)]
    before = rss()
    embedder.embed_matrix(texts)
    print(json.dumps(rss() - before))
    """
)


def test_a_batch_gives_its_activations_back() -> None:
    # 60 sentences in two batches: glibc kept ~20 MB of their freed activations for good.
    result = subprocess.run(
        [sys.executable, "-c", BATCH_SCRIPT],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    if sys.platform.startswith("linux"):
        assert json.loads(result.stdout) < 8, result.stdout  # MB still held after the batch
