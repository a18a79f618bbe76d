"""The app's running assistant: the chat engine and the embedding queue, built from the
owner's settings and rebuilt whenever they change.

Building reads the keyring and may ask an embedding server its dimension, so it runs on a
worker; the result is swapped in on the GUI thread. The engine's background work
(extraction, titles, compaction) reports from its own threads; those events are re-emitted
as signals, which Qt delivers on the GUI thread.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from app.conversations.store_conversations import NO_CHAT_MODEL, StoreConversations
from app.jobs.workers import Failure, Workers
from timothy.chat.engine import ChatEngine
from timothy.chat.events import BackgroundEvent, FactsProposed, SessionCompacted, TitleChanged
from timothy.errors import ProviderError, TimothyError
from timothy.memory.embedding import EmbeddingQueue, model_for
from timothy.providers.base import ChatProvider, EmbeddingProvider
from timothy.providers.factory import chat_provider, embedding_provider, query_embedder
from timothy.providers.local import LocalEmbedder
from timothy.settings import Settings
from timothy.store import Store
from timothy.tokens import encoding

log = logging.getLogger(__name__)

QUEUE_STOP_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class EmbeddingState:
    """Where vector search stands: which model it searches, which one is configured, and how
    many memories the configured one still lacks."""

    configured: str | None  # the configured provider's model id; None: no provider
    active: str | None  # the model the vector leg searches now
    missing: int = 0  # active and staged memories without a vector for `configured`
    problem: str | None = None  # why the configured provider cannot be used

    @property
    def switching(self) -> bool:
        return self.configured is not None and self.active != self.configured


@dataclass(frozen=True, slots=True)
class Setup:
    """What one build produced, for the window to show."""

    settings: Settings
    chat: ChatProvider | None
    chat_problem: str | None  # a provider is chosen but cannot be set up: why
    embedder: EmbeddingProvider | None
    embedding: EmbeddingState


def embedding_state(
    store: Store, embedder: EmbeddingProvider | None, problem: str | None = None
) -> EmbeddingState:
    """Blocking (store reads; may ask a server its dimension once): call from a worker."""
    active = store.vectors.active_model()
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


def build(store: Store, settings: Settings) -> tuple[ChatEngine, Setup]:
    """The chat engine and the embedding provider the settings name (runs on a worker)."""
    chat: ChatProvider | None = None
    chat_problem: str | None = None
    try:
        chat = chat_provider(settings)
    except ProviderError as exc:
        log.warning("chat provider %s unusable: %s", settings.chat_provider, exc.message)
        chat_problem = exc.message
    embedder: EmbeddingProvider | None = None
    embedding_problem: str | None = None
    try:
        embedder = embedding_provider(settings)
    except ProviderError as exc:
        log.warning("embedding provider %s unusable: %s", settings.embedding_provider, exc.message)
        embedding_problem = exc.message
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
    engine = ChatEngine(store, chat=chat, embedder=query, settings=settings)
    # The token encoding's first load holds the GIL for ~0.1 s in one call (tiktoken builds
    # its tables): do it now, while the window is still loading, not during the first turn.
    encoding()
    engine.recaller.prepare()
    if isinstance(query, LocalEmbedder) and not query.loaded:
        try:
            query.load()  # now, not during the first turn's recall
        except ProviderError as exc:
            log.warning("the local embedder did not load: %s", exc.message)
    return engine, Setup(settings, chat, chat_problem, embedder, state)


class Assistant(QObject):
    configured = Signal(object)  # Setup: a build finished and is in use
    embedding_changed = Signal(object)  # EmbeddingState, after a refresh
    facts_proposed = Signal(object)  # FactsProposed: extraction staged facts
    title_changed = Signal(object)  # TitleChanged: a conversation got its title
    session_compacted = Signal(object)  # SessionCompacted: older turns were summarised
    failed = Signal(str)

    def __init__(
        self,
        store: Store,
        conversations: StoreConversations,
        workers: Workers,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.store = store
        self.conversations = conversations
        self.workers = workers
        self.engine: ChatEngine | None = None
        self.setup: Setup | None = None
        self.queue: EmbeddingQueue | None = None
        # Engines replaced while a turn may still be streaming on them: closed at the end.
        self._retired: list[ChatEngine] = []
        self._generation = 0
        self._closed = False

    @property
    def chat(self) -> ChatProvider | None:
        return self.setup.chat if self.setup is not None else None

    @property
    def embedder(self) -> EmbeddingProvider | None:
        return self.setup.embedder if self.setup is not None else None

    def engines(self) -> list[ChatEngine]:
        """The engine in use and those it replaced (their last turns may still be running)."""
        return [*self._retired, *([self.engine] if self.engine is not None else [])]

    # -- building ----------------------------------------------------------------------

    def configure(self, settings: Settings) -> None:
        """Build for `settings` on a worker; the newest request wins."""
        self._generation += 1
        generation = self._generation
        store = self.store
        self.workers.run(
            self,
            lambda: build(store, settings),
            "setting up the chat model",
            on_success=lambda built: self._built(generation, built),
            on_failure=self._build_failed,
        )

    def _built(self, generation: int, built: tuple[ChatEngine, Setup]) -> None:
        engine, setup = built
        if generation != self._generation or self._closed:
            self._retire(engine)
            return
        if self.engine is not None:
            self._retire(self.engine)
        engine.background_listeners.append(self._heard)
        self.engine = engine
        self.setup = setup
        unavailable = setup.chat_problem or NO_CHAT_MODEL
        self.conversations.set_engine(engine, unavailable)
        self._restart_queue(setup.embedder)
        self.configured.emit(setup)

    def _build_failed(self, failure: Failure) -> None:
        self.failed.emit(failure.message)

    def _retire(self, engine: ChatEngine) -> None:
        # Not closed yet: a turn may still stream on it, and its last turn's extraction
        # still reports through the listener. Closed at quit.
        self._retired.append(engine)

    def _restart_queue(self, embedder: EmbeddingProvider | None) -> None:
        old, self.queue = self.queue, None
        if old is not None:
            # Stopping finishes what is queued, which may wait on the network.
            self.workers.run(self, lambda: old.stop(QUEUE_STOP_SECONDS), "stopping embeddings")
        if embedder is not None:
            self.queue = EmbeddingQueue(self.store, embedder).start()

    def refresh_embedding(self) -> None:
        """Re-read where vector search stands (after a backfill, or memories changed)."""
        if self.setup is None:
            return
        embedder = self.setup.embedder
        problem = self.setup.embedding.problem
        store = self.store
        self.workers.run(
            self,
            lambda: embedding_state(store, embedder, problem),
            "checking vector search",
            on_success=self._embedding_refreshed,
        )

    def _embedding_refreshed(self, state: EmbeddingState) -> None:
        setup = self.setup
        if setup is None:
            return
        if state.active != setup.embedding.active and self.engine is not None:
            # The vector leg moved to another model: recall's query must be embedded with it.
            self.engine.recaller.embedder = (
                setup.embedder
                if setup.embedder is not None and setup.embedder.model_id == state.active
                else None
            )
        self.setup = Setup(setup.settings, setup.chat, setup.chat_problem, setup.embedder, state)
        self.embedding_changed.emit(state)

    # -- background events -------------------------------------------------------------

    def _heard(self, event: BackgroundEvent) -> None:
        """Called on the engine's threads: only emits (Qt queues it to the GUI thread)."""
        if isinstance(event, FactsProposed):
            self.facts_proposed.emit(event)
        elif isinstance(event, TitleChanged):
            self.title_changed.emit(event)
        elif isinstance(event, SessionCompacted):
            self.session_compacted.emit(event)

    # -- closing -----------------------------------------------------------------------

    def close(self) -> None:
        """At quit: stop embedding and the engines' background work (nothing waits long)."""
        self._closed = True
        if self.queue is not None:
            self.queue.stop(QUEUE_STOP_SECONDS)
            self.queue = None
        engines = self.engines()
        self._retired.clear()
        self.engine = None
        self.conversations.set_engine(None)
        for engine in engines:
            # Extraction still running on its thread must not report to a closed window.
            if self._heard in engine.background_listeners:
                engine.background_listeners.remove(self._heard)
            engine.close()
            engine.recaller.close()
