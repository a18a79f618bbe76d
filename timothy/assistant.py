"""The one place the core is assembled from the owner's settings: providers, the chat engine
and where vector search stands. The app (on a worker, at start and after every settings
change) and `timothy chat` both build through `build`, so the two cannot drift.

Building reads the keyring and may ask an embedding server its dimension: it blocks.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from timothy.chat.engine import ChatEngine
from timothy.errors import ProviderError, StoreUnreachableError, TimothyError, causes
from timothy.memory.embedding import model_for
from timothy.providers.base import ChatProvider, EmbeddingProvider
from timothy.providers.factory import chat_provider, embedding_provider, query_embedder
from timothy.providers.local import LocalEmbedder
from timothy.providers.openai_chat import OpenAIChat
from timothy.providers.openai_client import KeyRead
from timothy.providers.openai_embeddings import OpenAIEmbeddings
from timothy.retrieval.floor import background_for, wait_for_background
from timothy.secrets import KeyringUnavailableError
from timothy.settings import Settings
from timothy.store.engine import StoreEngine
from timothy.tokens import encoding

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class EmbeddingState:
    """Where vector search stands: which model it searches, which one is configured, and how
    many memories the configured one still lacks."""

    configured: str | None  # the configured provider's model id; None: no provider
    active: str | None  # the model the vector leg searches now
    missing: int = 0  # active memories without a vector for `configured`
    problem: str | None = None  # why the configured provider cannot be used

    @property
    def switching(self) -> bool:
        return self.configured is not None and self.active != self.configured


SERVER_AWAY_PROBLEM = "the memory server is out of reach"
SERVER_REFUSED_PROBLEM = "the memory server refused this computer's login ({why})"
BACKGROUND_WAIT_SECONDS = 30.0  # at start, for the floor's background sentences


@dataclass(frozen=True, slots=True)
class Setup:
    """What one build produced, for a front end to show."""

    settings: Settings
    chat: ChatProvider | None
    chat_problem: str | None  # a provider is chosen but cannot be set up: why
    embedder: EmbeddingProvider | None
    embedding: EmbeddingState
    # What could not be set up only because the OS keyring was locked or not answering
    # ("chat", "embeddings"): the same settings build again once it is unlocked (the app
    # offers that, and tries by itself).
    locked_out: frozenset[str] = frozenset()

    @property
    def keyring_locked(self) -> bool:
        return bool(self.locked_out)


def embedding_state(
    store: StoreEngine, embedder: EmbeddingProvider | None, problem: str | None = None
) -> EmbeddingState:
    """Blocking (store reads; may ask a server its dimension once). A memory server out of
    reach leaves vector search off until it answers (the chat itself goes on)."""
    try:
        active = store.vectors.active_model()
    except StoreUnreachableError as exc:
        log.warning("vector search waits for the memory server: %s", exc)
        if embedder is None:
            return EmbeddingState(None, None, 0, problem)
        refused = store.refused
        away = (
            SERVER_AWAY_PROBLEM if refused is None else SERVER_REFUSED_PROBLEM.format(why=refused)
        )
        return EmbeddingState(None, None, 0, away)
    active_name = active.name if active is not None else None
    if embedder is None:
        return EmbeddingState(None, active_name, 0, problem)
    try:
        model = model_for(store, embedder)
        missing = len(store.vectors.missing(model))
    except TimothyError as exc:
        log.warning("embedding model %s unusable: %s", embedder.model_id, exc)
        return EmbeddingState(None, active_name, 0, str(exc))
    return EmbeddingState(model.name, active_name, missing, None)


def uses_memories(settings: Settings, chat: ChatProvider | None) -> bool:
    """The owner's per-provider switch "use my memories with this provider"."""
    if chat is None:
        return False
    if chat.name == "bedrock":
        return settings.bedrock.use_memories
    return settings.openai.use_memories


def engine_for(
    store: StoreEngine,
    settings: Settings,
    chat: ChatProvider | None,
    query: EmbeddingProvider | None,
) -> ChatEngine:
    """A chat engine with each part given its own section of `settings`."""
    return ChatEngine(
        store,
        chat=chat,
        embedder=query,
        recall_settings=settings.recall,
        chat_settings=settings.chat,
        policy=settings.memory,
        use_memories=uses_memories(settings, chat),
    )


def warm_embedder(query: EmbeddingProvider | None) -> None:
    """Load the local model now, not during the first turn's recall, and embed the vector
    floor's background sentences (free with it; a cloud model embeds them at its first
    turn). Blocking until both are done: the model's runs take every core, and whatever
    start-up loads next (Python holding the GIL) would be preempted by them while the
    window's thread waits for that GIL. A turn's recall meanwhile does not wait for the
    background. A model that does not load is logged, and the turn that needs it says so."""
    if not isinstance(query, LocalEmbedder):
        return
    try:
        if not query.loaded:
            query.load()
        background_for(query, wait=False)
        wait_for_background(BACKGROUND_WAIT_SECONDS)
    except ProviderError as exc:
        log.warning("the local embedder did not load: %s", exc.message)


def build(
    store: StoreEngine, settings: Settings, *, warm: bool = True, load_embedder: bool = True
) -> tuple[ChatEngine, Setup]:
    """The chat engine and the embedding provider the settings name.

    A chat provider that cannot be set up is reported in `Setup.chat_problem`, not raised:
    the window still opens and says why. `warm` loads the token encoding, the in-memory
    vectors and (with `load_embedder`; else call `warm_embedder` later) the local embedder
    now, so the first turn does not pay for them."""
    chat: ChatProvider | None = None
    chat_problem: str | None = None
    locked_out: set[str] = set()
    key_read = KeyRead()  # the chat model and the embeddings share one read of the keyring
    try:
        chat = chat_provider(settings, key_read=key_read)
    except ProviderError as exc:
        log.warning("chat provider %s unusable: %s", settings.chat_provider, exc.message)
        chat_problem = exc.message
        if _keyring_unreadable(exc):
            locked_out.add("chat")
    embedder: EmbeddingProvider | None = None
    embedding_problem: str | None = None
    try:
        embedder = embedding_provider(settings, key_read=key_read)
    except ProviderError as exc:
        log.warning("embedding provider %s unusable: %s", settings.embedding_provider, exc.message)
        embedding_problem = exc.message
        if _keyring_unreadable(exc):
            locked_out.add("embeddings")
    state = embedding_state(store, embedder, embedding_problem)
    if state.configured is None:
        embedder = None
    # Recall embeds its query with the model the vector leg searches: during a switch that
    # is still the old one; before any model is active, the configured one (it becomes
    # active as soon as its vectors exist).
    if state.active is None or (embedder is not None and state.active == embedder.model_id):
        query = embedder
    else:
        query = query_embedder(settings, state.active)
    engine = engine_for(store, settings, chat, query)
    if warm:
        # The token encoding's first load holds the GIL for ~0.1 s in one call (tiktoken
        # builds its tables): do it now, not during the first turn.
        encoding()
        engine.recaller.prepare()
        for provider in (chat, query):
            if isinstance(provider, OpenAIChat | OpenAIEmbeddings):
                try:
                    provider.prepare()  # the SDK's client: not made in the first turn
                except ProviderError as exc:
                    log.warning("the provider's client was not made: %s", exc.message)
        if load_embedder:
            warm_embedder(query)
    return engine, Setup(settings, chat, chat_problem, embedder, state, frozenset(locked_out))


def _keyring_unreadable(exc: ProviderError) -> bool:
    """Whether a provider failed only because the keyring could not be read (locked, its
    service not answering): not a wrong setting, so building again later may succeed."""
    return any(isinstance(cause, KeyringUnavailableError) for cause in causes(exc))
