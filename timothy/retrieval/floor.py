"""The relevance floor: each leg admits a hit only on real evidence, so recall can say nothing.

The article's rules rank; they never refuse. Every leg returns its best 30 whatever they are,
and the minimum score (0.005) sits below the fused score of rank 140, so "Hello there" used
to carry thirty memories to the model. Here each leg's hits are judged before fusion:

- vector: the query must be more similar to the memory than to every one of a fixed set of
  background sentences (timothy/retrieval/background.py) embedded with the same model. Both
  sides of the comparison are cosines of that one model, so the rule holds for any model
  and any similarity scale by construction: MiniLM's cosines spread over 0-0.8, Titan's and
  OpenAI's bunch up, and "above the background" means the same thing in each (it survives
  any increasing rescaling of similarity). It needs no store statistics, so it works for a
  store of three memories as for one of 100,000. An optional margin is counted in standard
  deviations of the query's background similarities (again scale-free); default 0.
- text: the query terms the memory contains must weigh enough: the sum of their weights,
  each the lower of the term's rarity in the store (BM25's idf, over the store plus
  `text_prior_memories` imagined memories without the term, so a word found in 1 of 5
  memories is not taken for rare) and its rarity in English (from its rank in a frequency-
  ordered English vocabulary, so "today" or "time" weigh little even in a store where one
  memory says them). Terms weighing less than `text_common_weight` count for nothing, so
  many common words do not add up to evidence: a query of common words matches nothing.
- entity: unchanged; a name the query spells out is evidence. So is it for the other legs:
  a vector or text hit below its floor still counts when its memory is about an entity the
  query names ("What did Caroline research?": the vector leg ranks Caroline's memories by
  what is asked, as before the floor).

Hits that miss their floor do not enter fusion; a memory whose every leg missed is listed
in `RecallResult.below_floor` with the reasons, and never packed.
"""

from __future__ import annotations

import atexit
import functools
import logging
import math
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeAlias

from timothy import paths
from timothy.lazy import lazy_module
from timothy.providers.base import EmbeddingProvider
from timothy.retrieval.background import BACKGROUND
from timothy.retrieval.settings import RecallSettings
from timothy.store.records import BelowFloorMemory, LegVerdict, Memory
from timothy.store.search import TextHits, index_forms
from timothy.store.vectors import Vector
from timothy.text import name_key, words

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    np = lazy_module("numpy")

log = logging.getLogger(__name__)

# English word families by commonness (index form -> rank), made at build time by
# tools/english_word_ranks.py from the frequency-ordered WordPiece vocabulary of BERT
# (uncased), which is shipped for the local embedder.
WORD_RANKS_FILE = "english-word-ranks.txt"

_EMPTY: Mapping[str, float] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class BelowFloor:
    """A memory some leg found that no leg admitted: shown, never packed."""

    memory: Memory
    floors: Mapping[str, LegVerdict]

    @property
    def reason(self) -> str:
        return "; ".join(f"{leg}: {verdict.why}" for leg, verdict in self.floors.items())

    def recalled(self) -> BelowFloorMemory:
        """As the record a turn keeps."""
        memory = self.memory
        return BelowFloorMemory(
            memory.id, memory.type, memory.content, memory.entities, self.floors
        )

    def to_json(self) -> dict[str, Any]:
        return self.recalled().to_json()


# -- vector --------------------------------------------------------------------------------


FloatMatrix: TypeAlias = "npt.NDArray[np.float64]"


@dataclass(frozen=True)
class Background:
    """The background sentences as one model embeds them (unit rows)."""

    model_id: str
    sentences: tuple[str, ...]
    vectors: FloatMatrix

    def measure(self, query: Vector) -> tuple[float, float, str]:
        """The query's best similarity to a background sentence, the spread (standard
        deviation) of its similarities to them all, and that best sentence."""
        unit = np.asarray(query, dtype=np.float64).reshape(-1)
        norm = float(np.linalg.norm(unit))
        if norm == 0 or not math.isfinite(norm) or unit.shape[0] != self.vectors.shape[1]:
            return math.inf, 0.0, ""
        scores = self.vectors @ (unit / norm)
        best = int(np.argmax(scores))
        return float(scores[best]), float(scores.std()), self.sentences[best]


_backgrounds: dict[str, Background] = {}
_embedding: set[str] = set()  # models whose background is being embedded off the turn's path
_backgrounds_lock = threading.Lock()
# Sentences per embedding request: small answers, so parsing one never holds the GIL long
# while a window is drawing.
BACKGROUND_BATCH = 8


def unit_matrix(vectors: Sequence[Sequence[float]]) -> FloatMatrix:
    rows = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    unit: FloatMatrix = rows / norms
    return unit


def embed_background(embedder: EmbeddingProvider) -> Background:
    """The background sentences embedded by `embedder`, kept for the process (per model).

    Embedded as memories are (`embed`, not `embed_query`): they stand in for memories that
    are about nothing of the owner's. Raises what the provider raises.
    """
    with _backgrounds_lock:
        found = _backgrounds.get(embedder.model_id)
    if found is not None:
        return found
    sentences = list(BACKGROUND)
    vectors: list[list[float]] = []
    for start in range(0, len(sentences), BACKGROUND_BATCH):
        vectors.extend(embedder.embed(sentences[start : start + BACKGROUND_BATCH]))
    made = Background(embedder.model_id, BACKGROUND, unit_matrix(vectors))
    with _backgrounds_lock:
        return _backgrounds.setdefault(embedder.model_id, made)


def background_for(embedder: EmbeddingProvider, *, wait: bool = True) -> Background | None:
    """The model's background: embedded now if need be (`wait`), or else None while it is
    embedded on a thread of its own (a chat turn does not wait for ~60 embeddings)."""
    if wait:
        return embed_background(embedder)
    with _backgrounds_lock:
        found = _backgrounds.get(embedder.model_id)
        if found is not None or embedder.model_id in _embedding:
            return found
        _embedding.add(embedder.model_id)

    def embed() -> None:
        try:
            embed_background(embedder)
        except Exception as exc:  # the next recall tries again
            log.warning("recall: the background sentences were not embedded: %s", exc)
        finally:
            with _backgrounds_lock:
                _embedding.discard(embedder.model_id)

    thread = threading.Thread(target=embed, name="recall-background", daemon=True)
    with _backgrounds_lock:
        _embedders.append(thread)
    thread.start()
    return None


_embedders: list[threading.Thread] = []
# At exit, a model still embedding the background (a native runtime such as onnxruntime
# mid-call) must finish before the interpreter tears its threads down, or the process
# aborts; a provider slower than this is left behind.
EXIT_WAIT_SECONDS = 5.0


def wait_for_background(seconds: float) -> None:
    """Wait up to `seconds` for the background sentences being embedded on threads of their
    own (`background_for(wait=False)`) to be embedded."""
    deadline = time.monotonic() + seconds
    with _backgrounds_lock:
        running = [thread for thread in _embedders if thread.is_alive()]
    for thread in running:
        thread.join(max(0.0, deadline - time.monotonic()))


@atexit.register
def _finish_background_embedding() -> None:
    wait_for_background(EXIT_WAIT_SECONDS)


def vector_verdicts(
    hits: Sequence[tuple[str, float]],
    query: Vector,
    background: Background | None,
    settings: RecallSettings,
    *,
    pending: bool = False,
) -> dict[str, LegVerdict]:
    """The vector leg's hits (id, similarity; best first), each judged against the best
    similarity of the query to a background sentence. Without a background (a query vector
    given with no provider to embed the sentences) the floor cannot be drawn and every hit
    passes, saying so; while the background is being embedded (`pending`), none does."""
    if not settings.relevance_floor:
        return {
            memory_id: LegVerdict("vector", rank, True, similarity, None, "floor off")
            for rank, (memory_id, similarity) in enumerate(hits, start=1)
        }
    if background is None and pending:
        why = "the background sentences are still being embedded: no similarity counts yet"
        return {
            memory_id: LegVerdict("vector", rank, False, similarity, None, why)
            for rank, (memory_id, similarity) in enumerate(hits, start=1)
        }
    if background is None:
        return {
            memory_id: LegVerdict(
                "vector", rank, True, similarity, None, "no background to compare: not floored"
            )
            for rank, (memory_id, similarity) in enumerate(hits, start=1)
        }
    best, spread, sentence = background.measure(query)
    floor = best + settings.vector_floor_margin * spread
    verdicts: dict[str, LegVerdict] = {}
    for rank, (memory_id, similarity) in enumerate(hits, start=1):
        cleared = similarity > floor
        reason = functools.partial(_vector_why, similarity, cleared, floor, best, sentence)
        verdicts[memory_id] = LegVerdict("vector", rank, cleared, similarity, floor, reason)
    return verdicts


def _vector_why(similarity: float, cleared: bool, floor: float, best: float, sentence: str) -> str:
    relation = "above" if cleared else "not above"
    return (
        f"similarity {similarity:.3f} {relation} {floor:.3f} (the query's {best:.3f} to "
        f"{sentence!r}, plus margin)"
    )


# -- text ----------------------------------------------------------------------------------


@functools.cache
def word_ranks() -> Mapping[str, int]:
    """English commonness by index form (as the full-text index stems a word): the best
    rank, from 0 ("the"), of the vocabulary's words of that form, so "checking" is as common
    as "check"; single characters rank -1 (no weight). Empty when the file cannot be read
    (then only the store's own idf weighs terms)."""
    path = paths.resources_dir() / WORD_RANKS_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        log.warning("recall: the English word ranks could not be read from %s: %s", path, exc)
        return MappingProxyType({})
    ranks: dict[str, int] = {}
    for line in text.splitlines():
        form, _, rank = line.partition("\t")
        if form and not form.startswith("#") and rank.lstrip("-").isdigit():
            ranks[form] = int(rank)
    return MappingProxyType(ranks)


# The words of greeting and small talk. The English ranks come from written text, where
# "hello" or "thanks" are rare; in a chat they are the commonest words there are, and a
# memory that happens to say one ("always says hello to the canteen staff") is no answer
# to "Hello!". They weigh nothing, like "the".
SMALL_TALK = (
    "hello", "hi", "hey", "hiya", "howdy", "greetings", "thanks", "thank", "thx", "cheers",
    "please", "pls", "ok", "okay", "bye", "goodbye", "sorry", "welcome", "yes", "yeah", "yep",
    "nope", "hmm", "lol", "cool", "awesome",
)  # fmt: skip


@functools.cache
def small_talk_forms() -> frozenset[str]:
    return frozenset(index_forms(list(SMALL_TALK)).values())


@functools.lru_cache(maxsize=4096)
def english_weight(term: str, scale: float) -> float:
    """How rare `term` is in English, on idf's scale: ln(1 + rank / scale) by the rank of
    its index form; a word outside the vocabulary counts as rare (infinite), a single
    character or a word of small talk as nothing."""
    form = index_forms([term]).get(term, term)
    if form in small_talk_forms():
        return 0.0
    rank = word_ranks().get(form)
    if rank is None:
        return math.inf
    if rank < 0:
        return 0.0
    return math.log1p(rank / scale)


def store_weight(documents: int, total: int, settings: RecallSettings) -> float:
    """BM25's idf of a term in `documents` of `total` memories, with the store taken to hold
    `text_prior_memories` more memories that lack the term."""
    size = total + settings.text_prior_memories
    documents = min(max(documents, 0), total)
    return math.log1p((size - documents + 0.5) / (documents + 0.5))


def term_weight(term: str, documents: int, total: int, settings: RecallSettings) -> float:
    """What a matched query term weighs: the lower of its two rarities."""
    english = english_weight(term, settings.common_word_rank_scale)
    return min(store_weight(documents, total, settings), english)


def evidence_of(terms: Mapping[str, float], settings: RecallSettings) -> float:
    """The evidence of matched terms (term -> weight): their sum, common words (weighing less
    than `text_common_weight`) left out, so many of them never add up to evidence."""
    return sum(weight for weight in terms.values() if weight >= settings.text_common_weight)


# "us" is left out: "to reach us", "tell us" speak of people in general as often as not.
FIRST_PERSON = frozenset(["i", "me", "my", "mine", "myself", "we", "our", "ours", "ourselves"])


def speaks_of_owner(query: str) -> bool:
    """Whether the message is in the first person ("what car do I drive?"): it asks about
    the owner, whose memory this is."""
    return any(word in FIRST_PERSON for word in words(query))


def text_verdicts(
    hits: TextHits, settings: RecallSettings, *, personal: bool = False
) -> dict[str, LegVerdict]:
    """The text leg's hits, each judged by the weight of the query terms it contains.

    The query shows it concerns the store when its best hit reaches `text_min_evidence`
    (`text_min_evidence_personal` for a message in the first person: one asking about the
    owner needs less to show that it concerns the owner's memory); then the other hits need
    only `text_tail_evidence` (the article's ranking orders them, as before the floor).
    When no hit reaches it, none passes.
    """
    needed = settings.text_min_evidence_personal if personal else settings.text_min_evidence
    weights = {
        term: term_weight(term, documents, hits.total, settings)
        for term, documents in hits.documents.items()
    }
    matched = {
        memory_id: {term: weights.get(term, 0.0) for term in hits.matched.get(memory_id, ())}
        for memory_id in hits.ids
    }
    evidence = {memory_id: evidence_of(terms, settings) for memory_id, terms in matched.items()}
    best = max(evidence.values(), default=0.0)
    relevant = best >= needed
    floor = min(settings.text_tail_evidence, needed) if relevant else None
    verdicts: dict[str, LegVerdict] = {}
    for rank, memory_id in enumerate(hits.ids, start=1):
        terms = matched[memory_id]
        # In the tail, common words count too: the query has shown what it is about.
        value = evidence[memory_id] if floor is None else sum(terms.values())
        why: str | Callable[[], str]
        if not settings.relevance_floor:
            cleared, why, shown = True, "floor off", None
        elif floor is None:
            shown = needed
            cleared = False
            why = functools.partial(_text_why, value, "<", shown, terms, None)
        elif value >= floor and value > 0:
            cleared, shown = True, floor
            reached = needed if floor < needed and value < needed else None
            why = functools.partial(_text_why, value, ">=", floor, terms, reached)
        else:
            cleared, shown = False, floor
            why = functools.partial(_text_why, value, "<", floor, terms, None)
        verdicts[memory_id] = LegVerdict("text", rank, cleared, value, shown, why, terms)
    return verdicts


def _text_why(
    value: float, relation: str, floor: float, terms: Mapping[str, float], reached: float | None
) -> str:
    listed = ", ".join(f"{term} {weight:.2f}" for term, weight in terms.items()) or "none"
    why = f"term evidence {value:.2f} {relation} {floor:g} ({listed})"
    if reached is not None:
        why += f"; the query's best match reached {reached:g}"
    return why


def second_opinion(
    text: Mapping[str, LegVerdict],
    vector: Mapping[str, LegVerdict] | None,
    settings: RecallSettings,
) -> dict[str, LegVerdict]:
    """Text passes that the vector leg contradicts need `text_min_evidence_unrelated`.

    When the vector leg ran with its floor and did not admit a memory, the model that reads
    the whole sentence finds it unrelated to the query; a word or two in common is then
    most likely a coincidence ("Convert 100 Fahrenheit to Celsius" and "convert the loft
    into an office"), and only strong term evidence stands. Without a vector leg (or with
    its floor undrawn) the text floor stands alone.
    """
    if vector is None or not settings.relevance_floor:
        return dict(text)
    if any(v.floor is None for v in vector.values()):  # no background: no opinion
        return dict(text)
    needed = settings.text_min_evidence_unrelated
    judged: dict[str, LegVerdict] = {}
    for memory_id, verdict in text.items():
        seen = vector.get(memory_id)
        if (
            verdict.cleared
            and verdict.value is not None
            and verdict.value < needed
            and (seen is None or not seen.cleared)
        ):
            why = functools.partial(_unrelated_why, verdict.value, needed)
            verdict = _rejudged(verdict, False, needed, why)
        judged[memory_id] = verdict
    return judged


def _unrelated_why(value: float, needed: float) -> str:
    return (
        f"term evidence {value:.2f} < {needed:g}, needed when the vector leg finds the "
        "memory unrelated"
    )


# -- entity --------------------------------------------------------------------------------


@functools.lru_cache(maxsize=8_192)
def _name_form(name: str) -> str:
    """name_key, kept: every leg's misses are checked against the query's names on
    every turn, and an owner's memories name the same few people and places."""
    return name_key(name)


def vouch_for_named(
    verdicts: Mapping[str, LegVerdict], memories: Mapping[str, Memory], names: Sequence[str]
) -> dict[str, LegVerdict]:
    """`verdicts` with the misses whose memory is about an entity the query names turned
    into passes: a literal name is evidence (the entity leg's rule) whichever leg found the
    memory, so the vector and text legs still rank "what is asked" among the memories of
    whom it is asked about, as they did before the floor."""
    named = {name_key(name) for name in names}
    if not named:
        return dict(verdicts)
    judged: dict[str, LegVerdict] = {}
    for memory_id, verdict in verdicts.items():
        memory = None if verdict.cleared else memories.get(memory_id)
        about = [] if memory is None else [e for e in memory.entities if _name_form(e) in named]
        if not about:
            judged[memory_id] = verdict
            continue
        judged[memory_id] = _rejudged(
            verdict, True, verdict.floor, functools.partial(_named_why, verdict, about[0])
        )
    return judged


def _rejudged(
    verdict: LegVerdict, cleared: bool, floor: float | None, reason: Callable[[], str]
) -> LegVerdict:
    """`verdict` judged again: `dataclasses.replace`'s result, made directly (half its
    cost, on ~20 verdicts a turn)."""
    return LegVerdict(
        verdict.leg, verdict.rank, cleared, verdict.value, floor, reason, verdict.terms
    )


def _named_why(verdict: LegVerdict, name: str) -> str:
    return f"{verdict.why}; but the query names {name}"


def entity_verdicts(ids: Sequence[str]) -> dict[str, LegVerdict]:
    """The entity leg's hits: a name the query spells out is evidence enough."""
    return {
        memory_id: LegVerdict("entity", rank, True, None, None, "the query names its entity")
        for rank, memory_id in enumerate(ids, start=1)
    }
